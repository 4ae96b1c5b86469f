package auth

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Auth in the Studio's navigation (service.Studio).
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/auth", Label: "Auth", Page: "auth", Key: "a"}}
}
