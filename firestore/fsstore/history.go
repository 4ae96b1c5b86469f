package fsstore

import (
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// DefaultHistoryBytes bounds the memory (an estimate of the Go heap, see
// DocHeapSize) of the superseded document versions a database keeps for
// reads at a past read time, read-only transactions and listener resumes,
// (firestore.Options.HistoryBytes 0 means it).
const DefaultHistoryBytes = 32 << 20

// VersionOverhead is what one kept version costs besides its document.
const VersionOverhead = 64

// DocHeapSize estimates the Go heap a decoded document takes (structs,
// maps, strings and their allocation rounding), which is several times its
// encoded size for small documents: the history budget is memory.
func DocHeapSize(d *pb.Document) int {
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
	t    int64 // Unix nanoseconds
	d    *Entry
	size int
}

// superseded records d's current version as history from t on; callers
// hold the lock, and d gets a new version at t.
func (s *Store) superseded(d *Entry, t time.Time) {
	vs := d.versions()
	n := len(vs)
	if n == 0 {
		return
	}
	size := VersionOverhead + vs[n-1].size()
	if enc := vs[n-1].enc; enc != nil && enc.raw != nil {
		// A superseded encoded version is read again only by reads at a
		// past time: keep it encoded. (One not given its encoding yet
		// keeps its decoded form: it is all there is of it.)
		if d := enc.doc.Load(); d != nil {
			size -= DocHeapSize(d)
			enc.doc.Store(nil)
		}
	}
	s.hist = append(s.hist, historyItem{t: t.UnixNano(), d: d, size: size})
	s.histBytes += size
}

// trimHistory drops the superseded versions that are older than the
// history window (Options.History) or beyond its byte budget
// (Options.HistoryBytes), oldest first, and moves s.since, the oldest
// read time still served, past them. Callers hold the lock.
func (s *Store) trimHistory(now time.Time) {
	cutoff := now.Add(-s.opts.History)
	cut := nanos(cutoff)
	limit := s.opts.HistoryBytes
	for s.histHead < len(s.hist) {
		it := s.hist[s.histHead]
		if it.t > cut && s.histBytes <= limit {
			break
		}
		s.hist[s.histHead] = historyItem{}
		s.histHead++
		s.histBytes -= it.size
		s.dropBefore(it.d, it.t)
		if t := time.Unix(0, it.t).UTC(); t.After(s.since) {
			s.since = t
		}
	}
	if s.histHead > 1024 && s.histHead > len(s.hist)/2 {
		s.hist = slices.Clone(s.hist[s.histHead:])
		s.histHead = 0
	}
	// A database's history is complete from its creation: reads at times
	// before its first commit see it empty (as on the emulator), so since
	// only moves once versions older than the window are dropped.
	if cutoff.After(s.since) && !s.last.IsZero() {
		s.since = cutoff
	}
}

// dropBefore removes d's versions that no read at or after t (Unix
// nanoseconds) can reach: all but the newest at or before t. A deleted
// document left with only its tombstone is forgotten. Callers hold the
// lock.
func (s *Store) dropBefore(d *Entry, t int64) {
	vs := d.versions()
	keep := 0
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].at <= t {
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
	if len(vs) == 1 && vs[0].deleted() && s.docs[d.path] == d {
		s.forget(d.path)
	}
}

// unrecord forgets history items recorded after t (commits rolled back);
// callers hold the lock.
func (s *Store) unrecord(t time.Time) {
	for len(s.hist) > s.histHead && s.hist[len(s.hist)-1].t > nanos(t) {
		s.histBytes -= s.hist[len(s.hist)-1].size
		s.hist = s.hist[:len(s.hist)-1]
	}
}

// HistoryStats reports the kept history: how many superseded versions,
// their bytes, and the oldest read time still served; callers hold the
// lock.
func (s *Store) HistoryStats() (versions, bytes int, oldest time.Time) {
	return len(s.hist) - s.histHead, s.histBytes, s.since
}
