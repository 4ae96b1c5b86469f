package firestore

import (
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// DefaultHistoryBytes bounds the memory (an estimate of the Go heap, see
// docHeapSize) of the superseded document versions a database keeps for
// reads at a past read time, read-only transactions and listener resumes,
// when Options.HistoryBytes is 0.
const DefaultHistoryBytes = 32 << 20

// versionOverhead is what one kept version costs besides its document.
const versionOverhead = 64

// docHeapSize estimates the Go heap a decoded document takes (structs,
// maps, strings and their allocation rounding), which is several times its
// encoded size for small documents: the history budget is memory.
func docHeapSize(d *pb.Document) int {
	n := 80 + roundAlloc(len(d.Name)) + fieldsHeapSize(d.Fields)
	if d.CreateTime != nil {
		n += 48
	}
	if d.UpdateTime != nil && d.UpdateTime != d.CreateTime {
		n += 48
	}
	return n
}

func fieldsHeapSize(m map[string]*pb.Value) int {
	if m == nil {
		return 0
	}
	// A Go map: its header and groups of 8 slots (key, value, control)
	// kept at most 7/8 full.
	slots := max(8, (len(m)*8+6)/7)
	n := 48 + slots*25
	for k, v := range m {
		n += roundAlloc(len(k)) + valueHeapSize(v)
	}
	return n
}

func valueHeapSize(v *pb.Value) int {
	n := 64 + 16 // the Value and its oneof wrapper
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		n += roundAlloc(len(x.StringValue))
	case *pb.Value_BytesValue:
		n += roundAlloc(len(x.BytesValue))
	case *pb.Value_ReferenceValue:
		n += roundAlloc(len(x.ReferenceValue))
	case *pb.Value_TimestampValue, *pb.Value_GeoPointValue:
		n += 48
	case *pb.Value_MapValue:
		n += 48 + fieldsHeapSize(x.MapValue.GetFields())
	case *pb.Value_ArrayValue:
		vs := x.ArrayValue.GetValues()
		n += 48 + 8*cap(vs)
		for _, e := range vs {
			n += valueHeapSize(e)
		}
	}
	return n
}

// roundAlloc is n rounded up to the allocator's granularity.
func roundAlloc(n int) int {
	if n == 0 {
		return 0
	}
	return (n + 15) &^ 15
}

// historyItem records that a version of d was superseded at t (and so is
// needed only by reads before t); size is what it costs to keep.
type historyItem struct {
	t    time.Time
	d    *docEntry
	size int
}

// superseded records d's current version as history from t on; callers
// hold db.mu, and d gets a new version at t.
func (db *database) superseded(d *docEntry, t time.Time) {
	vs := d.versions()
	n := len(vs)
	if n == 0 {
		return
	}
	size := versionOverhead + vs[n-1].size()
	if enc := vs[n-1].enc; enc != nil && enc.raw != nil {
		// A superseded encoded version is read again only by reads at a
		// past time: keep it encoded. (One not given its encoding yet
		// keeps its decoded form: it is all there is of it.)
		if d := enc.doc.Load(); d != nil {
			size -= docHeapSize(d)
			enc.doc.Store(nil)
		}
	}
	db.hist = append(db.hist, historyItem{t: t, d: d, size: size})
	db.histBytes += size
}

// trimHistory drops the superseded versions that are older than the
// history window (Options.History) or beyond its byte budget
// (Options.HistoryBytes), oldest first, and moves db.since, the oldest
// read time still served, past them. Callers hold db.mu.
func (db *database) trimHistory(now time.Time) {
	cutoff := now.Add(-db.e.opts.History)
	limit := db.e.opts.HistoryBytes
	for db.histHead < len(db.hist) {
		it := db.hist[db.histHead]
		if it.t.After(cutoff) && db.histBytes <= limit {
			break
		}
		db.hist[db.histHead] = historyItem{}
		db.histHead++
		db.histBytes -= it.size
		db.dropBefore(it.d, it.t)
		if it.t.After(db.since) {
			db.since = it.t
		}
	}
	if db.histHead > 1024 && db.histHead > len(db.hist)/2 {
		db.hist = slices.Clone(db.hist[db.histHead:])
		db.histHead = 0
	}
	// A database's history is complete from its creation: reads at times
	// before its first commit see it empty (as on the emulator), so since
	// only moves once versions older than the window are dropped.
	if cutoff.After(db.since) && !db.last.IsZero() {
		db.since = cutoff
	}
}

// dropBefore removes d's versions that no read at or after t can reach:
// all but the newest at or before t. A deleted document left with only
// its tombstone is forgotten. Callers hold db.mu.
func (db *database) dropBefore(d *docEntry, t time.Time) {
	vs := d.versions()
	keep := 0
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].t.After(t) {
			keep = i
			break
		}
	}
	if keep > 0 {
		// The list shares its array: the dropped versions stay reachable
		// until the next append outgrows it (at most the list's length).
		vs = vs[keep:]
		d.setVersions(vs)
	}
	if len(vs) == 1 && vs[0].deleted() && db.docs[d.path] == d {
		db.forget(d.path)
	}
}

// unrecord forgets history items recorded after t (commits rolled back);
// callers hold db.mu.
func (db *database) unrecord(t time.Time) {
	for len(db.hist) > db.histHead && db.hist[len(db.hist)-1].t.After(t) {
		db.histBytes -= db.hist[len(db.hist)-1].size
		db.hist = db.hist[:len(db.hist)-1]
	}
}

// HistoryStats reports a database's kept history: how many superseded
// versions, their bytes, and the oldest read time still served.
func (e *Engine) HistoryStats(name DatabaseName) (versions, bytes int, oldest time.Time) {
	db := e.db(name)
	db.mu.RLock()
	defer db.mu.RUnlock()
	return len(db.hist) - db.histHead, db.histBytes, db.since
}

var _ = (*pb.Document)(nil)
