package goclient

import (
	fsengine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// fsOf is sb's Firestore service (nil when it runs none).
func fsOf(sb *sandbox.Sandbox) *fsengine.Service {
	fs, _ := sandbox.Lookup[*fsengine.Service](sb)
	return fs
}

// withFirestore adds Firestore to opts' services when they lack it: the
// sandbox runs only the services it is given.
func withFirestore(opts sandbox.Options) sandbox.Options {
	for _, r := range opts.Services {
		if r.Name == fsengine.ServiceName {
			return opts
		}
	}
	opts.Services = append([]service.Registration{fsengine.Registration(fsengine.Options{})}, opts.Services...)
	return opts
}
