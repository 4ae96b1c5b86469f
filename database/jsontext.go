package database

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/pyric/pyric/internal/jsonstr"
)

// This file is the JSON text of the database's values, both ways, without
// reflection: every REST write decodes its body and every write encodes
// its leaves for the log, its response and its capture record, and
// encoding/json's reflection, its decoder's copy of the body and its
// json.Number strings were a good part of a small write's cost.

// maxNesting is encoding/json's limit on nested objects and arrays; the
// database refuses far less deep data (MaxDepth) once decoded, with its
// own error.
const maxNesting = 10000

// parseJSON decodes JSON text b, which must be valid UTF-8, as
// encoding/json decodes into an any, except that a number is a float64
// (a json.Number when it does not fit one, for normalize to refuse). ok
// is false when b is not one JSON value, alone but for white space.
func parseJSON(b []byte) (v any, ok bool) {
	p := jsonParser{b: b}
	p.space()
	v = p.value(0)
	p.space()
	if p.bad || p.i != len(b) {
		return nil, false
	}
	return v, true
}

type jsonParser struct {
	b   []byte
	i   int
	bad bool
	// numbers keeps every number as its text, a json.Number.
	numbers bool
	// wireData makes the data of a websocket request (d.b.d) read its
	// numbers as exactNumber does (ParseWireMessage).
	wireData bool
	// exact, while numbers is false, keeps as a json.Number a number
	// whose text encoding/json would not write back the same.
	exact bool
}

// ParseJSONNumbers decodes JSON text as encoding/json decodes it into an
// any with UseNumber: objects as map[string]any, arrays as []any, numbers
// as json.Number, a lone surrogate escape as U+FFFD. ok is false when
// text is not one JSON value, alone but for white space. Invalid UTF-8 is
// kept as it is, where encoding/json reads U+FFFD: text must be valid
// (a websocket text frame is).
func ParseJSONNumbers(text string) (v any, ok bool) {
	return parseWhole(text, false)
}

// parseWhole reads text as one JSON value, alone but for white space,
// with numbers as json.Number (and, with wireData, a websocket request's
// data's numbers as ParseWireMessage reads them).
func parseWhole(text string, wireData bool) (v any, ok bool) {
	if text == "" {
		return nil, false
	}
	// Read in place: the parser only reads, and every string it returns
	// is a copy.
	p := jsonParser{b: unsafe.Slice(unsafe.StringData(text), len(text)), numbers: true, wireData: wireData}
	p.space()
	v = p.value(0)
	p.space()
	if p.bad || p.i != len(p.b) {
		return nil, false
	}
	return v, true
}

func (p *jsonParser) space() {
	p.i = jsonstr.SkipSpace(p.b, p.i)
}

func (p *jsonParser) fail() any {
	p.bad = true
	return nil
}

// lit consumes the literal s.
func (p *jsonParser) lit(s string) bool {
	i := jsonstr.SkipWord(p.b, p.i, s)
	if i < 0 {
		p.bad = true
		return false
	}
	p.i = i
	return true
}

func (p *jsonParser) value(depth int) any {
	if p.i >= len(p.b) {
		return p.fail()
	}
	switch c := p.b[p.i]; {
	case c == '{' || c == '[':
		if depth == maxNesting {
			return p.fail()
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"':
		s, _ := p.str()
		return s
	case c == 't':
		if p.lit("true") {
			return true
		}
	case c == 'f':
		if p.lit("false") {
			return false
		}
	case c == 'n':
		p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.fail()
	}
	return nil
}

func (p *jsonParser) object(depth int) any {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m
	}
	for !p.bad {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return p.fail()
		}
		k, _ := p.str()
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.fail()
		}
		p.i++
		p.space()
		v := p.wireDataValue(k, depth)
		if p.bad {
			return nil
		}
		m[k] = v // a repeated key keeps its last value, as encoding/json does
		p.space()
		if p.i >= len(p.b) {
			return p.fail()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return m
		default:
			return p.fail()
		}
	}
	return nil
}

func (p *jsonParser) array(depth int) any {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a
	}
	for !p.bad {
		v := p.value(depth)
		if p.bad {
			return nil
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return p.fail()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return a
		default:
			return p.fail()
		}
	}
	return nil
}

// str consumes a string at its opening quote.
func (p *jsonParser) str() (string, bool) {
	end := jsonstr.SkipString(p.b, p.i)
	if end < 0 {
		p.bad = true
		return "", false
	}
	raw := p.b[p.i+1 : end-1]
	p.i = end
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	return unescape(raw), true
}

// unescape decodes the text of a string with escapes, all of them well
// formed (jsonstr.SkipString checked them).
func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch e := raw[i+1]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := jsonstr.Hex4(raw, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				// A lone surrogate is U+FFFD, as encoding/json reads it
				// (DecodeJSON refuses such text before it gets here).
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					lo, _ := jsonstr.Hex4(raw, i+2)
					if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
						i += 6
						out = utf8.AppendRune(out, d)
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, e)
		}
		i += 2
	}
	return string(out)
}

