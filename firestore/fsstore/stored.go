package fsstore

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/internal/prefault"
)

// StoredDocument is a document as a Persister stored it: its path relative
// to the database and its protobuf encoding (the pb.Document of a Change,
// marshaled).
type StoredDocument struct {
	Path string
	Data []byte
}

// StoredDocumentError reports a stored document that cannot be restored:
// its encoding is damaged or it is not the document its path names.
type StoredDocumentError struct {
	Path    string
	Problem string
}

func (e *StoredDocumentError) Error() string {
	return fmt.Sprintf("the stored document %s %s", e.Path, e.Problem)
}

// Checked is a batch of stored documents CheckStored accepted, ready for
// Store.RestoreStored: the check made each document's entry, with its one
// version holding its encoding (copied without its name), which the
// restore completes with the restore time. A Checked is restored once.
type Checked struct {
	name fsvalue.DatabaseName
	// entries[i] is the i-th document's, its version list lists[i] =
	// vs[i:i+1], its version vs[i] encoded as encs[i]: one allocation
	// each instead of three per document.
	entries []Entry
	lists   [][]version
	vs      []version
	encs    []encodedDoc
	// untimed lists, ascending, the documents lacking their create or
	// update time: the restore decodes them and gives them its time.
	untimed []int
	// runs are the batch's documents as runs of one collection, in order.
	runs   []collRun
	latest time.Time
	// sorted: the paths ascend strictly (as a store lists its keys), so
	// no two documents share one.
	sorted   bool
	restored bool
}

// collRun is the documents from, to (excluded) of a batch, all in
// collection coll.
type collRun struct {
	coll     string
	from, to int
}

// parallelCheck is the batch size from which CheckStored and
// RestoreStored split their work between two goroutines.
const parallelCheck = 4096

// CheckStored checks n stored documents of database name, doc(i) being
// the i-th, without decoding them: each encoding's wire structure,
// strings, nesting and name, so that decoding it later cannot fail. A
// damaged document is a *StoredDocumentError (the first of the batch when
// several are). It copies each encoding it checked, without its name,
// into blocks the Checked owns, and makes the document's entry beside
// it: doc's Data need only be valid during the call (a store's mapped
// file), and each is read once. A big batch is checked in two halves at
// once.
func CheckStored(name fsvalue.DatabaseName, n int, doc func(i int) StoredDocument) (*Checked, error) {
	prefix := name.Documents() + "/"
	c := &Checked{name: name, entries: make([]Entry, n), lists: make([][]version, n), vs: make([]version, n),
		encs: make([]encodedDoc, n)}
	prefault.Slice(c.entries)
	prefault.Slice(c.lists)
	prefault.Slice(c.vs)
	prefault.Slice(c.encs)
	type part struct {
		latest  time.Time
		sorted  bool
		untimed []int
		runs    []collRun
		err     error
	}
	check := func(from, to int) (p part) {
		p.sorted = true
		var slab encodingSlab
		prev := ""
		if from > 0 {
			prev = doc(from - 1).Path
		}
		run := collRun{from: from}
		for i := from; i < to; i++ {
			d := doc(i)
			ut, err := checkStored(d.Data, prefix, d.Path)
			if err != nil {
				p.err = &StoredDocumentError{Path: d.Path, Problem: err.Error()}
				return p
			}
			if ut.After(p.latest) {
				p.latest = ut
			}
			if ut.IsZero() {
				p.untimed = append(p.untimed, i)
			}
			c.encs[i].raw = slab.keep(d.Data)
			c.vs[i].enc = &c.encs[i]
			c.lists[i] = c.vs[i : i+1 : i+1]
			e := &c.entries[i]
			e.path = d.Path
			e.vs.Store(&c.lists[i])
			if i > 0 && prev >= d.Path {
				p.sorted = false
			}
			prev = d.Path
			// Stores list documents in key order, so consecutive
			// documents mostly share their collection.
			if coll := fsvalue.CollectionOf(d.Path); coll != run.coll || i == from {
				if i > from {
					run.to = i
					p.runs = append(p.runs, run)
				}
				run = collRun{coll: coll, from: i}
			}
		}
		if to > from {
			run.to = to
			p.runs = append(p.runs, run)
		}
		return p
	}
	var parts []part
	if n < parallelCheck {
		parts = []part{check(0, n)}
	} else {
		half := n / 2
		second := make(chan part, 1)
		go func() { second <- check(half, n) }()
		parts = []part{check(0, half), <-second}
	}
	c.sorted = true
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
		if p.latest.After(c.latest) {
			c.latest = p.latest
		}
		c.sorted = c.sorted && p.sorted
		c.untimed = append(c.untimed, p.untimed...)
		c.runs = append(c.runs, p.runs...)
	}
	return c, nil
}

