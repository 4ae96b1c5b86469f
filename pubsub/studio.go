package pubsub

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts Pub/Sub in the Studio's navigation (service.Studio).
func (*Engine) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/pubsub", Label: "Pub/Sub", Page: "pubsub", Key: "p"}}
}
