package rtdb

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Runtime values of rule expressions: nil (null), bool, float64, string,
// objectValue (val() of a node with children), *snapshot, map[string]any
// (auth and its claims), []any (an array literal or a claim list) and
// *regexp.Regexp (the argument of matches()).
//
// Numbers are float64, as in JavaScript. Numbers read from a tree or a claim
// in any other Go representation (json.Number, int, …) are converted when
// read.

// snapshot is a RuleDataSnapshot: the tree it belongs to and a location.
type snapshot struct {
	root any
	path []string
	val  any
}

func (s *snapshot) child(keys []string) *snapshot {
	p := make([]string, 0, len(s.path)+len(keys))
	p = append(append(p, s.path...), keys...)
	return &snapshot{root: s.root, path: p, val: lookup(s.val, keys)}
}

// norm converts a value read from a tree or a claim to its runtime form.
func norm(v any) any {
	switch v.(type) {
	case nil, bool, string, float64, map[string]any, []any:
		return v
	}
	if f, ok := toFloat(v); ok {
		return f
	}
	return v
}

// typeName names a runtime value's type for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case objectValue:
		return "object"
	case *snapshot:
		return "snapshot"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case *regexp.Regexp:
		return "regular expression"
	}
	return "value"
}

// strictEqual is JavaScript's ===.
func strictEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	}
	// Objects are equal only to themselves, and rules can't hold the same
	// object twice.
	return false
}

// looseEqual is JavaScript's == over the values rules can hold.
func looseEqual(a, b any) bool {
	a, b = toPrimitive(a), toPrimitive(b)
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case bool:
		if _, ok := b.(bool); ok {
			return strictEqual(a, b)
		}
		return looseEqual(boolNumber(x), b)
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y
		case string:
			return x == jsToNumber(y)
		case bool:
			return x == boolNumber(y)
		}
	case string:
		switch y := b.(type) {
		case string:
			return x == y
		case float64:
			return jsToNumber(x) == y
		case bool:
			return jsToNumber(x) == boolNumber(y)
		}
	}
	return false
}

// toPrimitive is JavaScript's ToPrimitive for objects: "[object Object]".
func toPrimitive(v any) any {
	switch v.(type) {
	case objectValue, map[string]any:
		return "[object Object]"
	}
	return v
}

func boolNumber(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var jsNumberRe = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// jsToNumber is JavaScript's Number(string).
func jsToNumber(s string) float64 {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return 0
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		n, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	}
	if !jsNumberRe.MatchString(s) {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// jsNumberString is JavaScript's String(number).
func jsNumberString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[:1]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + sign + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsString is JavaScript's String(v) for primitives, used by + when either
// side is a string.
func jsString(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "null", true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return jsNumberString(v), true
	case string:
		return v, true
	case objectValue:
		return "[object Object]", true
	}
	return "", false
}

// compareStrings orders strings by UTF-16 code units, as JavaScript does.
func compareStrings(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// jsLength is String.prototype.length: UTF-16 code units.
func jsLength(s string) float64 {
	if isASCII(s) {
		return float64(len(s))
	}
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return float64(n)
}

// formatValue prints a runtime value in rules syntax for traces.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return jsNumberString(v)
	case string:
		return quote(v)
	case objectValue:
		return "[object]"
	case *snapshot:
		return "snapshot(" + joinPath(v.path) + ")"
	case *regexp.Regexp:
		return "/" + v.String() + "/"
	case map[string]any, []any:
		b, err := json.Marshal(sortedJSON(v))
		if err != nil {
			return "{…}"
		}
		return string(b)
	}
	return "?"
}

// sortedJSON makes map output deterministic (encoding/json already sorts
// map keys; this only guards against values it can't encode).
func sortedJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(v))
		for _, k := range keys {
			out[k] = sortedJSON(v[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = sortedJSON(e)
		}
		return out
	case nil, bool, string, float64, json.Number:
		return v
	}
	if f, ok := toFloat(v); ok {
		return f
	}
	return nil
}

func quote(s string) string {
	var b strings.Builder
	writeQuoted(&b, s)
	return b.String()
}

// writeQuoted writes s as a single-quoted rules string.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(r)>>4, 16))
				b.WriteString(strconv.FormatInt(int64(r)&15, 16))
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
}
