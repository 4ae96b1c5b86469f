package service

// StudioPage is one page a service has in the Studio: its route, its
// name in the navigation, and the UI's view that draws it.
type StudioPage struct {
	// Path is the page's route in the Studio ("/database"); a path below
	// it ("/database/x") opens the same page.
	Path string `json:"path"`
	// Label names the page in the navigation and on Home ("Realtime
	// Database").
	Label string `json:"label"`
	// Page names the UI's view that draws the page ("database"); empty
	// draws the generic one, the service's Snapshot as a tree, so a
	// service gets a page before it gets a view of its own.
	Page string `json:"page"`
	// Key is the key that opens the page after "g" ("d"); empty: none.
	Key string `json:"key,omitempty"`
}

// Studio is implemented by a service that has pages in the Studio. The
// Studio's route table is built from the running services implementing
// it, in the sandbox's order, so a new service's page appears in the
// navigation with no change to the Studio.
type Studio interface {
	StudioPages() []StudioPage
}
