// Package storagetest holds what the storage engine's and server's tests
// share: a bbolt-backed service.Bucket (until the sandbox offers one) and an
// event recorder.
package storagetest

import (
	"bytes"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Bolt is a service.Bucket in one bbolt file.
type Bolt struct {
	db *bolt.DB
}

var bucketName = []byte("storage")

// OpenBolt opens (creating) a bbolt file as a service Bucket.
func OpenBolt(path string) (*Bolt, error) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return nil, err
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	}); err != nil {
		db.Close()
		return nil, err
	}
	return &Bolt{db: db}, nil
}

// Close closes the file.
func (b *Bolt) Close() error { return b.db.Close() }

// Update implements service.Bucket.
func (b *Bolt) Update(fn func(service.Tx) error) error {
	return b.db.Update(func(tx *bolt.Tx) error { return fn(boltTx{tx.Bucket(bucketName)}) })
}

// View implements service.Bucket.
func (b *Bolt) View(fn func(service.Tx) error) error {
	return b.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx.Bucket(bucketName)}) })
}

type boltTx struct{ b *bolt.Bucket }

func (t boltTx) Get(k []byte) []byte   { return t.b.Get(k) }
func (t boltTx) Put(k, v []byte) error { return t.b.Put(k, v) }
func (t boltTx) Delete(k []byte) error { return t.b.Delete(k) }
func (t boltTx) ForEach(prefix []byte, fn func(k, v []byte) error) error {
	c := t.b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}
func (t boltTx) DeletePrefix(prefix []byte) error {
	var keys [][]byte
	c := t.b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := t.b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

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
