package firestore

import (
	"hash/maphash"
	"sync"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsstore"
)

// formCache remembers the JSON forms (json.go) of the documents the
// latest commits of a database left, by document identity, so that the
// events of the next read or write of one find the form its commit's
// events made instead of encoding it again: the form of the document a
// get read was most of what its request event cost in the engine. A
// stored document is never changed in place, so a form made of it stays
// its form; forms are shared read-only, as the events of one commit
// already share them (encodeMemo).
//
// It is direct-mapped by path and keeps only small documents, so it holds
// at most formCacheSlots of them (a couple of megabytes at the worst).
type formCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	slots *[formCacheSlots]formSlot // made on first use
}

type formSlot struct {
	d    *pb.Document
	form map[string]any
}

const (
	formCacheSlots = 1024
	// maxCachedFormBytes bounds the documents kept, by DocHeapSize.
	maxCachedFormBytes = 1024
)

func newFormCache() *formCache { return &formCache{seed: maphash.MakeSeed()} }

// put records form as the form of d, stored at rel, when d is small.
func (c *formCache) put(rel string, d *pb.Document, form map[string]any) {
	if d == nil || form == nil || fsstore.DocHeapSize(d) > maxCachedFormBytes {
		return
	}
	i := maphash.String(c.seed, rel) % formCacheSlots
	c.mu.Lock()
	if c.slots == nil {
		c.slots = new([formCacheSlots]formSlot)
	}
	c.slots[i] = formSlot{d, form}
	c.mu.Unlock()
}

// get is the form put for d at rel, nil if none is kept.
func (c *formCache) get(rel string, d *pb.Document) map[string]any {
	if d == nil {
		return nil
	}
	i := maphash.String(c.seed, rel) % formCacheSlots
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots == nil || c.slots[i].d != d {
		return nil
	}
	return c.slots[i].form
}
