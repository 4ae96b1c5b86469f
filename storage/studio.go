package storage

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Storage in the Studio's navigation (service.Studio).
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/storage", Label: "Storage", Page: "storage", Key: "s"}}
}
