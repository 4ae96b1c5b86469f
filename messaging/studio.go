package messaging

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Messaging in the Studio's navigation (service.Studio).
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/messaging", Label: "Messaging", Page: "messaging", Key: "m"}}
}
