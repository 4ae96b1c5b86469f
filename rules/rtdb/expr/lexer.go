package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tRegex
	tOp // punctuation and operators; the text is in tok.text
)

type token struct {
	kind     tokKind
	pos, end int
	text     string  // source text; for tOp the operator
	str      string  // decoded string literal / regex pattern
	flags    string  // regex flags
	num      float64 // number literal value
}

// operators, longest first so the lexer can match greedily.
var operators = []string{
	"===", "!==",
	"==", "!=", "<=", ">=", "&&", "||",
	"(", ")", "[", "]", ".", ",", "?", ":", "!", "+", "-", "*", "/", "%", "<", ">",
}

// lexer scans an expression on demand; the parser tells it whether a '/'
// may start a regular expression (i.e. whether an operand is expected).
type lexer struct {
	src string
	pos int
}

// next scans the next token. regexOK reports whether the parser expects an
// operand, where '/' starts a regex literal rather than a division.
func (l *lexer) next(regexOK bool) (token, *Error) {
	// Skip whitespace. RTDB expressions have no comments.
	for l.pos < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		if !unicode.IsSpace(r) {
			break
		}
		l.pos += n
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tEOF, pos: start, end: start}, nil
	}
	c := l.src[l.pos]
	switch {
	case isIdentStart(c):
		l.pos++
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tIdent, pos: start, end: l.pos, text: l.src[start:l.pos]}, nil
	case c >= '0' && c <= '9' || (c == '.' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1])):
		return l.number()
	case c == '"' || c == '\'':
		return l.string(c)
	case c == '/' && regexOK:
		return l.regex()
	}
	for _, op := range operators {
		if strings.HasPrefix(l.src[l.pos:], op) {
			l.pos += len(op)
			return token{kind: tOp, pos: start, end: l.pos, text: op}, nil
		}
	}
	r, n := utf8.DecodeRuneInString(l.src[l.pos:])
	msg := fmt.Sprintf("unexpected character %q", r)
	switch c {
	case '=':
		msg = "unexpected '=': assignment is not allowed; compare with === instead"
	case '&':
		msg = "unexpected '&': use && for logical and"
	case '|':
		msg = "unexpected '|': use || for logical or"
	case '`':
		msg = "template strings are not supported; use '...' and + to concatenate"
	case ';':
		msg = "unexpected ';': a rule is a single expression without semicolons"
	case '{', '}':
		msg = "object literals are not supported in rule expressions"
	}
	return token{}, &Error{Pos: start, EndPos: start + n, Msg: msg}
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *lexer) number() (token, *Error) {
	start := l.pos
	s := l.src
	if strings.HasPrefix(s[l.pos:], "0x") || strings.HasPrefix(s[l.pos:], "0X") {
		l.pos += 2
		for l.pos < len(s) && isHex(s[l.pos]) {
			l.pos++
		}
		if l.pos == start+2 {
			return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "invalid hexadecimal number"}
		}
		n, err := strconv.ParseUint(s[start+2:l.pos], 16, 64)
		if err != nil {
			return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "hexadecimal number out of range"}
		}
		if l.pos < len(s) && isIdentPart(s[l.pos]) {
			return token{}, &Error{Pos: start, EndPos: l.pos + 1, Msg: "identifier starts immediately after a number"}
		}
		return token{kind: tNumber, pos: start, end: l.pos, text: s[start:l.pos], num: float64(n)}, nil
	}
	for l.pos < len(s) && isDigit(s[l.pos]) {
		l.pos++
	}
	if l.pos < len(s) && s[l.pos] == '.' {
		l.pos++
		for l.pos < len(s) && isDigit(s[l.pos]) {
			l.pos++
		}
	}
	if l.pos < len(s) && (s[l.pos] == 'e' || s[l.pos] == 'E') {
		j := l.pos + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			l.pos = j
		}
	}
	if l.pos < len(s) && isIdentPart(s[l.pos]) {
		return token{}, &Error{Pos: start, EndPos: l.pos + 1, Msg: "identifier starts immediately after a number"}
	}
	text := s[start:l.pos]
	n, err := strconv.ParseFloat(text, 64)
	if err != nil {
		// ParseFloat only fails on range here; JavaScript gives Infinity.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "invalid number " + text}
		}
	}
	return token{kind: tNumber, pos: start, end: l.pos, text: text, num: n}, nil
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (l *lexer) string(quote byte) (token, *Error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(l.src) {
			return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "unterminated string literal"}
		}
		c := l.src[l.pos]
		switch {
		case c == quote:
			l.pos++
			return token{kind: tString, pos: start, end: l.pos, text: l.src[start:l.pos], str: b.String()}, nil
		case c == '\n' || c == '\r':
			return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "unterminated string literal: strings cannot span lines"}
		case c == '\\':
			if l.pos+1 >= len(l.src) {
				return token{}, &Error{Pos: start, EndPos: l.pos + 1, Msg: "unterminated string literal"}
			}
			e := l.src[l.pos+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '0':
				b.WriteByte(0)
			case 'u':
				if l.pos+6 > len(l.src) {
					return token{}, &Error{Pos: l.pos, EndPos: len(l.src), Msg: "invalid \\u escape: expected four hex digits"}
				}
				n, err := strconv.ParseUint(l.src[l.pos+2:l.pos+6], 16, 32)
				if err != nil {
					return token{}, &Error{Pos: l.pos, EndPos: l.pos + 6, Msg: "invalid \\u escape: expected four hex digits"}
				}
				b.WriteRune(rune(n))
				l.pos += 6
				continue
			case 'x':
				if l.pos+4 > len(l.src) {
					return token{}, &Error{Pos: l.pos, EndPos: len(l.src), Msg: "invalid \\x escape: expected two hex digits"}
				}
				n, err := strconv.ParseUint(l.src[l.pos+2:l.pos+4], 16, 8)
				if err != nil {
					return token{}, &Error{Pos: l.pos, EndPos: l.pos + 4, Msg: "invalid \\x escape: expected two hex digits"}
				}
				b.WriteRune(rune(n))
				l.pos += 4
				continue
			default:
				// JavaScript keeps the character itself for \' \" \\ \/ and
				// any other non-special escape.
				r, n := utf8.DecodeRuneInString(l.src[l.pos+1:])
				b.WriteRune(r)
				l.pos += 1 + n
				continue
			}
			l.pos += 2
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
}

func (l *lexer) regex() (token, *Error) {
	start := l.pos
	l.pos++ // opening /
	inClass := false
	for {
		if l.pos >= len(l.src) || l.src[l.pos] == '\n' {
			return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "unterminated regular expression literal"}
		}
		c := l.src[l.pos]
		if c == '\\' {
			l.pos += 2
			continue
		}
		if c == '[' {
			inClass = true
		} else if c == ']' {
			inClass = false
		} else if c == '/' && !inClass {
			break
		}
		l.pos++
	}
	pattern := l.src[start+1 : l.pos]
	l.pos++ // closing /
	fstart := l.pos
	for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
		l.pos++
	}
	if pattern == "" {
		return token{}, &Error{Pos: start, EndPos: l.pos, Msg: "empty regular expression literal"}
	}
	return token{kind: tRegex, pos: start, end: l.pos, text: l.src[start:l.pos], str: pattern, flags: l.src[fstart:l.pos]}, nil
}
