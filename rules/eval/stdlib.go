package eval

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/rules/value"
)

// typeList renders argument types for "Received: f(int, string)".
func typeList(args []value.Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Type().String()
	}
	return strings.Join(parts, ", ")
}

func badCall(name string, args []value.Value, expected string) *value.Error {
	return value.ErrUnsupportedOp(name+"("+typeList(args)+")", expected)
}

func arity(name string, args []value.Value, n int) *value.Error {
	if len(args) != n {
		return value.Errorf("Incorrect number of arguments supplied to function: %s.", name)
	}
	return nil
}

// The standard functions called by bare name (declared in Standard).
// bool() and debug() are deliberately absent: production's Rules Test
// API answers "Function not found error" for both (the emulator knows
// debug()).

func fnString(args []value.Value) value.Value {
	if err := arity("string", args, 1); err != nil {
		return err
	}
	switch a := args[0].(type) {
	case value.Int, value.Float, value.Null, value.String, value.Bool:
		return value.String(toString(a))
	case value.Path:
		if a.Partial {
			return value.ErrPartialPath()
		}
		return value.String(a.String())
	}
	return badCall("string", args, "string(int), string(float), string(null), string(string), string(bool), string(path)")
}

func fnInt(args []value.Value) value.Value {
	if err := arity("int", args, 1); err != nil {
		return err
	}
	switch a := args[0].(type) {
	case value.Int:
		return a
	case value.Float:
		return value.Int(javaLong(float64(a))) // truncates toward zero: int(-1.9) == -1
	case value.String:
		s := string(a)
		if !intPattern.MatchString(s) {
			return value.ErrConversion(s, value.TString, "int")
		}
		i, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
		if err != nil {
			return value.ErrConversion(s, value.TString, "int")
		}
		return value.Int(i)
	}
	return badCall("int", args, "int(int), int(float), int(string)")
}

