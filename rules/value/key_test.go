package value

import (
	"math"
	"testing"
	"time"
)

// TestKeyAgreesWithEquality checks that keys are equal exactly when the
// values are, under both equality modes.
func TestKeyAgreesWithEquality(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 2, 29, 1, 2, 3, 4, time.UTC)
	vals := []Value{
		Null{}, Bool(true), Bool(false), Int(1), Int(-1), Int(0), Float(1), Float(1.5), Float(0), Float(math.Copysign(0, -1)),
		String("a"), String("1"), Bytes("a"), Timestamp{ts}, Timestamp{ts.In(time.FixedZone("x", 3600))},
		Duration{Seconds: 1}, Duration{Nanos: 1}, LatLng{1, 2}, Path{Segments: []string{"a", "b"}}, Path{Segments: []string{"a/b"}},
		List{Int(1)}, List{Float(1)}, List{List{Int(1)}}, List{List{Float(1)}}, List{}, Map{}, Map{"a": Int(1)}, Map{"a": Float(1)},
		Map{"a": Int(1), "b": Int(2)}, NewSet([]Value{Int(1), Int(2)}), NewSet([]Value{Int(2), Float(1)}), NewSet(nil),
		String("s1:a"), List{String("a"), String("b")}, List{String("ab")},
	}
	for _, a := range vals {
		for _, b := range vals {
			ka, _ := Key(a, Strict)
			kb, _ := Key(b, Strict)
			if got, want := ka == kb, Equal(a, b) && a.Type() == b.Type(); got != want {
				t.Errorf("strict: Key(%s) == Key(%s) is %v, equality %v", Show(a), Show(b), got, want)
			}
			ka, _ = Key(a, Numeric)
			kb, _ = Key(b, Numeric)
			if got, want := ka == kb, EqualNumeric(a, b); got != want {
				t.Errorf("numeric: Key(%s) == Key(%s) is %v, equality %v", Show(a), Show(b), got, want)
			}
		}
	}
	if _, ok := Key(Float(math.NaN()), Numeric); ok {
		t.Error("NaN has a key; it must equal nothing")
	}
	if s := NewSet([]Value{Int(1), Float(1), List{Int(1)}, List{Float(1)}}); len(s) != 2 {
		t.Errorf("NewSet folds numerically equal elements: got %s", Show(s))
	}
}

// TestIndexSmallAndHashedAgree: the scanned and the hashed index answer
// alike under both modes.
func TestIndexSmallAndHashedAgree(t *testing.T) {
	t.Parallel()
	pool := []Value{Int(1), Float(1), Float(1.5), String("a"), List{Int(1)}, List{Float(1)}, Map{"a": Int(1)}, Null{}, Bool(true)}
	for _, mode := range []bool{Strict, Numeric} {
		for n := 1; n <= len(pool); n++ {
			small := NewIndex(pool[:n], mode)
			big := NewIndex(append(append([]Value(nil), pool[:n]...), make([]Value, 0)...), mode)
			big.keys = map[string]struct{}{}
			for _, v := range pool[:n] {
				if k, ok := Key(v, mode); ok {
					big.keys[k] = struct{}{}
				}
			}
			for _, v := range pool {
				if small.Has(v) != big.Has(v) {
					t.Errorf("mode %v, %d elements: Has(%s) scanned %v, hashed %v", mode, n, Show(v), small.Has(v), big.Has(v))
				}
			}
		}
	}
}
