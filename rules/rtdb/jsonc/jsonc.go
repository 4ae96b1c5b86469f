// Package jsonc parses JSON with the comments Firebase tolerates in
// database.rules.json (`// line` and `/* block */`) into a tree that keeps the
// byte offset of every value, object key and string character, so rules
// diagnostics can point at file:line:col inside an expression string.
//
// The grammar is otherwise strict JSON (RFC 8259): no trailing commas, no
// single quotes, no unquoted keys. Duplicate object keys are kept in order;
// callers decide whether they are an error.
package jsonc

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind int

// Kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	default:
		return "object"
	}
}

// Value is one parsed JSON value with its byte range [Start, End) in the
// source text.
type Value struct {
	Kind       Kind
	Start, End int

	Bool    bool
	Number  string   // the literal text of a number, e.g. "-1.5e3"
	Str     string   // the decoded string
	Members []Member // object members in source order
	Elems   []*Value // array elements

	// offs maps each byte of Str to the source offset of the character that
	// produced it; nil when the literal has no escapes (then byte i of Str is
	// at Start+1+i).
	offs []int
}

// Member is one `"key": value` pair of an object.
type Member struct {
	Key              string
	KeyStart, KeyEnd int // byte range of the quoted key, quotes included
	Value            *Value
}

// Offset returns the source byte offset of byte i of the decoded string Str.
// i == len(Str) maps to the closing quote.
func (v *Value) Offset(i int) int {
	if v.offs == nil {
		if i < 0 {
			i = 0
		}
		if i > len(v.Str) {
			i = len(v.Str)
		}
		return v.Start + 1 + i
	}
	if i < 0 {
		return v.Start + 1
	}
	if i >= len(v.offs) {
		return v.End - 1
	}
	return v.offs[i]
}

// Get returns the value of the first member named key, or nil.
func (v *Value) Get(key string) *Value {
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// Error is a syntax error at a byte range of the source.
type Error struct {
	Start, End int
	Msg        string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Start, e.Msg) }

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// Parse parses text as one JSON value surrounded by optional whitespace and
// comments. It stops at the first syntax error.
func Parse(text string) (*Value, *Error) {
	p := &parser{src: text}
	v := p.value(0)
	if p.err != nil {
		return nil, p.err
	}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	if p.pos < len(p.src) {
		p.fail(p.pos, p.pos+1, "unexpected %s after the end of the JSON value", p.describe())
		return nil, p.err
	}
	return v, nil
}

type parser struct {
	src string
	pos int
	err *Error
}

func (p *parser) fail(start, end int, format string, args ...any) {
	if p.err == nil {
		if end <= start {
			end = start + 1
		}
		p.err = &Error{Start: start, End: end, Msg: fmt.Sprintf(format, args...)}
	}
}

// describe names the character at pos for an error message.
func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return fmt.Sprintf("%q", r)
}

// skip advances over whitespace and comments.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; c {
		case ' ', '\t', '\n', '\r':
			p.pos++
		case '/':
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == '/' {
				end := strings.IndexByte(p.src[p.pos:], '\n')
				if end < 0 {
					p.pos = len(p.src)
				} else {
					p.pos += end + 1
				}
			} else if p.pos+1 < len(p.src) && p.src[p.pos+1] == '*' {
				end := strings.Index(p.src[p.pos+2:], "*/")
				if end < 0 {
					p.fail(p.pos, p.pos+2, "unterminated /* comment")
					p.pos = len(p.src)
					return
				}
				p.pos += 2 + end + 2
			} else {
				return
			}
		default:
			if c == 0xEF && strings.HasPrefix(p.src[p.pos:], "\uFEFF") && p.pos == 0 {
				p.pos += 3 // byte order mark
				continue
			}
			return
		}
	}
}

func (p *parser) value(depth int) *Value {
	p.skip()
	if p.err != nil {
		return nil
	}
	if depth > maxDepth {
		p.fail(p.pos, p.pos+1, "JSON nested more than %d levels deep", maxDepth)
		return nil
	}
	if p.pos >= len(p.src) {
		p.fail(p.pos, p.pos, "unexpected end of input, expected a JSON value")
		return nil
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case strings.HasPrefix(p.src[p.pos:], "true"):
		p.pos += 4
		return &Value{Kind: Bool, Bool: true, Start: start, End: p.pos}
	case strings.HasPrefix(p.src[p.pos:], "false"):
		p.pos += 5
		return &Value{Kind: Bool, Start: start, End: p.pos}
	case strings.HasPrefix(p.src[p.pos:], "null"):
		p.pos += 4
		return &Value{Kind: Null, Start: start, End: p.pos}
	case c == '\'':
		p.fail(start, start+1, "strings must use double quotes in JSON")
	default:
		p.fail(start, start+1, "unexpected %s, expected a JSON value", p.describe())
	}
	return nil
}

