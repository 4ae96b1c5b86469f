package hosting

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// errBadEscape is a malformed percent-encoding in a request's URL.
var errBadEscape = errors.New("malformed percent-encoding")

// uriReserved are the characters decodeURI leaves encoded and encodeURI
// leaves as they are (ECMAScript's reserved set plus "#").
const uriReserved = ";/?:@&=+$,#"

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeURI is ECMAScript's decodeURI: every escape is decoded except
// those of a reserved character (so "%2F" stays "%2F"); a malformed
// escape or invalid UTF-8 is an error.
func decodeURI(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '%' {
			b.WriteByte(s[i])
			i++
			continue
		}
		start := i
		var buf []byte
		for {
			if i+2 >= len(s) {
				return "", errBadEscape
			}
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", errBadEscape
			}
			buf = append(buf, h<<4|l)
			i += 3
			if utf8.FullRune(buf) || buf[0] < 0x80 {
				break
			}
			if i >= len(s) || s[i] != '%' {
				return "", errBadEscape
			}
		}
		r, size := utf8.DecodeRune(buf)
		if r == utf8.RuneError || size != len(buf) {
			return "", errBadEscape
		}
		if r < 0x80 && strings.ContainsRune(uriReserved, r) {
			b.WriteString(s[start:i])
			continue
		}
		b.Write(buf)
	}
	return b.String(), nil
}

// encodeURI is ECMAScript's encodeURI: everything but letters, digits,
// "-_.!~*'()" and the reserved characters is percent-encoded as UTF-8.
func encodeURI(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-_.!~*'()", c) >= 0 || strings.IndexByte(uriReserved, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// validEscapes reports whether every "%" in s starts a two-digit hex
// escape.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) {
				return false
			}
			if _, ok := unhex(s[i+1]); !ok {
				return false
			}
			if _, ok := unhex(s[i+2]); !ok {
				return false
			}
			i += 2
		}
	}
	return true
}
