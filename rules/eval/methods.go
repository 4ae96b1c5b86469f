package eval

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/value"
)

// lookupMethod finds a method of the receiver's type. A method the type
// doesn't have is production's "Function not found error" — which is also
// what list.difference() and map.hasAll() give.
func (s *stdlib) lookupMethod(recv value.Value, name string) (MethodFunc, bool) {
	m, ok := s.methods[recv.Type()][name]
	return m, ok
}

func sizeMethod(recv value.Value, args []value.Value) value.Value {
	if err := arity("size", args, 0); err != nil {
		return err
	}
	switch v := recv.(type) {
	case value.String:
		return value.Int(len([]rune(string(v))))
	case value.Bytes:
		return value.Int(len(v))
	case value.List:
		return value.Int(len(v))
	case value.Map:
		return value.Int(len(v))
	case value.Record:
		return value.Int(len(v.Map()))
	case value.Set:
		return value.Int(len(v))
	}
	return value.ErrFunctionNotFound("size")
}

func recvCall(recv value.Value, name string, args []value.Value, expected string) *value.Error {
	return value.ErrUnsupportedOp(recv.Type().String()+"."+name+"("+typeList(args)+")", expected)
}

// collection returns the elements of a list or set argument.
func collection(v value.Value) ([]value.Value, bool) {
	switch v := v.(type) {
	case value.List:
		return v, true
	case value.Set:
		return v, true
	}
	return nil, false
}

// modeOf is the element equality of a collection: strict for lists,
// numeric for sets (see value.Strict).
func modeOf(v value.Value) bool {
	_, isSet := v.(value.Set)
	return isSet
}

// hasMethods are hasAll, hasAny and hasOnly for lists and sets. Each runs
// in linear time over both collections through a hashed index; the
// receiver's kind decides the element equality ([1].hasAll([1.0]) is
// false, [1].toSet().hasAll([1.0]) is true in Google's engine).
func hasMethod(name string) MethodFunc {
	return func(recv value.Value, args []value.Value) value.Value {
		if err := arity(name, args, 1); err != nil {
			return err
		}
		self, _ := collection(recv)
		other, ok := collection(args[0])
		if !ok {
			return recvCall(recv, name, args, recv.Type().String()+"."+name+"("+recv.Type().String()+")")
		}
		mode := modeOf(recv)
		switch name {
		case "hasAll":
			if len(other) == 0 {
				return value.Bool(true)
			}
			ix := value.NewIndex(self, mode)
			for _, x := range other {
				if !ix.Has(x) {
					return value.Bool(false)
				}
			}
			return value.Bool(true)
		case "hasAny":
			if len(other) == 0 || len(self) == 0 {
				return value.Bool(false)
			}
			ix := value.NewIndex(self, mode)
			for _, x := range other {
				if ix.Has(x) {
					return value.Bool(true)
				}
			}
			return value.Bool(false)
		default: // hasOnly
			if len(self) == 0 {
				return value.Bool(true)
			}
			ix := value.NewIndex(other, mode)
			for _, x := range self {
				if !ix.Has(x) {
					return value.Bool(false)
				}
			}
			return value.Bool(true)
		}
	}
}

// setAlgebra is difference, union and intersection; the argument must be a
// set ("Received: set.difference(list). Expected: set.difference(set).").
// Each is linear through a hashed index.
func setAlgebra(name string) MethodFunc {
	return func(recv value.Value, args []value.Value) value.Value {
		if err := arity(name, args, 1); err != nil {
			return err
		}
		self := recv.(value.Set)
		other, ok := args[0].(value.Set)
		if !ok {
			return recvCall(recv, name, args, "set."+name+"(set)")
		}
		var out []value.Value
		switch name {
		case "difference":
			ix := value.NewIndex(other, value.Numeric)
			for _, x := range self {
				if !ix.Has(x) {
					out = append(out, x)
				}
			}
		case "union":
			out = append(append(out, self...), other...)
		case "intersection":
			ix := value.NewIndex(other, value.Numeric)
			for _, x := range self {
				if ix.Has(x) {
					out = append(out, x)
				}
			}
		}
		return value.NewSet(out)
	}
}

func stringArg(recv value.Value, name string, args []value.Value, n int, expected string) ([]string, *value.Error) {
	if err := arity(name, args, n); err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i, a := range args {
		s, ok := a.(value.String)
		if !ok {
			return nil, recvCall(recv, name, args, expected)
		}
		out[i] = string(s)
	}
	return out, nil
}

