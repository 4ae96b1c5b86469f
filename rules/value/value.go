// Package value holds the runtime values of the Security Rules language and
// the operations on them, with production's semantics: strict types (int and
// float compare equal by value but never mix inside lists or maps), integer
// overflow and division by zero as errors, and errors as ordinary values so
// that && and || can absorb them.
package value

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Type identifies the kind of a value; its String is the name production
// uses in messages and with `is`.
type Type int

// Types of values.
const (
	TNull Type = iota
	TBool
	TInt
	TFloat
	TString
	TBytes
	TTimestamp
	TDuration
	TLatLng
	TPath
	TList
	TMap
	TSet
	TMapDiff
	TConstraint // a placeholder for unknown document data when proving list queries
	TError
)

var typeNames = [...]string{"null", "bool", "int", "float", "string", "bytes", "timestamp", "duration", "latlng", "path", "list", "map", "set", "map_diff", "constraint", "error"}

func (t Type) String() string { return typeNames[t] }

// Value is a rules value. The concrete types are Null, Bool, Int, Float,
// String, Bytes, Timestamp, Duration, LatLng, Path, List, Map, Set, MapDiff,
// Constraint and *Error, and a service's Records (maps whose entries are
// read on access; AsMap or Plain turn one into its Map).
type Value interface {
	Type() Type
}

// Null is the null value.
type Null struct{}

// Bool is a boolean.
type Bool bool

// Int is a 64-bit signed integer.
type Int int64

// Float is a 64-bit IEEE-754 number.
type Float float64

// String is a Unicode string.
type String string

// Bytes is a byte sequence (held in a string for immutability).
type Bytes string

// Timestamp is an instant with nanosecond precision.
type Timestamp struct{ time.Time }

// Duration is a signed span of time; Seconds and Nanos share a sign.
type Duration struct {
	Seconds int64
	Nanos   int32
}

// LatLng is a geographic point.
type LatLng struct{ Lat, Lng float64 }

// Path is a resource path such as /databases/(default)/documents/users/a.
type Path struct {
	Segments []string
	// Absolute is true for paths written with a leading slash.
	Absolute bool
	// Partial marks a recursive-wildcard binding that includes the
	// hypothetical document of a list request: its content is not known,
	// and production errors when it is read.
	Partial bool
}

// ErrPartialPath is production's error for reading a path variable that
// covers the unknown document of a list request.
func ErrPartialPath() *Error { return Errorf("Variable  is not bound in path template.") }

// List is an ordered list.
type List []Value

// Map is a string-keyed map.
type Map map[string]Value

// Set is a collection of distinct values; order carries no meaning.
type Set []Value

// MapDiff is the result of Map.diff(other).
type MapDiff struct {
	From, To Map
}

// Constraint stands for an unknown value in query proofs: a field of any
// document a list query could return. Comparisons involving it are decided
// by the service from the query's filters (Env.Prove), never from data.
type Constraint struct {
	// Field is the field path inside the document's data ("" segments
	// never appear); empty for resource.data itself.
	Field []string
}

// Desc renders the constraint as the rules expression it stands for.
func (c Constraint) Desc() string {
	if len(c.Field) == 0 {
		return "resource.data"
	}
	return "resource.data." + strings.Join(c.Field, ".")
}

func (Null) Type() Type       { return TNull }
func (Bool) Type() Type       { return TBool }
func (Int) Type() Type        { return TInt }
func (Float) Type() Type      { return TFloat }
func (String) Type() Type     { return TString }
func (Bytes) Type() Type      { return TBytes }
func (Timestamp) Type() Type  { return TTimestamp }
func (Duration) Type() Type   { return TDuration }
func (LatLng) Type() Type     { return TLatLng }
func (Path) Type() Type       { return TPath }
func (List) Type() Type       { return TList }
func (Map) Type() Type        { return TMap }
func (Set) Type() Type        { return TSet }
func (MapDiff) Type() Type    { return TMapDiff }
func (Constraint) Type() Type { return TConstraint }

// String renders a path as production's string(path) does.
func (p Path) String() string {
	s := strings.Join(p.Segments, "/")
	if p.Absolute {
		return "/" + s
	}
	return s
}

// ParsePath splits a slash-separated path; a leading slash makes it absolute.
func ParsePath(s string) Path {
	p := Path{Absolute: strings.HasPrefix(s, "/")}
	s = strings.Trim(s, "/")
	if s != "" {
		p.Segments = strings.Split(s, "/")
	}
	return p
}

// Keys returns a map's keys in sorted order.
func (m Map) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Is reports whether v satisfies `v is typeName`.
func Is(v Value, typeName string) bool {
	switch typeName {
	case "number":
		t := v.Type()
		return t == TInt || t == TFloat
	case "vector", "set":
		// Google's engine answers false for `x is set` even when x is a
		// set ([1].toSet() is set denies; differential case).
		return false
	}
	return v.Type().String() == typeName
}

// Truthy returns b and true when v is a Bool.
func Truthy(v Value) (b, ok bool) {
	x, ok := v.(Bool)
	return bool(x), ok
}

