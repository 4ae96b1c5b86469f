package database

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// CheckBodyKeys refuses a REST write body (JSON text DecodeJSON accepted)
// holding a key no location can have, as production does: with the line
// and column of the key's opening quote, both 1-based, columns counted in
// characters. Production's wording, quoted from its answers in public
// reports: "Invalid data; couldn't parse key beginning at 1:58. Key value
// can't be empty or contain $ # [ ] / or ."
// (https://github.com/max-barry/google-drive-cms/issues/9); a body's first
// key, right after its "{", is at 1:2 (the answer quoted in a comment of
// public client code). pathKeys says the top-level keys are paths (a
// PATCH's), which the update itself checks.
//
// The keys with a meaning (.priority, .value, .sv) are allowed; the engine
// checks their use. Control characters, which production's documentation
// forbids in keys, are refused with the same answer (its wording for them
// was not found).
func CheckBodyKeys(b []byte, pathKeys bool) error {
	off, found := firstBadKey(b, pathKeys)
	if !found {
		return nil
	}
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := 1 + utf8.RuneCount(b[bytes.LastIndexByte(b[:off], '\n')+1:off])
	return errorf(ErrInvalidData, "Invalid data; couldn't parse key beginning at %d:%d. Key value can't be empty or contain $ # [ ] / or .", line, col)
}

// firstBadKey returns the offset of the opening quote of the first
// illegal key in valid JSON text b.
func firstBadKey(b []byte, pathKeys bool) (int, bool) {
	type level struct{ object, expectKey bool }
	var stack []level
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			stack = append(stack, level{object: true, expectKey: true})
		case '[':
			stack = append(stack, level{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].expectKey = true
			}
		case ':':
			stack[len(stack)-1].expectKey = false
		case '"':
			end := stringEnd(b, i)
			n := len(stack)
			if n > 0 && stack[n-1].object && stack[n-1].expectKey && !(pathKeys && n == 1) {
				key := b[i+1 : end-1] // without escapes, the text is the key
				if bytes.IndexByte(key, '\\') >= 0 {
					var k string
					_ = json.Unmarshal(b[i:end], &k)
					key = []byte(k)
				}
				if illegalBodyKey(key) {
					return i, true
				}
			}
			i = end - 1
		}
	}
	return 0, false
}

// stringEnd returns the offset just past the JSON string starting at the
// quote at b[start].
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

func illegalBodyKey(k []byte) bool {
	switch string(k) {
	case ".priority", ".value", ".sv":
		return false
	case "":
		return true
	}
	for _, c := range k { // the forbidden characters are all ASCII
		switch {
		case c == '.' || c == '#' || c == '$' || c == '/' || c == '[' || c == ']', c < 0x20 || c == 0x7f:
			return true
		}
	}
	return false
}
