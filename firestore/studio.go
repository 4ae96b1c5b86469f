package firestore

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Firestore in the Studio's navigation (service.Studio).
func (*Service) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/firestore", Label: "Firestore", Page: "firestore", Key: "f"}}
}

var _ service.Studio = (*Service)(nil)