// RestoreStored loads checked stored documents (of this store's database)
// as Restore does, without decoding them: each encoding is kept and
// decoded on its first read, so opening a store of 100k documents costs a
// walk over their bytes, not 100k decodes and their garbage. The store
// keeps the Checked's entries and encodings. It takes the lock itself,
// publishes the store as all changed and returns the restore time.
// Documents checked for another database, or restored already, are an
// ErrInternal.
func (s *Store) RestoreStored(c *Checked) (time.Time, error) {
	if c.name != s.opts.Name {
		return time.Time{}, fsvalue.Errorf(fsvalue.ErrInternal, "Stored documents checked for %s cannot be restored into %s.", c.name, s.opts.Name)
	}
	s.Lock()
	defer s.Unlock()
	if c.restored {
		return time.Time{}, fsvalue.Errorf(fsvalue.ErrInternal, "Stored documents checked for %s are restored already.", c.name)
	}
	c.restored = true
	t := s.NextTime()
	if c.latest.After(t) {
		t = c.latest
	}
	s.last = t
	entries := c.entries
	// complete gives the versions from, to the restore time and the
	// store's cache of decoded documents.
	at := t.UnixNano()
	complete := func(from, to int) {
		for i := from; i < to; i++ {
			c.vs[i].at = at
			c.encs[i].cache = &s.cache
		}
	}
	if len(s.docs) == 0 && c.sorted && len(entries) >= parallelCheck {
		// Every path is new and appears once: the path map is made and
		// filled beside the collection maps (two maps of every document,
		// independent of each other; making one is mostly its memory's
		// page faults).
		filled := make(chan struct{})
		go func() {
			defer close(filled)
			m := make(map[string]*Entry, len(entries))
			for i := range entries {
				m[entries[i].path] = &entries[i]
			}
			s.docs = m
			complete(0, len(entries))
		}()
		s.presize(c.runs)
		for _, r := range c.runs {
			m := s.collection(r.coll, 0)
			for i := r.from; i < r.to; i++ {
				m[entries[i].path] = &entries[i]
			}
		}
		<-filled
		for _, i := range c.untimed {
			c.vs[i] = version{at: at, doc: withTimes(c.encs[i].raw, s.cache.prefix+entries[i].path, t)}
		}
	} else {
		complete(0, len(entries))
		for _, i := range c.untimed {
			c.vs[i] = version{at: at, doc: withTimes(c.encs[i].raw, s.cache.prefix+entries[i].path, t)}
		}
		if len(s.docs) == 0 {
			s.docs = make(map[string]*Entry, len(entries))
		}
		s.presize(c.runs)
		for _, r := range c.runs {
			m := s.collection(r.coll, 0)
			for i := r.from; i < r.to; i++ {
				path := entries[i].path
				if d, ok := s.docs[path]; ok {
					s.superseded(d, t)
					d.setVersions(append(d.versions(), c.vs[i]))
					continue
				}
				s.docs[path] = &entries[i]
				m[path] = &entries[i]
			}
		}
	}
	s.trimHistory(t)
	s.publish(t)
	if s.since.Before(t) {
		s.since = t
	}
	s.announce(t, nil, true)
	return t, nil
}

// presize creates the collection maps that runs of restored documents go
// into at their final sizes, so that filling them does not grow them
// step by step; callers hold the lock.
func (s *Store) presize(runs []collRun) {
	sizes := map[string]int{}
	for _, r := range runs {
		sizes[r.coll] += r.to - r.from
	}
	for c, n := range sizes {
		s.collection(c, n)
	}
}

// withTimes decodes a stored document (named name, its encoding kept
// without its name) lacking its create or update time and gives it t for
// the missing ones.
func withTimes(raw []byte, name string, t time.Time) *pb.Document {
	d := &pb.Document{}
	_ = proto.Unmarshal(raw, d) // checkStored accepted raw
	if d.Name == "" {
		d.Name = name
	}
	if d.CreateTime == nil {
		d.CreateTime = ts(t)
	}
	if d.UpdateTime == nil {
		d.UpdateTime = ts(t)
	}
	return d
}

// encodedDoc is a document kept in its encoding (restored from a store,
// or committed durably), with its decoded form while that is in the
// database's cache of decoded documents. A committed document's encoding
// is kept without its name (the database's prefix and the entry's path
// give it back when decoded): for small documents the name is most of the
// encoding. A durable commit's document is
// decoded only until the flusher sets raw (under the lock, before it enters
// the cache); its decoded form is never dropped before. Concurrent reads
// that miss the cache may both decode; one result wins, and they are
// equal.
type encodedDoc struct {
	raw   []byte
	doc   atomic.Pointer[pb.Document]
	cache *docCache
}

