package value

import (
	"math"
	"sort"
	"strconv"
)

// Equality modes for keys and membership. Google's engine compares list
// elements strictly (1 in [1.0] is false, [1] == [1.0] is false) but set
// elements by numeric value, at every depth ([1, 2].toSet().hasAll([1.0])
// and [[1]].toSet().hasAll([[1.0]]) are true; differential cases).
const (
	Strict  = false // list semantics: an int never equals a float
	Numeric = true  // set semantics: 1 and 1.0 are the same element
)

// Key returns a canonical encoding of v such that two values have the same
// key exactly when they are equal under the mode (Strict or Numeric); ok
// is false for values equal to nothing, not even themselves (NaN, or a
// list query's constraint). Keys let membership tests over large
// collections run in linear time instead of quadratic.
func Key(v Value, mode bool) (key string, ok bool) {
	b, ok := appendKey(make([]byte, 0, 16), v, mode)
	return string(b), ok
}

func appendKey(b []byte, v Value, mixed bool) ([]byte, bool) {
	switch v := Plain(v).(type) {
	case Null:
		return append(b, 'z'), true
	case Bool:
		if v {
			return append(b, 'T'), true
		}
		return append(b, 'F'), true
	case Int:
		if mixed {
			b = append(b, 'n')
		} else {
			b = append(b, 'i')
		}
		return strconv.AppendInt(b, int64(v), 10), true
	case Float:
		f := float64(v)
		if math.IsNaN(f) {
			return b, false
		}
		if mixed && f == math.Trunc(f) && f >= -9.223372036854775808e18 && f < 9.223372036854775808e18 {
			return strconv.AppendInt(append(b, 'n'), int64(f), 10), true
		}
		return strconv.AppendFloat(append(b, 'd'), f+0, 'g', -1, 64), true // +0 folds -0.0 into 0.0
	case String:
		return appendStr(append(b, 's'), string(v)), true
	case Bytes:
		return appendStr(append(b, 'b'), string(v)), true
	case Timestamp:
		b = strconv.AppendInt(append(b, 't'), v.Unix(), 10)
		return strconv.AppendInt(append(b, '.'), int64(v.Nanosecond()), 10), true
	case Duration:
		b = strconv.AppendInt(append(b, 'D'), v.Seconds, 10)
		return strconv.AppendInt(append(b, '.'), int64(v.Nanos), 10), true
	case LatLng:
		if math.IsNaN(v.Lat) || math.IsNaN(v.Lng) {
			return b, false
		}
		b = strconv.AppendFloat(append(b, 'L'), v.Lat+0, 'g', -1, 64)
		return strconv.AppendFloat(append(b, ','), v.Lng+0, 'g', -1, 64), true
	case Path:
		b = strconv.AppendInt(append(b, 'P'), int64(len(v.Segments)), 10)
		for _, s := range v.Segments {
			b = appendStr(b, s)
		}
		return b, true
	case List:
		b = strconv.AppendInt(append(b, '['), int64(len(v)), 10)
		for _, x := range v {
			var ok bool
			if b, ok = appendKey(b, x, mixed); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case Map:
		keys := v.Keys()
		b = strconv.AppendInt(append(b, '{'), int64(len(keys)), 10)
		for _, k := range keys {
			b = appendStr(b, k)
			var ok bool
			if b, ok = appendKey(b, v[k], mixed); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case Set:
		// Order carries no meaning: the element keys are sorted.
		keys := make([]string, 0, len(v))
		for _, x := range v {
			k, ok := Key(x, Numeric)
			if !ok {
				return b, false
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = strconv.AppendInt(append(b, '<'), int64(len(keys)), 10)
		for _, k := range keys {
			b = appendStr(b, k)
		}
		return append(b, '>'), true
	case MapDiff:
		b = append(b, 'M')
		var ok bool
		if b, ok = appendKey(b, v.From, Strict); !ok {
			return b, false
		}
		return appendKey(b, v.To, Strict)
	}
	return b, false
}

func appendStr(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// Index is a hashed membership test over a collection, built in linear
// time.
type Index struct {
	mode  bool
	keys  map[string]struct{}
	small []Value // scanned when the collection is small
}

// Has reports whether the indexed collection holds a value equal to v.
func (ix *Index) Has(v Value) bool {
	if ix.keys == nil {
		for _, e := range ix.small {
			if EqualMode(e, v, ix.mode) {
				return true
			}
		}
		return false
	}
	k, ok := Key(v, ix.mode)
	if !ok {
		return false
	}
	_, has := ix.keys[k]
	return has
}

// EqualMode is equality under a mode: Numeric is EqualNumeric, Strict
// is list-element equality (an int never equals a float, at any depth).
func EqualMode(a, b Value, mode bool) bool {
	if mode == Numeric {
		return EqualNumeric(a, b)
	}
	return equal(a, b, false, false)
}

// smallIndex is the size below which Index scans instead of hashing.
const smallIndex = 8

// NewIndex indexes vals under the mode (Strict for lists, Numeric for
// sets). Small collections are scanned directly, which is cheaper than
// hashing them.
func NewIndex(vals []Value, mode bool) Index {
	ix := Index{mode: mode}
	if len(vals) <= smallIndex {
		ix.small = vals
		return ix
	}
	ix.keys = make(map[string]struct{}, len(vals))
	for _, v := range vals {
		if k, ok := Key(v, mode); ok {
			ix.keys[k] = struct{}{}
		}
	}
	return ix
}
