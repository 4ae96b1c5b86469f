package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox/service"
)

// The sandbox runs only the services it is given; these tests give it
// Firestore, the service whose log the store's write-ahead log was first
// written for.

// openFS opens a sandbox with Firestore first among its services.
func openFS(opts Options) (*Sandbox, error) { return openFSWith(opts, firestore.Options{}) }

// openFSWith is openFS with Firestore's options.
func openFSWith(opts Options, fo firestore.Options) (*Sandbox, error) {
	for _, r := range opts.Services {
		if r.Name == firestore.ServiceName {
			return Open(opts)
		}
	}
	opts.Services = append([]service.Registration{firestore.Registration(fo)}, opts.Services...)
	return Open(opts)
}

// fsOf is the sandbox's Firestore service.
func fsOf(sb *Sandbox) *firestore.Service {
	fs, _ := Lookup[*firestore.Service](sb)
	return fs
}

// parseSnapshot decodes a snapshot's Firestore documents per database
// (project names the default database's project), as loading it would.
func parseSnapshot(data []byte, project string) (map[firestore.DatabaseName][]*pb.Document, error) {
	states, err := decodeSnapshot(data)
	if err != nil {
		return nil, err
	}
	st, ok := states[firestore.ServiceName]
	if !ok {
		return map[firestore.DatabaseName][]*pb.Document{}, nil
	}
	var s firestore.State
	dec := json.NewDecoder(bytes.NewReader(st))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	return firestore.StateDocuments(project, &s)
}
