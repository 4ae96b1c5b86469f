package event

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
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

// TestTokenSizeMemo checks that sizing events through the bus's memo of
// token claims maps gives HeapSize's size: the same map again and again,
// many maps alternating (more than the memo's slots), and a map that
// grew since it was sized.
func TestTokenSizeMemo(t *testing.T) {
	var tokens []map[string]any
	for i := range 40 {
		tok := benchToken()
		tok["sub"] = strconv.Itoa(i)
		for k := range i % 5 {
			tok["claim"+strconv.Itoa(k)] = []any{"x", int64(k), map[string]any{"deep": "yes"}}
		}
		tokens = append(tokens, tok)
	}
	var memo tokenSizes
	check := func(round int, tok map[string]any) {
		t.Helper()
		e := Event{Kind: KindListener, Identity: Identity{Lens: LensUser, UID: "u", Token: tok},
			Listener: &Listener{Phase: Deliver, ListenerID: "l", Target: &Target{Kind: "path", Path: "/a", Query: "{}"}}}
		docs := docSizes{tokens: &memo}
		if got, want := heapSize(&e, &docs), HeapSize(&e); got != want {
			t.Fatalf("round %d: memoized %d, alone %d", round, got, want)
		}
	}
	for round := range 200 {
		check(round, tokens[0])
		check(round, tokens[round%len(tokens)])
		check(round, tokens[(round*7)%len(tokens)])
	}
	tokens[0]["added"] = strings.Repeat("y", 100)
	check(-1, tokens[0])
	check(-1, nil)
	check(-1, map[string]any{})
}

// TestTokenSizesConcurrent: emissions on many goroutines size claims maps
// that share and replace the memo's slots; under -race a slot read after
// its lock is released (a replaced slot's size) is reported, and every
// size must be the map's own.
func TestTokenSizesConcurrent(t *testing.T) {
	var memo tokenSizes
	maps := make([]map[string]any, 64)
	for i := range maps {
		maps[i] = map[string]any{"sub": fmt.Sprint("user", i), "n": strings.Repeat("x", i)}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 2000 {
				m := maps[(g*7+k)%len(maps)]
				if got, want := memo.of(m), sizeOf(m); got != want {
					t.Errorf("size %d, want %d", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