func (p *parser) object(depth int) *Value {
	v := &Value{Kind: Object, Start: p.pos}
	p.pos++ // {
	for first := true; ; first = false {
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			if !first {
				p.fail(p.pos, p.pos+1, "trailing comma before '}' is not allowed in JSON")
				return nil
			}
			p.pos++
			v.End = p.pos
			return v
		}
		if p.pos >= len(p.src) {
			p.fail(v.Start, v.Start+1, "unterminated object: missing '}'")
			return nil
		}
		if p.src[p.pos] != '"' {
			p.fail(p.pos, p.pos+1, "expected a double-quoted key, found %s", p.describe())
			return nil
		}
		key := p.string()
		if p.err != nil {
			return nil
		}
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			p.fail(p.pos, p.pos+1, "expected ':' after key %q, found %s", key.Str, p.describe())
			return nil
		}
		p.pos++
		val := p.value(depth + 1)
		if p.err != nil {
			return nil
		}
		v.Members = append(v.Members, Member{Key: key.Str, KeyStart: key.Start, KeyEnd: key.End, Value: val})
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos >= len(p.src) {
			p.fail(v.Start, v.Start+1, "unterminated object: missing '}'")
			return nil
		}
		switch p.src[p.pos] {
		case ',':
			comma := p.pos
			p.pos++
			p.skip()
			if p.err == nil && p.pos < len(p.src) && p.src[p.pos] == '}' {
				p.fail(comma, comma+1, "trailing comma before '}' is not allowed in JSON")
				return nil
			}
		case '}':
			p.pos++
			v.End = p.pos
			return v
		default:
			p.fail(p.pos, p.pos+1, "expected ',' or '}' after an object member, found %s", p.describe())
			return nil
		}
	}
}

func (p *parser) array(depth int) *Value {
	v := &Value{Kind: Array, Start: p.pos}
	p.pos++ // [
	p.skip()
	if p.err != nil {
		return nil
	}
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		v.End = p.pos
		return v
	}
	for {
		el := p.value(depth + 1)
		if p.err != nil {
			return nil
		}
		v.Elems = append(v.Elems, el)
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos >= len(p.src) {
			p.fail(v.Start, v.Start+1, "unterminated array: missing ']'")
			return nil
		}
		switch p.src[p.pos] {
		case ',':
			comma := p.pos
			p.pos++
			p.skip()
			if p.err == nil && p.pos < len(p.src) && p.src[p.pos] == ']' {
				p.fail(comma, comma+1, "trailing comma before ']' is not allowed in JSON")
				return nil
			}
		case ']':
			p.pos++
			v.End = p.pos
			return v
		default:
			p.fail(p.pos, p.pos+1, "expected ',' or ']' after an array element, found %s", p.describe())
			return nil
		}
	}
}

func (p *parser) number() *Value {
	start := p.pos
	s := p.src
	i := p.pos
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			p.fail(start, i+1, "numbers must not have leading zeros")
			return nil
		}
	} else if digits() == 0 {
		p.fail(start, i+1, "invalid number")
		return nil
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			p.fail(start, i+1, "invalid number: expected digits after '.'")
			return nil
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.fail(start, i+1, "invalid number: expected digits in the exponent")
			return nil
		}
	}
	p.pos = i
	return &Value{Kind: Number, Number: s[start:i], Start: start, End: i}
}

func (p *parser) string() *Value {
	start := p.pos
	p.pos++ // opening quote
	var b strings.Builder
	var offs []int
	escaped := false
	segStart := p.pos
	for {
		if p.pos >= len(p.src) {
			p.fail(start, start+1, "unterminated string")
			return nil
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			if !escaped {
				v := &Value{Kind: String, Str: p.src[segStart:p.pos], Start: start, End: p.pos + 1}
				p.pos++
				return v
			}
			v := &Value{Kind: String, Str: b.String(), Start: start, End: p.pos + 1, offs: offs}
			p.pos++
			return v
		case c < 0x20:
			p.fail(p.pos, p.pos+1, "control character in string: write it as an escape such as \\n")
			return nil
		case c == '\\':
			if !escaped {
				escaped = true
				b.WriteString(p.src[segStart:p.pos])
				for i := segStart; i < p.pos; i++ {
					offs = append(offs, i)
				}
			}
			escStart := p.pos
			if p.pos+1 >= len(p.src) {
				p.fail(start, start+1, "unterminated string")
				return nil
			}
			e := p.src[p.pos+1]
			var out string
			switch e {
			case '"', '\\', '/':
				out = string(e)
				p.pos += 2
			case 'b':
				out, p.pos = "\b", p.pos+2
			case 'f':
				out, p.pos = "\f", p.pos+2
			case 'n':
				out, p.pos = "\n", p.pos+2
			case 'r':
				out, p.pos = "\r", p.pos+2
			case 't':
				out, p.pos = "\t", p.pos+2
			case 'u':
				r, n, ok := p.unicodeEscape(p.pos)
				if !ok {
					return nil
				}
				out = string(r)
				p.pos += n
			default:
				p.fail(p.pos, p.pos+2, "invalid escape \\%c in string", e)
				return nil
			}
			b.WriteString(out)
			for range len(out) {
				offs = append(offs, escStart)
			}
		default:
			if escaped {
				b.WriteByte(c)
				offs = append(offs, p.pos)
			}
			p.pos++
		}
	}
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at i and
// returns the rune and the number of bytes consumed.
func (p *parser) unicodeEscape(i int) (rune, int, bool) {
	hex4 := func(j int) (rune, bool) {
		if j+6 > len(p.src) || p.src[j] != '\\' || p.src[j+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(p.src[j+2:j+6], 16, 32)
		if err != nil {
			return 0, false
		}
		return rune(n), true
	}
	r, ok := hex4(i)
	if !ok {
		p.fail(i, i+2, "invalid \\u escape: expected four hex digits")
		return 0, 0, false
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(i + 6); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, true
			}
		}
		return utf8.RuneError, 6, true
	}
	return r, 6, true
}
