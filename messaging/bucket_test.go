package messaging

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/pyric/pyric/sandbox/service"
)

// memBucket is a service.Bucket in memory with real transaction semantics
// (an Update that fails changes nothing), standing in for the sandbox's
// bbolt bucket. failNext makes the next Update fail, to prove the engine
// changes nothing it could not persist.
type memBucket struct {
	mu       sync.Mutex
	data     map[string][]byte
	failNext bool
	updates  int
}

func newMemBucket() *memBucket { return &memBucket{data: map[string][]byte{}} }

var errInjected = errors.New("injected bucket failure")

func (b *memBucket) Update(fn func(service.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failNext {
		b.failNext = false
		return errInjected
	}
	// Writes go to the live map with an undo log, so a failed fn leaves
	// the bucket as it was.
	tx := &memTx{data: b.data, undo: map[string]*[]byte{}}
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

func (b *memBucket) View(fn func(service.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fn(&memTx{data: b.data, ro: true})
}

type memTx struct {
	data map[string][]byte
	ro   bool
	undo map[string]*[]byte // first value of each changed key; nil: absent
}

func (t *memTx) remember(k string) {
	if _, seen := t.undo[k]; seen {
		return
	}
	if v, ok := t.data[k]; ok {
		t.undo[k] = &v
	} else {
		t.undo[k] = nil
	}
}

func (t *memTx) Get(k []byte) []byte { return t.data[string(k)] }
func (t *memTx) Put(k, v []byte) error {
	if t.ro {
		return errors.New("read-only")
	}
	t.remember(string(k))
	t.data[string(k)] = bytes.Clone(v)
	return nil
}
func (t *memTx) Delete(k []byte) error {
	if t.ro {
		return errors.New("read-only")
	}
	t.remember(string(k))
	delete(t.data, string(k))
	return nil
}
func (t *memTx) ForEach(prefix []byte, fn func(k, v []byte) error) error {
	var keys []string
	for k := range t.data {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn([]byte(k), t.data[k]); err != nil {
			return err
		}
	}
	return nil
}
func (t *memTx) DeletePrefix(prefix []byte) error {
	if t.ro {
		return errors.New("read-only")
	}
	for k := range t.data {
		if strings.HasPrefix(k, string(prefix)) {
			t.remember(k)
			delete(t.data, k)
		}
	}
	return nil
}
