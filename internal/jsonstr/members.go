package jsonstr

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The functions below walk JSON text that is known to be valid (Valid
// checked the text it is part of); on anything else their result is
// undefined.

// SkipValue returns the index after the valid JSON value at b[i].
func SkipValue(b []byte, i int) int {
	switch c := b[i]; {
	case c == '"':
		return SkipString(b, i)
	case c == '-' || c >= '0' && c <= '9':
		return SkipNumber(b, i)
	case c == 't' || c == 'n':
		return i + 4
	case c == 'f':
		return i + 5
	}
	depth := 0
	for {
		switch b[i] {
		case '"':
			i = SkipString(b, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
}

// Members calls fn with the key (quotes included) and the value of each
// member of the valid JSON object at b[i], in order, and returns the index
// after the object.
func Members(b []byte, i int, fn func(key, value []byte)) int {
	i = SkipSpace(b, i+1)
	for b[i] != '}' {
		end := SkipString(b, i)
		k := b[i:end]
		i = SkipSpace(b, end)
		i = SkipSpace(b, i+1) // the colon
		end = SkipValue(b, i)
		fn(k, b[i:end])
		i = SkipSpace(b, end)
		if b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
	}
	return i + 1
}

// Elements calls fn with each element of the valid JSON array at b[i],
// in order, and returns the index after the array.
func Elements(b []byte, i int, fn func(value []byte)) int {
	i = SkipSpace(b, i+1)
	for b[i] != ']' {
		end := SkipValue(b, i)
		fn(b[i:end])
		i = SkipSpace(b, end)
		if b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
	}
	return i + 1
}

// Unquote returns the string the valid JSON string raw (quotes included)
// holds, as encoding/json decodes it: its bytes when it has no escapes and
// is valid UTF-8, else encoding/json's reading (escapes resolved, bad
// UTF-8 replaced).
func Unquote(raw []byte) string {
	if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in)
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// Value returns the valid JSON value raw (a value Members or Elements
// gave) as encoding/json decodes it into an any with UseNumber: numbers
// as json.Number. Literals, strings, numbers and an empty object are read
// directly; other objects and arrays go through encoding/json.
func Value(raw []byte) any {
	switch raw[0] {
	case '"':
		return Unquote(raw)
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	case '{':
		if SkipSpace(raw, 1) == len(raw)-1 {
			return map[string]any{}
		}
	case '[':
	default:
		return json.Number(raw)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	d.Decode(&v)
	return v
}