func tsMethod(name string, f func(t time.Time) value.Value) MethodFunc {
	return func(recv value.Value, args []value.Value) value.Value {
		if err := arity(name, args, 0); err != nil {
			return err
		}
		return f(recv.(value.Timestamp).UTC())
	}
}

func diffKeys(name string, f func(d value.MapDiff, k string, inFrom, inTo bool) bool) MethodFunc {
	return func(recv value.Value, args []value.Value) value.Value {
		if err := arity(name, args, 0); err != nil {
			return err
		}
		d := recv.(value.MapDiff)
		keys := map[string]bool{}
		for k := range d.From {
			keys[k] = true
		}
		for k := range d.To {
			keys[k] = true
		}
		var out []value.Value
		for _, k := range value.Map(toAny(keys)).Keys() {
			_, inFrom := d.From[k]
			_, inTo := d.To[k]
			if f(d, k, inFrom, inTo) {
				out = append(out, value.String(k))
			}
		}
		return value.NewSet(out)
	}
}

func toAny(keys map[string]bool) map[string]value.Value {
	m := make(map[string]value.Value, len(keys))
	for k := range keys {
		m[k] = value.Null{}
	}
	return m
}

// The standard methods, by receiver type (declared in Standard).

func strLower(recv value.Value, args []value.Value) value.Value {
	if err := arity("lower", args, 0); err != nil {
		return err
	}
	return value.String(lowerUpper(string(recv.(value.String)), false))
}

func strUpper(recv value.Value, args []value.Value) value.Value {
	if err := arity("upper", args, 0); err != nil {
		return err
	}
	return value.String(lowerUpper(string(recv.(value.String)), true))
}

func strTrim(recv value.Value, args []value.Value) value.Value {
	if err := arity("trim", args, 0); err != nil {
		return err
	}
	return value.String(javaTrim(string(recv.(value.String))))
}

func strToUtf8(recv value.Value, args []value.Value) value.Value {
	if err := arity("toUtf8", args, 0); err != nil {
		return err
	}
	return value.Bytes(recv.(value.String))
}

func strMatches(recv value.Value, args []value.Value) value.Value {
	s, err := stringArg(recv, "matches", args, 1, "string.matches(string)")
	if err != nil {
		return err
	}
	re, rerr := compileAnchored(s[0])
	if rerr != nil {
		return value.Errorf("Invalid regular expression pattern. Pattern: %s.", s[0])
	}
	return value.Bool(re.MatchString(string(recv.(value.String))))
}

func strSplit(recv value.Value, args []value.Value) value.Value {
	s, err := stringArg(recv, "split", args, 1, "string.split(string)")
	if err != nil {
		return err
	}
	re, rerr := compileRegex(s[0])
	if rerr != nil {
		return rerr
	}
	parts := javaSplit(string(recv.(value.String)), re)
	out := make(value.List, len(parts))
	for i, p := range parts {
		out[i] = value.String(p)
	}
	return out
}

func strReplace(recv value.Value, args []value.Value) value.Value {
	s, err := stringArg(recv, "replace", args, 2, "string.replace(string, string)")
	if err != nil {
		return err
	}
	re, rerr := compileRegex(s[0])
	if rerr != nil {
		return rerr
	}
	return value.String(re.ReplaceAllString(string(recv.(value.String)), s[1]))
}

var (
	listHasAll  MethodFunc = hasMethod("hasAll")
	listHasAny  MethodFunc = hasMethod("hasAny")
	listHasOnly MethodFunc = hasMethod("hasOnly")
)

func listToSet(recv value.Value, args []value.Value) value.Value {
	if err := arity("toSet", args, 0); err != nil {
		return err
	}
	return value.NewSet(recv.(value.List))
}

func listJoin(recv value.Value, args []value.Value) value.Value {
	if len(args) == 0 {
		// Google's engine compiles join() without a separator and
		// fails when it runs (differential case "['a', 'b'].join()").
		return value.Errorf("Incorrect number of arguments. Received: 0. Expected: list.join(string).")
	}
	s, err := stringArg(recv, "join", args, 1, "list.join(string)")
	if err != nil {
		return err
	}
	list := recv.(value.List)
	parts := make([]string, len(list))
	for i, x := range list {
		switch x.(type) {
		case value.String, value.Int, value.Float, value.Bool, value.Null:
			parts[i] = toString(x)
		default:
			return recvCall(recv, "join", args, "list.join(string) on a list of strings")
		}
	}
	return value.String(strings.Join(parts, s[0]))
}

