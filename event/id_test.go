package event

import (
	"math"
	"strconv"
	"testing"
)

// TestIDsAreEvtSeq checks the IDs carved from the bus's slabs: each is
// "evt-<Seq>" (as the eager strconv form it replaces), stays so while
// later IDs are carved after it, across slabs and up to 20-digit
// sequence numbers, and no two are equal.
func TestIDsAreEvtSeq(t *testing.T) {
	for _, from := range []uint64{0, 99_990, math.MaxUint64 - 3000} {
		bus := NewBus(Options{History: 5000})
		bus.seq = from
		sub := bus.Subscribe(5000)
		var got []string
		for range 3000 {
			bus.Emit(Event{Kind: KindMutation, Mutation: &Mutation{Op: "x"}})
		}
		for range 3000 {
			got = append(got, (<-sub.Events()).ID)
		}
		seen := map[string]bool{}
		for i, e := range bus.History() {
			want := "evt-" + strconv.FormatUint(from+uint64(i)+1, 10)
			if e.ID != want || got[i] != want || e.ID != "evt-"+strconv.FormatUint(e.Seq, 10) {
				t.Fatalf("from %d, event %d: history ID %q, delivered %q, want %q", from, i, e.ID, got[i], want)
			}
			if seen[e.ID] {
				t.Fatalf("ID %q twice", e.ID)
			}
			seen[e.ID] = true
		}
		if len(seen) != 3000 {
			t.Fatalf("%d IDs, want 3000", len(seen))
		}
	}
}
