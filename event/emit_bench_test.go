package event

import (
	"testing"
	"time"
)

// BenchmarkEmitSet emits a Firestore set's two events, its request and
// its commit, which share the document map (the data seen, after,
// written), as one batch onto a bus with a 1,000-event history: what the
// bus costs every write.
func BenchmarkEmitSet(b *testing.B) {
	bus := NewBus(Options{History: 1000})
	doc := map[string]any{"i": int64(7), "g": int64(7), "s": "x", "tags": []any{"a", "b"}, "m": map[string]any{"k": "v"}}
	batch := make([]Event, 2)
	b.ReportAllocs()
	for b.Loop() {
		batch[0] = Event{Kind: KindRequest, Service: "firestore", Method: "create", Path: "bench/d1",
			Request: &Request{Verdict: Bypassed, Seen: &Seen{Data: doc, Before: &Resource{}}}}
		batch[1] = Event{Kind: KindCommit, Service: "firestore", Method: "create", Path: "bench/d1",
			Commit: &Commit{RequestTime: time.Unix(1, 0), After: doc, Written: doc}}
		bus.EmitBatch(batch)
	}
}