func listConcat(recv value.Value, args []value.Value) value.Value {
	if err := arity("concat", args, 1); err != nil {
		return err
	}
	other, ok := args[0].(value.List)
	if !ok {
		return recvCall(recv, "concat", args, "list.concat(list)")
	}
	return append(append(value.List(nil), recv.(value.List)...), other...)
}

func listRemoveAll(recv value.Value, args []value.Value) value.Value {
	if err := arity("removeAll", args, 1); err != nil {
		return err
	}
	other, ok := collection(args[0])
	if !ok {
		return recvCall(recv, "removeAll", args, "list.removeAll(list)")
	}
	out := value.List{}
	ix := value.NewIndex(other, value.Strict)
	for _, x := range recv.(value.List) {
		if !ix.Has(x) {
			out = append(out, x)
		}
	}
	return out
}

var (
	setHasAll       MethodFunc = hasMethod("hasAll")
	setHasAny       MethodFunc = hasMethod("hasAny")
	setHasOnly      MethodFunc = hasMethod("hasOnly")
	setDifference   MethodFunc = setAlgebra("difference")
	setUnion        MethodFunc = setAlgebra("union")
	setIntersection MethodFunc = setAlgebra("intersection")
)

func mapKeys(recv value.Value, args []value.Value) value.Value {
	if err := arity("keys", args, 0); err != nil {
		return err
	}
	m, _ := value.AsMap(recv)
	// The keys boxed in place, with the list in one allocation when
	// short.
	keys, out, v := value.MakeStringList(len(m))
	keys = keys[:0]
	for k := range m {
		keys = append(keys, value.String(k))
	}
	slices.Sort(keys)
	for i := range keys {
		out[i] = value.BoxString(&keys[i])
	}
	return v
}

func mapValues(recv value.Value, args []value.Value) value.Value {
	if err := arity("values", args, 0); err != nil {
		return err
	}
	m, _ := value.AsMap(recv)
	keys := m.Keys()
	out := make(value.List, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

func mapGet(recv value.Value, args []value.Value) value.Value {
	if err := arity("get", args, 2); err != nil {
		return err
	}
	m, _ := value.AsMap(recv)
	switch k := args[0].(type) {
	case value.String:
		if v, ok := m[string(k)]; ok {
			return v
		}
		return args[1]
	case value.List:
		var cur value.Value = m
		for _, seg := range k {
			s, ok := seg.(value.String)
			if !ok {
				return recvCall(recv, "get", args, "map.get(string, any), map.get(list<string>, any)")
			}
			cm, ok := value.AsMap(cur)
			if !ok {
				return args[1]
			}
			next, ok := cm[string(s)]
			if !ok {
				return args[1]
			}
			cur = next
		}
		return cur
	}
	return recvCall(recv, "get", args, "map.get(string, any), map.get(list<string>, any)")
}

func mapDiff(recv value.Value, args []value.Value) value.Value {
	if err := arity("diff", args, 1); err != nil {
		return err
	}
	other, ok := value.AsMap(args[0])
	if !ok {
		return recvCall(recv, "diff", args, "map.diff(map)")
	}
	// a.diff(b) describes how b became a: addedKeys are in a but not b.
	to, _ := value.AsMap(recv)
	return value.MapDiff{From: other, To: to}
}

var (
	diffAddedKeys   MethodFunc = diffKeys("addedKeys", func(_ value.MapDiff, _ string, inFrom, inTo bool) bool { return !inFrom && inTo })
	diffRemovedKeys MethodFunc = diffKeys("removedKeys", func(_ value.MapDiff, _ string, inFrom, inTo bool) bool { return inFrom && !inTo })
)

var diffChangedKeys MethodFunc = diffKeys("changedKeys", func(d value.MapDiff, k string, inFrom, inTo bool) bool {
	return inFrom && inTo && !value.Equal(d.From[k], d.To[k])
})

var diffAffectedKeys MethodFunc = diffKeys("affectedKeys", func(d value.MapDiff, k string, inFrom, inTo bool) bool {
	return inFrom != inTo || !value.Equal(d.From[k], d.To[k])
})

var diffUnchangedKeys MethodFunc = diffKeys("unchangedKeys", func(d value.MapDiff, k string, inFrom, inTo bool) bool {
	return inFrom && inTo && value.Equal(d.From[k], d.To[k])
})

func bytesToBase64(recv value.Value, args []value.Value) value.Value {
	if err := arity("toBase64", args, 0); err != nil {
		return err
	}
	return value.String(bytesBase64(recv.(value.Bytes)))
}

func bytesToHexString(recv value.Value, args []value.Value) value.Value {
	if err := arity("toHexString", args, 0); err != nil {
		return err
	}
	return value.String(bytesHex(recv.(value.Bytes)))
}

func pathBind(recv value.Value, args []value.Value) value.Value {
	if err := arity("bind", args, 1); err != nil {
		return err
	}
	m, ok := value.AsMap(args[0])
	if !ok {
		return recvCall(recv, "bind", args, "path.bind(map)")
	}
	p := recv.(value.Path)
	out := value.Path{Absolute: p.Absolute, Segments: make([]string, len(p.Segments))}
	for i, seg := range p.Segments {
		out.Segments[i] = seg
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name := strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}")
			name = strings.TrimSuffix(name, "=**")
			if v, ok := m[name]; ok {
				out.Segments[i] = toString(v)
			}
		}
	}
	return out
}