// FormatFloat renders a float as production's string(float) does (Java's
// Double.toString): 1.0, 0.1, 1.0E8, 1.5E-5, NaN, Infinity.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.5e+08
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// Show renders a value in rules syntax for traces and messages.
func Show(v Value) string {
	var b strings.Builder
	// Sized once for the values path bindings hold (events render them
	// for every decided request).
	switch v := v.(type) {
	case String:
		b.Grow(len(v) + 2)
	case Path:
		n := len("path('/')")
		for _, s := range v.Segments {
			n += len(s) + 1
		}
		b.Grow(n)
	}
	show(&b, v, 0, -1)
	return b.String()
}

// ShowLimit renders a value like Show but stops adding elements once about
// limit bytes are written, ending with "…": traces show every evaluated
// sub-expression, and rendering a whole document at each would dominate
// the cost of a decision.
func ShowLimit(v Value, limit int) string {
	// The common scalars need no builder.
	switch v := v.(type) {
	case Null:
		return "null"
	case Bool:
		if v {
			return "true"
		}
		return "false"
	case Int:
		return strconv.FormatInt(int64(v), 10)
	}
	var b strings.Builder
	if s, ok := v.(String); ok {
		b.Grow(len(s) + 2)
	} else {
		b.Grow(64)
	}
	show(&b, v, 0, limit)
	return b.String()
}

// ShowLimitIn is ShowLimit writing into b, a buffer shared by the values
// of one trace (one allocation for many renderings instead of one each):
// it returns the rendering, a part of b's contents, which later writes to
// b leave as they are. The common scalars are not written to b.
func ShowLimitIn(b *strings.Builder, v Value, limit int) string {
	switch v.(type) {
	case Null, Bool, Int:
		return ShowLimit(v, limit)
	}
	start := b.Len()
	if limit >= 0 {
		// show compares b.Len() with the limit: count from start.
		limit += start
	}
	show(b, v, 0, limit)
	return b.String()[start:]
}

func show(b *strings.Builder, v Value, depth, limit int) {
	if depth > 20 || (limit >= 0 && b.Len() > limit) {
		b.WriteString("…")
		return
	}
	switch v := Plain(v).(type) {
	case nil:
		b.WriteString("<nil>")
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(bool(v)))
	case Int:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case Float:
		b.WriteString(FormatFloat(float64(v)))
	case String:
		writeQuoted(b, string(v))
	case Bytes:
		b.WriteString("b'")
		for i := 0; i < len(v); i++ {
			fmt.Fprintf(b, "\\x%02X", v[i])
		}
		b.WriteString("'")
	case Timestamp:
		b.WriteString("timestamp('" + v.UTC().Format(time.RFC3339Nano) + "')")
	case Duration:
		b.WriteString("duration(" + v.String() + ")")
	case LatLng:
		fmt.Fprintf(b, "latlng(%s, %s)", FormatFloat(v.Lat), FormatFloat(v.Lng))
	case Path:
		b.WriteString("path('")
		if v.Absolute {
			b.WriteByte('/')
		}
		for i, s := range v.Segments {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(s)
		}
		b.WriteString("')")
	case List:
		b.WriteString("[")
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			if limit >= 0 && b.Len() > limit {
				b.WriteString("…")
				break
			}
			show(b, x, depth+1, limit)
		}
		b.WriteString("]")
	case Set:
		b.WriteString("set([")
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			if limit >= 0 && b.Len() > limit {
				b.WriteString("…")
				break
			}
			show(b, x, depth+1, limit)
		}
		b.WriteString("])")
	case Map:
		b.WriteString("{")
		for i, k := range v.Keys() {
			if i > 0 {
				b.WriteString(", ")
			}
			if limit >= 0 && b.Len() > limit {
				b.WriteString("…")
				break
			}
			writeQuoted(b, k)
			b.WriteString(": ")
			show(b, v[k], depth+1, limit)
		}
		b.WriteString("}")
	case MapDiff:
		b.WriteString("map_diff(")
		show(b, v.From, depth+1, limit)
		b.WriteString(", ")
		show(b, v.To, depth+1, limit)
		b.WriteString(")")
	case Constraint:
		b.WriteString("<any value of " + v.Desc() + ">")
	case *Error:
		b.WriteString("error(" + v.Message + ")")
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

// writeQuoted writes quote(s); printable ASCII without a backslash (the
// common case) needs no escaping and no intermediate string.
func writeQuoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			b.WriteString(quote(s))
			return
		}
	}
	b.WriteByte('\'')
	b.WriteString(s)
	b.WriteByte('\'')
}

func quote(s string) string {
	q := strconv.Quote(s)
	return "'" + strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`) + "'"
}

// String renders a duration like 1.5s or -3600s.
func (d Duration) String() string {
	if d.Nanos == 0 {
		return strconv.FormatInt(d.Seconds, 10) + "s"
	}
	sign := ""
	s, n := d.Seconds, int64(d.Nanos)
	if s < 0 || n < 0 {
		sign, s, n = "-", -s, -n
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", n), "0")
	return fmt.Sprintf("%s%d.%ss", sign, s, frac)
}
