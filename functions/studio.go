package functions

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Functions in the Studio's navigation (service.Studio).
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/functions", Label: "Functions", Page: "functions", Key: "n"}}
}