// ParseWireMessage is ParseJSONNumbers of a websocket client message,
// except that the numbers of the data its request carries (the value of
// d.b.d: a set's, an update's, an onDisconnect's) are float64 when
// encoding/json writes that float64 as the very text sent, so that such
// data is in the stored form already and the engine stores it without
// converting a copy (normalize). A number written otherwise ("1.0",
// "1E3", one beyond a float64) stays a json.Number, as the request
// event records the data as sent. Every other number (the request's r,
// a listen's tag and query) is a json.Number, as ParseJSONNumbers reads
// it.
func ParseWireMessage(text string) (v any, ok bool) {
	return parseWhole(text, true)
}

// wireDataValue reads the value of key k of an object at depth, where a
// websocket request's data (d.b.d: the third object's "d") reads its
// numbers exactly (ParseWireMessage).
func (p *jsonParser) wireDataValue(k string, depth int) any {
	if !p.wireData || depth != 3 || k != "d" {
		return p.value(depth)
	}
	p.numbers, p.exact = false, true
	v := p.value(depth)
	p.numbers, p.exact = true, false
	return v
}

// number consumes a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() any {
	b, start := p.b, p.i
	i := jsonstr.SkipNumber(b, start)
	if i < 0 {
		return p.fail()
	}
	p.i = i
	text := b[start:i]
	if p.numbers {
		return json.Number(text)
	}
	if len(text) <= 15 && bytes.IndexAny(text, ".eE") < 0 {
		// Exact in a float64: no parse needed.
		var n int64
		for _, c := range text {
			if c != '-' {
				n = n*10 + int64(c-'0')
			}
		}
		if text[0] == '-' {
			if n == 0 {
				return math.Copysign(0, -1)
			}
			n = -n
		}
		return float64(n)
	}
	// The parse keeps no reference to the text (strconv copies what its
	// errors quote).
	f, err := strconv.ParseFloat(unsafe.String(&text[0], len(text)), 64)
	if err != nil || p.exact && !writesAs(f, text) {
		return json.Number(text)
	}
	return f
}

// ExactNumbers replaces, in place, each json.Number in v (decoded JSON:
// maps, arrays, numbers) that encoding/json writes back as its text by
// that float64, and returns v: what ParseWireMessage reads of a
// request's data, from what encoding/json read with UseNumber.
func ExactNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && writesAs(f, []byte(v)) {
			return f
		}
	case map[string]any:
		for k, c := range v {
			v[k] = ExactNumbers(c)
		}
	case []any:
		for i, c := range v {
			v[i] = ExactNumbers(c)
		}
	}
	return v
}

// writesAs reports whether encoding/json writes f as text.
func writesAs(f float64, text []byte) bool {
	var buf [32]byte
	enc, ok := appendFloat(buf[:0], f)
	return ok && bytes.Equal(enc, text)
}

// appendJSON appends v, a stored value or a value as Plain renders one
// (nil, bool, float64, string, map[string]any, []any), as json.Marshal
// writes it, byte for byte; ok is false for anything else (json.Marshal
// then decides: an error, or its encoding).
func appendJSON(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return jsonstr.Append(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return appendFloat(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		return jsonstr.AppendObject(b, keys, func(b []byte, k string) ([]byte, bool) { return appendJSON(b, x[k]) })
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendJSON(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendFloat writes f as encoding/json writes a float64.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// MarshalValue is json.Marshal of a stored value, or of a value as Plain
// renders one, byte for byte the same, without reflection.
func MarshalValue(v any) ([]byte, error) {
	if b, ok := appendJSON(nil, v); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// AppendValue appends MarshalValue(v) to b.
func AppendValue(b []byte, v any) ([]byte, error) {
	n := len(b)
	if out, ok := appendJSON(b, v); ok {
		return out, nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b[:n], err
	}
	return append(b[:n], enc...), nil
}

// MarshalPlain is MarshalValue(Plain(v)), byte for byte, in one pass over
// v: the value as clients read it (priorities dropped, .value unwrapped,
// array-like nodes as arrays), encoded without first checking, then
// copying, the tree. Every REST read's response is encoded by it. (For a
// stored tree; a nil map below a node that Plain copies would read {}
// there and null here, and the store holds no nil maps.)
func MarshalPlain(v any) ([]byte, error) {
	if b, ok := appendPlain(nil, v); ok {
		return b, nil
	}
	return MarshalValue(Plain(v))
}

// AppendPlain appends MarshalPlain(v) to b.
func AppendPlain(b []byte, v any) ([]byte, error) {
	n := len(b)
	if out, ok := appendPlain(b, v); ok {
		return out, nil
	}
	enc, err := MarshalValue(Plain(v))
	if err != nil {
		return b[:n], err
	}
	return append(b[:n], enc...), nil
}

// appendPlain appends the JSON of Plain(v); ok as appendJSON's.
func appendPlain(b []byte, v any) (_ []byte, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap || m == nil {
		return appendJSON(b, v)
	}
	if lv, has := m[".value"]; has {
		return appendJSON(b, lv)
	}
	var small [16]string
	keys := small[:0]
	var shape arrayShape
	for k := range m {
		if k == ".priority" {
			continue
		}
		keys = append(keys, k)
		shape.add(k)
	}
	if shape.array() {
		b = append(b, '[')
		var num [10]byte
		for i := 0; i <= shape.maxKey; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			c, has := m[string(strconv.AppendInt(num[:0], int64(i), 10))]
			if !has {
				b = append(b, "null"...)
				continue
			}
			if b, ok = appendPlain(b, c); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return jsonstr.AppendObject(b, keys, func(b []byte, k string) ([]byte, bool) { return appendPlain(b, m[k]) })
}