// decode returns the document at rel. checkStored accepted raw (or the
// engine encoded it), so the decode does not fail; if it ever did, the
// document reads as its name alone.
func (x *encodedDoc) decode(rel string) *pb.Document {
	if d := x.doc.Load(); d != nil {
		return d
	}
	d := x.unmarshal(rel)
	if !x.doc.CompareAndSwap(nil, d) {
		if won := x.doc.Load(); won != nil {
			return won
		}
		return d
	}
	if x.cache != nil {
		x.cache.add(x, d)
	}
	return d
}

// decodeOnce is decode for a reader that reads the document once (a
// scan): the decoded form it makes is the caller's alone, not kept nor
// entered into the cache.
func (x *encodedDoc) decodeOnce(rel string) *pb.Document {
	if d := x.doc.Load(); d != nil {
		return d
	}
	return x.unmarshal(rel)
}

// unmarshal decodes raw, the name given back.
func (x *encodedDoc) unmarshal(rel string) *pb.Document {
	d := &pb.Document{}
	if err := proto.Unmarshal(x.raw, d); err != nil {
		d.Fields = nil
	}
	if d.Name == "" && x.cache != nil {
		d.Name = x.cache.prefix + rel
	}
	return d
}

// Encodings passes f, for each document of docs the store returned (by
// GetAt or a walk of its entries) and keeps the encoding of, that encoding
// without its name field: the name's field followed by it is the
// document's wire form, so a reader can send a document it read without
// encoding it again. The store keeps the encoding of a durable
// database's documents; not of a store in memory, a version kept only
// decoded (an old one, a commit not yet flushed), or a document it did not
// return (a projection), whose f is not called. The encoding is shared:
// never change it. It takes the read lock.
func (s *Store) Encodings(docs []*pb.Document, f func(i int, raw []byte)) {
	s.RLock()
	defer s.RUnlock()
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	for i, d := range docs {
		if d == nil {
			continue
		}
		// The decoded form is x's while the cache holds it: d is then
		// x's encoding decoded (with its name).
		if x := s.cache.byDoc[d]; x != nil && x.raw != nil && x.doc.Load() == d {
			f(i, x.raw)
		}
	}
}

// DecodedCacheBytes bounds (by DocHeapSize) the decoded documents a
// database keeps beside their encodings; past it the oldest decoded are
// dropped and decoded again when read.
const DecodedCacheBytes = 8 << 20

// byDocEntryBytes is about what an entry of docCache.byDoc costs (its key
// and value, the map's control bytes and spare room), counted with the
// decoded form it indexes.
const byDocEntryBytes = 40

// docCache is a database's FIFO of decoded documents, bounded by bytes.
type docCache struct {
	// prefix is the database's document name prefix, for names of
	// encodings kept without theirs.
	prefix string

	mu    sync.Mutex
	limit int
	ring  []cacheEntry
	head  int
	bytes int
	// byDoc finds the encoding of a decoded form the ring holds (by
	// identity, for Store.Encodings: cheaper than finding its entry by
	// path).
	byDoc map[*pb.Document]*encodedDoc
}

type cacheEntry struct {
	x    *encodedDoc
	d    *pb.Document
	size int
}

// reset forgets every entry (the documents are gone).
func (c *docCache) reset() {
	c.mu.Lock()
	c.ring, c.head, c.bytes, c.byDoc = nil, 0, 0, nil
	c.mu.Unlock()
}

// add records that x holds its decoded form d, and drops the oldest
// decoded forms past the limit (a form already replaced stays as is).
func (c *docCache) add(x *encodedDoc, d *pb.Document) {
	size := DocHeapSize(d) + byDocEntryBytes
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ring = append(c.ring, cacheEntry{x: x, d: d, size: size})
	c.bytes += size
	if c.byDoc == nil {
		c.byDoc = map[*pb.Document]*encodedDoc{}
	}
	c.byDoc[d] = x
	for c.bytes > c.limit && c.head < len(c.ring)-1 {
		e := c.ring[c.head]
		c.ring[c.head] = cacheEntry{}
		c.head++
		c.bytes -= e.size
		e.x.doc.CompareAndSwap(e.d, nil)
		delete(c.byDoc, e.d)
	}
	if c.head > 1024 && c.head > len(c.ring)/2 {
		c.ring = slices.Clone(c.ring[c.head:])
		c.head = 0
	}
}

