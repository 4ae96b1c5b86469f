package firestoreserver

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// badJSONString finds the first string in a JSON document (a member name
// or a value) that is not valid Unicode: a lone surrogate escape such as
// "\ud800", or raw bytes that are not UTF-8. protojson rejects such a body
// with a bare "unexpected EOF"; this names the member instead. It returns
// the member's path (fields.s.stringValue, writes[2].update.name) and what
// is wrong, or ok false when every string is valid or the document is not
// JSON at all (then protojson's message stands).
func badJSONString(data []byte) (path, problem string, ok bool) {
	s := &jsonScan{b: data}
	defer func() {
		if recover() != nil { // a syntax error the scanner gave up on
			path, problem, ok = "", "", false
		}
	}()
	if s.value("", 0) {
		return s.path, s.problem, true
	}
	return "", "", false
}

// maxJSONDepth bounds the scanner's recursion; protojson's own limit is
// lower, so deeper documents are rejected by it anyway.
const maxJSONDepth = 1000

type jsonScan struct {
	b       []byte
	i       int
	path    string
	problem string
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value scans one value at path; true means a bad string was found.
func (s *jsonScan) value(path string, depth int) bool {
	if depth > maxJSONDepth {
		panic("too deep")
	}
	s.ws()
	switch s.b[s.i] {
	case '{':
		s.i++
		for {
			s.ws()
			if s.b[s.i] == '}' {
				s.i++
				return false
			}
			raw, bad := s.str()
			key := decodeKey(raw)
			member := key
			if path != "" {
				member = path + "." + key
			}
			if bad != "" {
				s.path, s.problem = member+" (the member name)", bad
				return true
			}
			s.ws()
			if s.b[s.i] != ':' {
				panic("want :")
			}
			s.i++
			if s.value(member, depth+1) {
				return true
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
			}
		}
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.ws()
			if s.b[s.i] == ']' {
				s.i++
				return false
			}
			if s.value(path+"["+strconv.Itoa(n)+"]", depth+1) {
				return true
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
			}
		}
	case '"':
		if _, bad := s.str(); bad != "" {
			s.path, s.problem = path, bad
			return true
		}
		return false
	default:
		start := s.i
		for s.i < len(s.b) && !isJSONDelim(s.b[s.i]) {
			s.i++
		}
		if s.i == start {
			panic("unexpected character")
		}
		return false
	}
}

func isJSONDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// str scans a string literal at s.i and returns its raw bytes (quotes
// included) and, when it is not valid Unicode, what is wrong with it.
func (s *jsonScan) str() (raw []byte, bad string) {
	if s.b[s.i] != '"' {
		panic("want string")
	}
	start := s.i
	s.i++
	for {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start:s.i], bad
		case c == '\\':
			s.i++
			if s.b[s.i] != 'u' {
				s.i++
				continue
			}
			r := s.hex4(s.i + 1)
			s.i += 5
			switch {
			case utf16.IsSurrogate(rune(r)) && r < 0xdc00:
				// A high surrogate must be followed by a low one.
				if s.i+6 <= len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					if lo := s.hex4(s.i + 2); lo >= 0xdc00 && lo <= 0xdfff {
						s.i += 6
						continue
					}
				}
				if bad == "" {
					bad = "it contains a lone surrogate \\u" + strconv.FormatInt(int64(r), 16) + ", which is not a Unicode character"
				}
			case utf16.IsSurrogate(rune(r)):
				if bad == "" {
					bad = "it contains a lone surrogate \\u" + strconv.FormatInt(int64(r), 16) + ", which is not a Unicode character"
				}
			}
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 && bad == "" {
				bad = "it contains bytes that are not valid UTF-8"
			}
			s.i += n
		}
	}
}

func (s *jsonScan) hex4(at int) int {
	if at+4 > len(s.b) {
		panic("short \\u escape")
	}
	n, err := strconv.ParseUint(string(s.b[at:at+4]), 16, 16)
	if err != nil {
		panic("bad \\u escape")
	}
	return int(n)
}

// decodeKey returns a member name as text for a path (bad sequences
// replaced).
func decodeKey(raw []byte) string {
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return string(raw)
	}
	return k
}
