// Package servicetest is test support for engines that implement the
// sandbox's service contract: Run, the contract suite every registration
// runs (reset, snapshot and restore, export and import, reopening without
// a close, typed state); an in-memory Bucket with the store's transaction
// semantics and fault injection, so an engine's tests can prove it
// acknowledges nothing it could not persist without a bbolt file; and an
// in-memory Log.
package servicetest

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/pyric/pyric/sandbox/service"
)

// ErrInjected is the error of an Update failed by FailNextUpdate.
var ErrInjected = errors.New("servicetest: injected bucket failure")

// ErrReadOnly is a write inside View.
var ErrReadOnly = errors.New("servicetest: write in a read-only transaction")

// Bucket is a service.Bucket in memory. Like the sandbox's bbolt bucket,
// an Update whose function fails changes nothing, keys iterate in byte
// order, and values are copied in; it is safe for concurrent use (one
// transaction at a time).
type Bucket struct {
	mu       sync.Mutex
	data     map[string][]byte
	failNext bool
	updates  int
}

// NewBucket returns an empty Bucket.
func NewBucket() *Bucket { return &Bucket{data: map[string][]byte{}} }

// FailNextUpdate makes the next Update fail with ErrInjected without
// running its function, as a full disk or a closed store would.
func (b *Bucket) FailNextUpdate() {
	b.mu.Lock()
	b.failNext = true
	b.mu.Unlock()
}

// Updates is the number of Updates committed so far.
func (b *Bucket) Updates() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.updates
}

// Len is the number of keys held.
func (b *Bucket) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.data)
}

// Update runs fn in a read-write transaction, committed when fn returns
// nil and rolled back otherwise.
func (b *Bucket) Update(fn func(service.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failNext {
		b.failNext = false
		return ErrInjected
	}
	// Writes go to the live map with an undo log (cheaper than a copy
	// per transaction for large buckets), replayed if fn fails.
	tx := &tx{data: b.data, undo: map[string]*[]byte{}}
	if err := fn(tx); err != nil {
		for k, old := range tx.undo {
			if old == nil {
				delete(b.data, k)
			} else {
				b.data[k] = *old
			}
		}
		return err
	}
	b.updates++
	return nil
}

// View runs fn in a read-only transaction.
func (b *Bucket) View(fn func(service.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fn(&tx{data: b.data, ro: true})
}

type tx struct {
	data map[string][]byte
	ro   bool
	undo map[string]*[]byte // first value of each changed key; nil: absent
}

func (t *tx) remember(k string) {
	if _, seen := t.undo[k]; seen {
		return
	}
	if v, ok := t.data[k]; ok {
		t.undo[k] = &v
	} else {
		t.undo[k] = nil
	}
}

func (t *tx) Get(k []byte) []byte { return t.data[string(k)] }

func (t *tx) Put(k, v []byte) error {
	if t.ro {
		return ErrReadOnly
	}
	t.remember(string(k))
	t.data[string(k)] = bytes.Clone(v)
	return nil
}

func (t *tx) Delete(k []byte) error {
	if t.ro {
		return ErrReadOnly
	}
	t.remember(string(k))
	delete(t.data, string(k))
	return nil
}

func (t *tx) keys(prefix []byte) []string {
	var ks []string
	for k := range t.data {
		if strings.HasPrefix(k, string(prefix)) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

func (t *tx) ForEach(prefix []byte, fn func(k, v []byte) error) error {
	for _, k := range t.keys(prefix) {
		if err := fn([]byte(k), t.data[k]); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) DeletePrefix(prefix []byte) error {
	if t.ro {
		return ErrReadOnly
	}
	for _, k := range t.keys(prefix) {
		t.remember(k)
		delete(t.data, k)
	}
	return nil
}
