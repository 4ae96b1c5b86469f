package ai

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts AI Logic in the Studio's navigation (service.Studio).
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/ai", Label: "AI Logic", Page: "ai", Key: "i"}}
}
