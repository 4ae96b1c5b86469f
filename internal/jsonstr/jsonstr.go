// Package jsonstr is JSON text without reflection, for the code that
// writes and reads it by hand: it appends JSON strings exactly as
// encoding/json writes them by default (HTML-safe: <, > and & escaped),
// checks a text as encoding/json.Valid does, scans JSON's tokens (white
// space, strings, numbers, literals) for hand-written parsers, and walks
// a valid text's objects and arrays (Members, Elements) for decoders that
// read only what they need.
package jsonstr

import (
	"encoding/json"
	"slices"
)

// Append appends s quoted.
func Append(b []byte, s string) []byte {
	return append(AppendChars(append(b, '"'), s), '"')
}

// AppendChars appends s escaped, without the quotes. Printable ASCII is
// escaped here; a string with control characters or other bytes goes
// through encoding/json (rare in names and metadata).
func AppendChars(b []byte, s string) []byte {
	start, from := len(b), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain[c] {
			continue
		}
		if c < 0x20 || c >= 0x80 {
			enc, _ := json.Marshal(s)
			return append(b[:start], enc[1:len(enc)-1]...)
		}
		b = append(b, s[from:i]...)
		from = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '<':
			b = append(b, `\u003c`...)
		case '>':
			b = append(b, `\u003e`...)
		case '&':
			b = append(b, `\u0026`...)
		}
	}
	return append(b, s[from:]...)
}

// plain marks the bytes encoding/json writes as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendMap appends m as an object, its keys sorted and every key and
// value quoted as Append does: what encoding/json writes for a
// map[string]string.
func AppendMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	b, _ = AppendObject(b, keys, func(b []byte, k string) ([]byte, bool) {
		return Append(b, m[k]), true
	})
	return b
}

// AppendObject appends an object of the members named by keys in the
// order encoding/json writes a map's (keys sorted, which it does in
// place), each key quoted as Append does and its value appended by value.
// A value that returns false stops it: AppendObject then returns false
// and b as value left it.
func AppendObject(b []byte, keys []string, value func(b []byte, key string) ([]byte, bool)) ([]byte, bool) {
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(Append(b, k), ':')
		var ok bool
		if b, ok = value(b, k); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}
