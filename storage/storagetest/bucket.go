// Package storagetest holds what the storage engine's and server's tests
// share: a service.Bucket on a bbolt file of the test's and an event
// recorder.
package storagetest

import (
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// Bolt is a service.Bucket in one bbolt file.
type Bolt struct {
	db *bolt.DB
	service.Bucket
}

// OpenBolt opens (creating) a bbolt file as a service Bucket: the
// sandbox's own bucket (sandbox.NewBoltBucket) on a file of the test's.
func OpenBolt(path string) (*Bolt, error) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return nil, err
	}
	return &Bolt{db: db, Bucket: sandbox.NewBoltBucket(db, "storage")}, nil
}

// Close closes the file.
func (b *Bolt) Close() error { return b.db.Close() }

// Recorder is an event.Emitter keeping every event.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
}

// Emit implements event.Emitter.
func (r *Recorder) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of what was emitted.
func (r *Recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}