func fnFloat(args []value.Value) value.Value {
	if err := arity("float", args, 1); err != nil {
		return err
	}
	switch a := args[0].(type) {
	case value.Float:
		return a
	case value.Int:
		return value.Float(float64(a))
	case value.String:
		s := string(a)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !floatSpecial(s) {
			return value.ErrConversion(s, value.TString, "float")
		}
		switch s {
		case "NaN":
			f = math.NaN()
		case "Infinity", "+Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		}
		return value.Float(f)
	}
	return badCall("float", args, "float(int), float(float), float(string)")
}

func fnPath(args []value.Value) value.Value {
	if err := arity("path", args, 1); err != nil {
		return err
	}
	s, ok := args[0].(value.String)
	if !ok {
		return badCall("path", args, "path(string)")
	}
	if s == "" {
		return value.Errorf("Empty Path Template is not allowed.")
	}
	return value.ParsePath(string(s))
}

var intPattern = regexp.MustCompile(`^[+-]?[0-9]+$`)

func floatSpecial(s string) bool {
	return s == "NaN" || s == "Infinity" || s == "+Infinity" || s == "-Infinity"
}

// toString renders scalars as production's string() does.
func toString(v value.Value) string {
	switch v := v.(type) {
	case value.Int:
		return strconv.FormatInt(int64(v), 10)
	case value.Float:
		return value.FormatFloat(float64(v))
	case value.Null:
		return "null"
	case value.String:
		return string(v)
	case value.Bool:
		return strconv.FormatBool(bool(v))
	case value.Path:
		return v.String()
	}
	return value.Show(v)
}

func num(v value.Value) (float64, bool) {
	switch v := v.(type) {
	case value.Int:
		return float64(v), true
	case value.Float:
		return float64(v), true
	}
	return 0, false
}

// The standard library's namespaced functions (declared in Standard).

func fnMathAbs(args []value.Value) value.Value {
	if err := arity("math.abs", args, 1); err != nil {
		return err
	}
	switch a := args[0].(type) {
	case value.Int:
		if a == math.MinInt64 {
			return value.ErrIntRange()
		}
		if a < 0 {
			return -a
		}
		return a
	case value.Float:
		return value.Float(math.Abs(float64(a)))
	}
	return badCall("math.abs", args, "math.abs(int), math.abs(float)")
}

// ceil and floor return floats; round returns an int, half rounding
// up as Java's Math.round does (math.round(-1.5) == -1).
var (
	fnMathCeil  Builtin = roundFn("math.ceil", math.Ceil, false)
	fnMathFloor Builtin = roundFn("math.floor", math.Floor, false)
	fnMathRound Builtin = roundFn("math.round", func(f float64) float64 { return math.Floor(f + 0.5) }, true)
)

func fnMathSqrt(args []value.Value) value.Value {
	if err := arity("math.sqrt", args, 1); err != nil {
		return err
	}
	f, ok := num(args[0])
	if !ok {
		return badCall("math.sqrt", args, "math.sqrt(float)")
	}
	return value.Float(math.Sqrt(f))
}

func fnMathPow(args []value.Value) value.Value {
	if err := arity("math.pow", args, 2); err != nil {
		return err
	}
	b, ok1 := num(args[0])
	x, ok2 := num(args[1])
	if !ok1 || !ok2 {
		return badCall("math.pow", args, "math.pow(float, float)")
	}
	return value.Float(math.Pow(b, x))
}

func fnMathIsNaN(args []value.Value) value.Value {
	if err := arity("math.isNaN", args, 1); err != nil {
		return err
	}
	switch a := args[0].(type) {
	case value.Float:
		return value.Bool(math.IsNaN(float64(a)))
	case value.Int:
		return value.Bool(false)
	}
	return badCall("math.isNaN", args, "math.isNaN(float)")
}

func fnTimestampDate(args []value.Value) value.Value {
	if err := arity("timestamp.date", args, 3); err != nil {
		return err
	}
	y, ok1 := args[0].(value.Int)
	m, ok2 := args[1].(value.Int)
	d, ok3 := args[2].(value.Int)
	if !ok1 || !ok2 || !ok3 {
		return badCall("timestamp.date", args, "timestamp.date(int, int, int)")
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return value.Errorf("Invalid date: %d-%d-%d.", y, m, d)
	}
	t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if t.Day() != int(d) {
		return value.Errorf("Invalid date: %d-%d-%d.", y, m, d)
	}
	return value.NewTimestamp(t)
}

func fnTimestampValue(args []value.Value) value.Value {
	if err := arity("timestamp.value", args, 1); err != nil {
		return err
	}
	ms, ok := args[0].(value.Int)
	if !ok {
		return badCall("timestamp.value", args, "timestamp.value(int)")
	}
	return value.NewTimestamp(time.UnixMilli(int64(ms)))
}

func fnDurationValue(args []value.Value) value.Value {
	if err := arity("duration.value", args, 2); err != nil {
		return err
	}
	unit, ok := args[1].(value.String)
	i, isInt := args[0].(value.Int)
	if !ok || !isInt {
		return badCall("duration.value", args, "duration.value(int, string)")
	}
	scale, known := durationUnits[string(unit)]
	if !known {
		return value.Errorf("Invalid duration unit: %s. Expected one of w, d, h, m, s, ms, ns.", unit)
	}
	n := int64(i)
	if scale >= 1e9 {
		per := scale / 1e9
		if n > math.MaxInt64/per || n < math.MinInt64/per {
			return value.Errorf("Duration value is out of range.")
		}
		return value.NewDuration(n*per, 0)
	}
	per := int64(1e9) / scale
	return value.NewDuration(n/per, n%per*scale)
}

func fnDurationTime(args []value.Value) value.Value {
	if err := arity("duration.time", args, 4); err != nil {
		return err
	}
	var parts [4]int64
	for i, a := range args {
		v, ok := a.(value.Int)
		if !ok {
			return badCall("duration.time", args, "duration.time(int, int, int, int)")
		}
		parts[i] = int64(v)
	}
	return value.NewDuration(parts[0]*3600+parts[1]*60+parts[2], parts[3])
}

func fnDurationAbs(args []value.Value) value.Value {
	if err := arity("duration.abs", args, 1); err != nil {
		return err
	}
	d, ok := args[0].(value.Duration)
	if !ok {
		return badCall("duration.abs", args, "duration.abs(duration)")
	}
	if d.Seconds < 0 || d.Nanos < 0 {
		return value.Duration{Seconds: -d.Seconds, Nanos: -d.Nanos}
	}
	return d
}

func fnLatlngValue(args []value.Value) value.Value {
	if err := arity("latlng.value", args, 2); err != nil {
		return err
	}
	lat, ok1 := num(args[0])
	lng, ok2 := num(args[1])
	if !ok1 || !ok2 {
		return badCall("latlng.value", args, "latlng.value(float, float)")
	}
	if !(lat >= -90 && lat <= 90 && lng >= -180 && lng <= 180) {
		return value.Errorf("Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: %s, longitude: %s.", value.FormatFloat(lat), value.FormatFloat(lng))
	}
	return value.LatLng{Lat: lat, Lng: lng}
}

var (
	fnHashingMd5    Builtin = hashFn("hashing.md5", func(b []byte) []byte { s := md5.Sum(b); return s[:] })
	fnHashingSha256 Builtin = hashFn("hashing.sha256", func(b []byte) []byte { s := sha256.Sum256(b); return s[:] })
)

// CRC checksums are serialised little-endian, as production does:
// crc32('123456789') is 0xCBF43926, shown as 2639F4CB.
var fnHashingCrc32 Builtin = hashFn("hashing.crc32", func(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(b))
})

var fnHashingCrc32c Builtin = hashFn("hashing.crc32c", func(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
})

