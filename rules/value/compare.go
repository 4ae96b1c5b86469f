package value

import (
	"math"
	"strings"
)

// Equal reports whether a == b. Values of different types are unequal (not
// an error), except that int and float compare by numeric value. Inside
// lists and maps the element types must match too: production says
// [1] == [1.0] is false while 1 == 1.0 is true.
func Equal(a, b Value) bool { return equal(a, b, true, false) }

// EqualNumeric is equality of set elements: numbers compare by value at
// every depth, so [1] and [1.0] are the same element.
func EqualNumeric(a, b Value) bool { return equal(a, b, true, true) }

func equal(a, b Value, numericMix, deep bool) bool {
	switch a := a.(type) {
	case Record:
		return equal(a.Map(), b, numericMix, deep)
	case Null:
		_, ok := b.(Null)
		return ok
	case Bool:
		x, ok := b.(Bool)
		return ok && a == x
	case Int:
		switch x := b.(type) {
		case Int:
			return a == x
		case Float:
			return numericMix && float64(a) == float64(x)
		}
	case Float:
		switch x := b.(type) {
		case Float:
			return a == x
		case Int:
			return numericMix && float64(a) == float64(x)
		}
	case String:
		x, ok := b.(String)
		return ok && a == x
	case Bytes:
		x, ok := b.(Bytes)
		return ok && a == x
	case Timestamp:
		x, ok := b.(Timestamp)
		return ok && a.Equal(x.Time)
	case Duration:
		x, ok := b.(Duration)
		return ok && a == x
	case LatLng:
		x, ok := b.(LatLng)
		return ok && a == x
	case Path:
		x, ok := b.(Path)
		if !ok || len(a.Segments) != len(x.Segments) {
			return false
		}
		for i := range a.Segments {
			if a.Segments[i] != x.Segments[i] {
				return false
			}
		}
		return true
	case List:
		x, ok := b.(List)
		if !ok || len(a) != len(x) {
			return false
		}
		for i := range a {
			if !equal(a[i], x[i], deep, deep) {
				return false
			}
		}
		return true
	case Set:
		x, ok := b.(Set)
		if !ok || len(a) != len(x) {
			return false
		}
		ka, okA := Key(a, Numeric)
		kx, okX := Key(x, Numeric)
		return okA && okX && ka == kx
	case Map:
		x, ok := AsMap(b)
		if !ok || len(a) != len(x) {
			return false
		}
		for k, v := range a {
			w, ok := x[k]
			if !ok || !equal(v, w, deep, deep) {
				return false
			}
		}
		return true
	case MapDiff:
		x, ok := b.(MapDiff)
		return ok && Equal(a.From, x.From) && Equal(a.To, x.To)
	}
	return false
}

// Contains reports whether the set holds v. Set elements compare by
// numeric value at every depth: [1].toSet() contains 1.0 (differential
// case). It is linear; use NewIndex for repeated tests.
func (s Set) Contains(v Value) bool {
	for _, e := range s {
		if EqualNumeric(e, v) {
			return true
		}
	}
	return false
}

// NewSet builds a set from values, dropping duplicates (by numeric value,
// as Google's engine does: [1, 1.0].toSet().size() == 1), keeping first
// order. It runs in linear time.
func NewSet(vals []Value) Set {
	out := make(Set, 0, len(vals))
	seen := make(map[string]struct{}, len(vals))
	for _, v := range vals {
		k, ok := Key(v, Numeric)
		if ok {
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
		}
		out = append(out, v)
	}
	return out
}

const orderingExpected = "string < string, bytes < bytes, int < int, float < float, duration < duration, timestamp < timestamp, constraint < any, any < constraint"

// Compare orders a and b for < <= > >=. It supports numbers (int and float
// mixed), strings, bytes, timestamps and durations; anything else is
// production's "Unsupported operation error". NaN compares false with
// everything, so ok is false for it.
func Compare(a, b Value, op string) Value {
	c, err := compare(a, b, op)
	if err != nil {
		return err
	}
	switch op {
	case "<":
		return Bool(c == -1)
	case "<=":
		return Bool(c == -1 || c == 0)
	case ">":
		return Bool(c == 1)
	case ">=":
		return Bool(c == 1 || c == 0)
	}
	return Errorf("unknown comparison %s", op)
}

// compare returns -1, 0, 1, or 2 for unordered (NaN).
func compare(a, b Value, op string) (int, *Error) {
	switch x := a.(type) {
	case Int:
		switch y := b.(type) {
		case Int:
			return cmp3(x < y, x > y), nil
		case Float:
			return cmpFloat(float64(x), float64(y)), nil
		}
	case Float:
		switch y := b.(type) {
		case Float:
			return cmpFloat(float64(x), float64(y)), nil
		case Int:
			return cmpFloat(float64(x), float64(y)), nil
		}
	case String:
		if y, ok := b.(String); ok {
			return cmp3(x < y, x > y), nil
		}
	case Bytes:
		if y, ok := b.(Bytes); ok {
			return strings.Compare(string(x), string(y)), nil
		}
	case Timestamp:
		if y, ok := b.(Timestamp); ok {
			return x.Compare(y.Time), nil
		}
	case Duration:
		if y, ok := b.(Duration); ok {
			return cmp3(x.Seconds < y.Seconds || x.Seconds == y.Seconds && x.Nanos < y.Nanos,
				x.Seconds > y.Seconds || x.Seconds == y.Seconds && x.Nanos > y.Nanos), nil
		}
	}
	return 0, ErrUnsupportedOp(a.Type().String()+" "+op+" "+b.Type().String(), strings.ReplaceAll(orderingExpected, "<", op))
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	if math.IsNaN(a) || math.IsNaN(b) {
		return 2
	}
	return cmp3(a < b, a > b)
}