// checkStored checks a stored document's encoding without decoding it:
// the wire structure of every field; the UTF-8 of every string proto's
// decoder checks (name, map keys, string and reference values); at most
// maxStoredDepth nested messages; the name being prefix+rel; create and
// It returns the update time, zero when the create or update time is
// missing (then the restore gives them, as Restore does).
func checkStored(b []byte, prefix, rel string) (time.Time, error) {
	if !docPathShape(rel) {
		return time.Time{}, fmt.Errorf("is under a key that is not a document path")
	}
	var ut time.Time
	var haveName, haveCreate, haveUpdate bool
	err := walkMessage(b, 0, func(num protowire.Number, typ protowire.Type, v []byte, depth int) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			if len(v) != len(prefix)+len(rel) || string(v[:len(prefix)]) != prefix || string(v[len(prefix):]) != rel {
				return fmt.Errorf("is named %q, not after its path", fsvalue.Truncate(string(v), 200))
			}
			haveName = true
		case 2:
			return checkMapEntry(v, depth+1)
		case 3:
			haveCreate = true
			_, err := checkTimestamp(v, depth+1)
			return err
		case 4:
			haveUpdate = true
			t, err := checkTimestamp(v, depth+1)
			ut = t
			return err
		}
		return nil
	})
	switch {
	case err != nil:
		return time.Time{}, err
	case !haveName:
		return time.Time{}, fmt.Errorf("has no name")
	case !haveCreate || !haveUpdate:
		return time.Time{}, nil
	}
	return ut, nil
}

// docPathShape reports whether rel has a document path's shape: an even
// number of non-empty segments.
func docPathShape(rel string) bool {
	segs, start := 1, 0
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			if i == start {
				return false
			}
			segs++
			start = i + 1
		}
	}
	return start < len(rel) && segs%2 == 0
}

// maxStoredDepth bounds nested messages in a stored document: each of at
// most 20 levels of maps or arrays takes three (value, map, entry).
const maxStoredDepth = 100

// walkMessage calls f on each field of the message b (at nesting depth);
// a malformed field is an error. f gets a length-delimited field's
// contents, and any other field's encoded value.
func walkMessage(b []byte, depth int, f func(num protowire.Number, typ protowire.Type, v []byte, depth int) error) error {
	if depth > maxStoredDepth {
		return fmt.Errorf("is nested more than %d messages deep", maxStoredDepth)
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > protowire.MaxValidNumber {
			return fmt.Errorf("is not a valid encoding (bad field tag)")
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else if n = protowire.ConsumeFieldValue(num, typ, b); n >= 0 {
			v = b[:n]
		}
		if n < 0 {
			return fmt.Errorf("is not a valid encoding (field %d is cut off or malformed)", num)
		}
		b = b[n:]
		if err := f(num, typ, v, depth); err != nil {
			return err
		}
	}
	return nil
}

// checkMapEntry checks a map<string, Value> entry.
func checkMapEntry(b []byte, depth int) error {
	return walkMessage(b, depth, func(num protowire.Number, typ protowire.Type, v []byte, depth int) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			if !utf8.Valid(v) {
				return fmt.Errorf("has a field name that is not valid UTF-8")
			}
		case 2:
			return checkValue(v, depth+1)
		}
		return nil
	})
}

// checkValue checks a Value.
func checkValue(b []byte, depth int) error {
	return walkMessage(b, depth, func(num protowire.Number, typ protowire.Type, v []byte, depth int) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 5, 17, 19, 22: // reference, string, field reference, variable reference
			if !utf8.Valid(v) {
				return fmt.Errorf("has a string that is not valid UTF-8")
			}
		case 6: // map_value: MapValue{fields: map<string, Value> = 1}
			return walkMessage(v, depth+1, func(num protowire.Number, typ protowire.Type, v []byte, depth int) error {
				if num == 1 && typ == protowire.BytesType {
					return checkMapEntry(v, depth+1)
				}
				return nil
			})
		case 9: // array_value: ArrayValue{values: repeated Value = 1}
			return walkMessage(v, depth+1, func(num protowire.Number, typ protowire.Type, v []byte, depth int) error {
				if num == 1 && typ == protowire.BytesType {
					return checkValue(v, depth+1)
				}
				return nil
			})
		case 8, 10: // geo point, timestamp: numbers only
			return walkMessage(v, depth+1, func(protowire.Number, protowire.Type, []byte, int) error { return nil })
		case 20, 21:
			return fmt.Errorf("holds a function or pipeline value, which documents never store")
		}
		return nil
	})
}

// checkTimestamp checks a Timestamp and returns it.
func checkTimestamp(b []byte, depth int) (time.Time, error) {
	var sec, nsec int64
	err := walkMessage(b, depth, func(num protowire.Number, typ protowire.Type, v []byte, _ int) error {
		if typ == protowire.VarintType && (num == 1 || num == 2) {
			x, _ := protowire.ConsumeVarint(v)
			if num == 1 {
				sec = int64(x)
			} else {
				nsec = int64(int32(x))
			}
		}
		return nil
	})
	return time.Unix(sec, nsec).UTC(), err
}