var durationUnits = map[string]int64{"w": 7 * 24 * 3600e9, "d": 24 * 3600e9, "h": 3600e9, "m": 60e9, "s": 1e9, "ms": 1e6, "ns": 1}

func roundFn(name string, f func(float64) float64, toInt bool) Builtin {
	return func(args []value.Value) value.Value {
		if err := arity(name, args, 1); err != nil {
			return err
		}
		switch a := args[0].(type) {
		case value.Int:
			// math.ceil(1) and math.floor(1) are floats in Google's
			// engine (math.ceil(1) is int is false; differential case);
			// math.round(1) stays an int.
			if toInt {
				return a
			}
			return value.Float(a)
		case value.Float:
			if toInt {
				return value.Int(javaLong(f(float64(a))))
			}
			return value.Float(f(float64(a)))
		}
		return badCall(name, args, name+"(float)")
	}
}

// javaLong converts like Java's (long) cast: NaN is 0 and out-of-range
// values saturate, so int(1.0 / 0.0) is the largest int.
func javaLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= 9.223372036854775807e18:
		return math.MaxInt64
	case f <= -9.223372036854775808e18:
		return math.MinInt64
	}
	return int64(f)
}

func hashFn(name string, h func([]byte) []byte) Builtin {
	return func(args []value.Value) value.Value {
		if err := arity(name, args, 1); err != nil {
			return err
		}
		switch a := args[0].(type) {
		case value.String:
			return value.Bytes(h([]byte(a)))
		case value.Bytes:
			return value.Bytes(h([]byte(a)))
		}
		return badCall(name, args, name+"(bytes), "+name+"(string)")
	}
}

// regexes caches compiled patterns (nil: the pattern does not compile),
// by the pattern as written and whether matches() anchored it, so a call
// compiles nothing, and builds no "^(?:…)$" string, once its pattern is
// known. Patterns can come from data (a rule matching one field against
// another's value), so the cache is bounded: past regexCacheMax patterns
// it starts over.
var regexes struct {
	sync.RWMutex
	m map[regexKey]*regexp.Regexp
}

type regexKey struct {
	pattern  string
	anchored bool // compiled as "^(?:" + pattern + ")$"
}

const regexCacheMax = 4096

// compileAnchored is compileRegex of "^(?:" + pattern + ")$": the whole
// string must match, as matches() requires.
func compileAnchored(pattern string) (*regexp.Regexp, *value.Error) {
	return cachedRegex(regexKey{pattern, true})
}

// compileRegex compiles an RE2 pattern, caching results.
func compileRegex(pattern string) (*regexp.Regexp, *value.Error) {
	return cachedRegex(regexKey{pattern, false})
}

func cachedRegex(k regexKey) (*regexp.Regexp, *value.Error) {
	regexes.RLock()
	re, ok := regexes.m[k]
	regexes.RUnlock()
	if !ok {
		src := k.pattern
		if k.anchored {
			src = "^(?:" + k.pattern + ")$"
		}
		re, _ = regexp.Compile(src)
		regexes.Lock()
		if regexes.m == nil || len(regexes.m) >= regexCacheMax {
			regexes.m = map[regexKey]*regexp.Regexp{}
		}
		regexes.m[k] = re
		regexes.Unlock()
	}
	if re == nil {
		if k.anchored {
			return nil, value.Errorf("Invalid regular expression pattern. Pattern: ^(?:%s)$.", k.pattern)
		}
		return nil, value.Errorf("Invalid regular expression pattern. Pattern: %s.", k.pattern)
	}
	return re, nil
}

// javaSplit splits s around regex matches the way production's RE2/J
// split with limit 0 does: empty strings between matches are kept, a
// zero-width match at the start yields a leading empty string ('abc'
// split on ” has 4 parts), trailing empty strings are dropped, and a
// result that would be empty is [""] (measured on the emulator).
func javaSplit(s string, re *regexp.Regexp) []string {
	var out []string
	emptiesSkipped, last := 0, 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if last == m[0] {
			emptiesSkipped++
			last = m[1]
			continue
		}
		for ; emptiesSkipped > 0; emptiesSkipped-- {
			out = append(out, "")
		}
		out = append(out, s[last:m[0]])
		last = m[1]
	}
	if last != len(s) {
		for ; emptiesSkipped > 0; emptiesSkipped-- {
			out = append(out, "")
		}
		out = append(out, s[last:])
	}
	if len(out) == 0 {
		out = append(out, s[last:])
	}
	return out
}

func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// lowerUpper changes the case of ASCII letters only: production leaves
// other letters alone ('ÉtÉ'.lower() == 'ÉtÉ', measured on the emulator).
func lowerUpper(s string, upper bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case upper && 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case !upper && 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

func bytesBase64(b value.Bytes) string { return base64.URLEncoding.EncodeToString([]byte(b)) }

func bytesHex(b value.Bytes) string { return strings.ToUpper(hex.EncodeToString([]byte(b))) }
