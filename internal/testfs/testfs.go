// Package testfs gives tests a sandbox's Firestore: the sandbox runs only
// the services it is given, so a test that wants Firestore adds its
// registration (With) and finds the running service by type (Of).
package testfs

import (
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// Of is sb's Firestore service, nil when it runs none.
func Of(sb *sandbox.Sandbox) *firestore.Service {
	fs, _ := sandbox.Lookup[*firestore.Service](sb)
	return fs
}

// With returns opts with Firestore first among its services, unless they
// already hold it.
func With(opts sandbox.Options) sandbox.Options {
	for _, r := range opts.Services {
		if r.Name == firestore.ServiceName {
			return opts
		}
	}
	opts.Services = append([]service.Registration{firestore.Registration(firestore.Options{})}, opts.Services...)
	return opts
}
