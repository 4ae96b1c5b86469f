package hosting

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Hosting in the Studio's navigation (service.Studio).
// Hosting is no sandbox service: pyric serve hands its engine to the
// Studio (studio.Options.Beside) when it serves sites.
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/hosting", Label: "Hosting", Page: "hosting"}}
}
