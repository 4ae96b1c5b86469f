package capture

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/testfs"
)

// BenchmarkRecorderIntake measures what the bus and the recorder cost a
// Firestore write, without the engine: the events of 1,000 sets and gets
// (recorded once) are emitted again, a set's two as one batch, the
// recorder taking them every 256 events and flushing every 2,048, all on
// the benchmark's goroutine (the recorder's own is never woken), so that
// ns/op, allocs/op and a CPU profile are the bus's and the capture's
// share of an operation.
func BenchmarkRecorderIntake(b *testing.B) {
	be, err := backend.Start(backend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Shutdown(context.Background()) }) // after the recorder's Close
	ctx := context.Background()
	fs := testfs.Of(be.Sandbox).Admin()
	bus := be.Sandbox.Events()
	for i := range 1000 {
		if err := fs.SetDocument(ctx, fmt.Sprintf("bench/d%04d", i), map[string]any{"i": i, "g": i % 10, "s": "x"}); err != nil {
			b.Fatal(err)
		}
		if _, err := fs.GetDocument(ctx, fmt.Sprintf("bench/d%04d", i)); err != nil {
			b.Fatal(err)
		}
	}
	// One operation: a set (its request and commit events) or a get.
	var ops [][]event.Event
	var sets int
	for _, e := range bus.History() {
		e.Seq, e.ID = 0, ""
		if e.Kind == event.KindCommit && len(ops) > 0 && len(ops[len(ops)-1]) == 1 && ops[len(ops)-1][0].Method != "get" {
			ops[len(ops)-1] = append(ops[len(ops)-1], e)
			sets++
			continue
		}
		ops = append(ops, []event.Event{e})
	}
	if sets != 1000 || len(ops) != 2000 {
		b.Fatalf("%d operations, %d sets: want 2000 and 1000", len(ops), sets)
	}
	rec := idleRecorder(b, be)
	batch := make([]event.Event, 0, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch = append(batch[:0], ops[i%len(ops)]...)
		bus.EmitBatch(batch)
		if i%128 == 127 {
			rec.take()
		}
		if i%1024 == 1023 {
			if err := rec.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRecorderListenerIntake is BenchmarkRecorderIntake for the
// events of a Realtime Database fan-out: one listener delivery each, as
// the database emits them for an unauthenticated listen (a write that
// reaches 1,000 listens emits 1,000 of them).
func BenchmarkRecorderListenerIntake(b *testing.B) {
	be, err := backend.Start(backend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Shutdown(context.Background()) }) // after the recorder's Close
	bus := be.Sandbox.Events()
	rec := idleRecorder(b, be)
	listeners := make([]*event.Listener, 1000)
	for i := range listeners {
		listeners[i] = &event.Listener{Phase: event.Deliver, ListenerID: fmt.Sprintf("l%d", i),
			Target: &event.Target{Kind: "path", Path: "/fan/go", Query: "{}"}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bus.Emit(event.Event{Kind: event.KindListener, Path: "demo-p:/fan/go", Origin: event.OriginListener,
			Identity: event.Identity{Lens: event.LensUnauthenticated}, Actor: event.Actor{Kind: event.ActorApp},
			Listener: listeners[i%len(listeners)]})
		if i%128 == 127 {
			rec.take()
		}
		if i%1024 == 1023 {
			if err := rec.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// idleRecorder starts a recorder of be's sandbox that never flushes or
// takes events by itself (the benchmark calls take and Flush), its first
// flush done, closed when the benchmark ends.
func idleRecorder(b *testing.B, be *backend.Backend) *Recorder {
	b.Helper()
	rec, err := Start(context.Background(), be.Sandbox, filepath.Join(b.TempDir(), "s.json"), Options{Debounce: time.Hour, FirstFlush: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rec.Close() })
	if err := rec.Flush(); err != nil {
		b.Fatal(err)
	}
	return rec
}