var (
	tsYear    MethodFunc = tsMethod("year", func(t time.Time) value.Value { return value.Int(t.Year()) })
	tsMonth   MethodFunc = tsMethod("month", func(t time.Time) value.Value { return value.Int(t.Month()) })
	tsDay     MethodFunc = tsMethod("day", func(t time.Time) value.Value { return value.Int(t.Day()) })
	tsHours   MethodFunc = tsMethod("hours", func(t time.Time) value.Value { return value.Int(t.Hour()) })
	tsMinutes MethodFunc = tsMethod("minutes", func(t time.Time) value.Value { return value.Int(t.Minute()) })
	tsSeconds MethodFunc = tsMethod("seconds", func(t time.Time) value.Value { return value.Int(t.Second()) })
	tsNanos   MethodFunc = tsMethod("nanos", func(t time.Time) value.Value { return value.Int(t.Nanosecond()) })
)

var tsDayOfWeek MethodFunc = tsMethod("dayOfWeek", func(t time.Time) value.Value {
	wd := int(t.Weekday()) // Sunday = 0
	if wd == 0 {
		wd = 7
	}
	return value.Int(wd)
})

var (
	tsDayOfYear MethodFunc = tsMethod("dayOfYear", func(t time.Time) value.Value { return value.Int(t.YearDay()) })
	tsToMillis  MethodFunc = tsMethod("toMillis", func(t time.Time) value.Value { return value.Int(t.UnixMilli()) })
)

var tsDate MethodFunc = tsMethod("date", func(t time.Time) value.Value {
	return value.Timestamp{Time: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)}
})

var tsTime MethodFunc = tsMethod("time", func(t time.Time) value.Value {
	midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	d := t.Sub(midnight)
	return value.NewDuration(int64(d/time.Second), int64(d%time.Second))
})

func durSeconds(recv value.Value, args []value.Value) value.Value {
	if err := arity("seconds", args, 0); err != nil {
		return err
	}
	return value.Int(recv.(value.Duration).Seconds)
}

func durNanos(recv value.Value, args []value.Value) value.Value {
	if err := arity("nanos", args, 0); err != nil {
		return err
	}
	return value.Int(recv.(value.Duration).Nanos)
}

func geoLatitude(recv value.Value, args []value.Value) value.Value {
	if err := arity("latitude", args, 0); err != nil {
		return err
	}
	return value.Float(recv.(value.LatLng).Lat)
}

func geoLongitude(recv value.Value, args []value.Value) value.Value {
	if err := arity("longitude", args, 0); err != nil {
		return err
	}
	return value.Float(recv.(value.LatLng).Lng)
}

func geoDistance(recv value.Value, args []value.Value) value.Value {
	if err := arity("distance", args, 1); err != nil {
		return err
	}
	other, ok := args[0].(value.LatLng)
	if !ok {
		return recvCall(recv, "distance", args, "latlng.distance(latlng)")
	}
	return value.Float(haversine(recv.(value.LatLng), other))
}

// haversine returns the great-circle distance in metres.
func haversine(a, b value.LatLng) float64 {
	const earthRadius = 6371008.8
	rad := math.Pi / 180
	dLat := (b.Lat - a.Lat) * rad
	dLng := (b.Lng - a.Lng) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(a.Lat*rad)*math.Cos(b.Lat*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(h)))
}
