package event

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSubscriptionMatchesModel drives subscriptions (small buffers,
// tight byte bounds, events of random sizes) with emissions and receipts
// at random moments, and compares every event received, gap markers
// included, with a model of what offer promises: an event joins the
// buffer when it has room in events (two after a loss, for the gap) and,
// unless the buffer is empty, in bytes for the events waiting. It checks
// the ring that tracks the waiting events' sizes through many laps.
func TestSubscriptionMatchesModel(t *testing.T) {
	type item struct {
		seq  uint64
		gap  uint64 // missed, for a gap marker
		size int
	}
	for round := range 20 {
		r := rand.New(rand.NewPCG(uint64(round), 11))
		buffer, limit := 2+r.IntN(6), 200+r.IntN(800)
		bus := NewBus(Options{History: 50, SubscriptionBytes: limit})
		sub := bus.Subscribe(buffer)
		var model []item
		var missed uint64
		queued := func() int {
			n := 0
			for _, it := range model {
				n += it.size
			}
			return n
		}
		for range 5000 {
			if r.IntN(3) > 0 {
				e := Event{Kind: KindMutation, Path: strings.Repeat("p", r.IntN(300)), Mutation: &Mutation{Op: "x"}}
				bus.Emit(e)
				e.Seq = bus.Seq()
				size := HeapSize(&e) // as the bus sizes it: before its ID is set
				need := 1
				if missed > 0 {
					need = 2
				}
				if buffer-len(model) < need || (len(model) > 0 && queued()+size > limit) {
					missed++
					continue
				}
				if missed > 0 {
					model = append(model, item{seq: e.Seq, gap: missed})
					missed = 0
				}
				model = append(model, item{seq: e.Seq, size: size})
				continue
			}
			for k := r.IntN(len(model) + 1); k > 0; k-- {
				var got Event
				select {
				case got = <-sub.Events():
				default:
					t.Fatalf("round %d: nothing waiting, the model has %d", round, len(model))
				}
				want := model[0]
				model = model[1:]
				if got.Seq != want.seq || (want.gap > 0) != (got.Kind == KindGap) || (want.gap > 0 && got.Gap.Missed != want.gap) {
					t.Fatalf("round %d: received seq %d kind %s %+v, want %+v", round, got.Seq, got.Kind, got.Gap, want)
				}
			}
		}
		if len(sub.Events()) != len(model) {
			t.Fatalf("round %d: %d waiting, model %d", round, len(sub.Events()), len(model))
		}
	}
}
