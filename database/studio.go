package database

import "github.com/pyric/pyric/sandbox/service"

// StudioPages puts the Realtime Database in the Studio's navigation (service.Studio).
func (*Database) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/database", Label: "Realtime Database", Page: "database", Key: "d"}}
}
