package eval

import (
	"math/rand"
	"reflect"
	"testing"
)

// TestChildrenMatchesAppending compares children, which fills one block,
// with the per-parent appends it replaced, on random traces.
func TestChildrenMatchesAppending(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 500; round++ {
		steps := make([]Step, r.Intn(30))
		for i := range steps {
			steps[i].Parent = int32(r.Intn(i+2) - 1) // -1 or an earlier step
			if r.Intn(20) == 0 {
				steps[i].Parent = int32(len(steps) + 3) // out of range: ignored
			}
		}
		want := make([][]int, len(steps))
		for i, s := range steps {
			if s.Parent >= 0 && int(s.Parent) < len(steps) {
				want[s.Parent] = append(want[s.Parent], i)
			}
		}
		got := children(steps)
		for i := range got {
			if len(got[i]) == 0 && len(want[i]) == 0 {
				continue
			}
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("round %d step %d: children %v, want %v", round, i, got[i], want[i])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d lists, want %d", round, len(got), len(want))
		}
	}
}
