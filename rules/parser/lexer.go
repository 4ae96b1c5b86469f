package parser

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind classifies tokens.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tFloat
	tString
	tBytes
	tOp      // punctuation and operators; the text says which
	tIllegal // a character or sequence the language doesn't have; Val says why
)

// token is one lexical token. Start and End are byte offsets.
type token struct {
	kind       tokKind
	text       string // source text
	val        string // unescaped value of strings and bytes; message for tIllegal
	start, end int
}

func (t token) is(op string) bool { return t.kind == tOp && t.text == op }

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tString, tBytes:
		return "string " + t.text
	}
	return fmt.Sprintf("'%s'", t.text)
}

// lexer produces tokens on demand so the parser can rescan raw text for
// match paths and path literals, whose segments are not ordinary tokens.
type lexer struct {
	src string
	pos int
	// prevOperand is true when the previous token ends an operand; it decides
	// whether ".5" is a number or a member access.
	prevOperand bool
}

// operators, longest first within each leading character.
var operators = []string{
	"===", "!==", "&&", "||", "==", "!=", "<=", ">=", "=>", "?.", "??", "++", "--",
	"{", "}", "(", ")", "[", "]", ",", ";", ":", ".", "?", "=", "<", ">", "+", "-", "*", "/", "%", "!", "$",
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isPathChar reports whether c can appear in a raw path segment. Production's
// lexer treats "/" immediately followed by one of these as a path segment
// even after an operand, which is why `4/2` does not compile while `4 / 2`
// does (checked against the official emulator).
func isPathChar(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("-.~%@+:", c) >= 0
}

// skipSpace skips whitespace and comments. An unterminated block comment
// runs to the end of the input; it returns its start offset, or -1.
func (l *lexer) skipSpace() (unterminated int) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '/':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '*':
			start := l.pos
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				l.pos = len(l.src)
				return start
			}
			l.pos += 2 + end + 2
		default:
			return -1
		}
	}
	return -1
}

func (l *lexer) next() token {
	if start := l.skipSpace(); start >= 0 {
		return token{kind: tIllegal, text: "/*", val: "comment is never closed (missing */)", start: start, end: start + 2}
	}
	t := l.scan()
	switch t.kind {
	case tIdent, tInt, tFloat, tString, tBytes:
		l.prevOperand = true
	case tOp:
		l.prevOperand = t.text == ")" || t.text == "]" || t.text == "}"
	default:
		l.prevOperand = false
	}
	return t
}

func (l *lexer) scan() token {
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tEOF, start: start, end: start}
	}
	c := l.src[l.pos]
	switch {
	case c == 'b' && l.pos+1 < len(l.src) && (l.src[l.pos+1] == '\'' || l.src[l.pos+1] == '"'):
		l.pos++
		t := l.scanString(start, true)
		return t
	case isLetter(c):
		for l.pos < len(l.src) && (isLetter(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		return token{kind: tIdent, text: l.src[start:l.pos], start: start, end: l.pos}
	case isDigit(c) || c == '.' && !l.prevOperand && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1]):
		return l.scanNumber(start)
	case c == '\'' || c == '"':
		return l.scanString(start, false)
	case c == '`':
		end := strings.IndexByte(l.src[l.pos+1:], '`')
		if end < 0 {
			l.pos = len(l.src)
		} else {
			l.pos += end + 2
		}
		return token{kind: tIllegal, text: l.src[start:l.pos], val: "template strings (backticks) are not part of the rules language; use '...' and +", start: start, end: l.pos}
	}
	for _, op := range operators {
		if strings.HasPrefix(l.src[l.pos:], op) {
			l.pos += len(op)
			return token{kind: tOp, text: op, start: start, end: l.pos}
		}
	}
	r, size := utf8.DecodeRuneInString(l.src[l.pos:])
	l.pos += size
	return token{kind: tIllegal, text: string(r), val: fmt.Sprintf("unexpected character %q", r), start: start, end: l.pos}
}

func (l *lexer) scanNumber(start int) token {
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
	}
	kind := tInt
	// "1." is a float, as in production, so `1.size()` does not parse.
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		kind = tFloat
		l.pos++
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
	}
	// A letter glued to a number (1e3, 0x10) is what production reports as
	// "Unexpected 'e3'": there are no exponents or hex literals.
	if l.pos < len(l.src) && (isLetter(l.src[l.pos]) || isDigit(l.src[l.pos])) {
		bad := l.pos
		for l.pos < len(l.src) && (isLetter(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		return token{kind: tIllegal, text: l.src[start:l.pos],
			val:   fmt.Sprintf("unexpected '%s' after number (there are no exponent or hexadecimal literals)", l.src[bad:l.pos]),
			start: start, end: l.pos}
	}
	return token{kind: kind, text: l.src[start:l.pos], start: start, end: l.pos}
}

// scanString scans a quoted string (or bytes literal when bytes is true, the
// b already consumed). Accepted escapes, as production accepts them: \\ \'
// \" \n \r \t \b \f, \uXXXX, \xHH and three-digit octal \ooo. Any other
// escape, and a line break inside the quotes, is an error.
func (l *lexer) scanString(start int, bytes bool) token {
	quote := l.src[l.pos]
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(l.src) || l.src[l.pos] == '\n' {
			return token{kind: tIllegal, text: l.src[start:l.pos], val: fmt.Sprintf("string is never closed (missing %c)", quote), start: start, end: l.pos}
		}
		c := l.src[l.pos]
		if c == quote {
			l.pos++
			kind := tString
			if bytes {
				kind = tBytes
			}
			return token{kind: kind, text: l.src[start:l.pos], val: b.String(), start: start, end: l.pos}
		}
		if c != '\\' {
			b.WriteByte(c)
			l.pos++
			continue
		}
		escStart := l.pos
		l.pos++
		if l.pos >= len(l.src) {
			continue // reported as unterminated on the next iteration
		}
		e := l.src[l.pos]
		l.pos++
		switch e {
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			v, ok := l.hexDigits(4)
			if !ok {
				return l.badEscape(start, escStart)
			}
			if bytes {
				return l.badEscape(start, escStart)
			}
			b.WriteRune(rune(v))
		case 'x':
			v, ok := l.hexDigits(2)
			if !ok {
				return l.badEscape(start, escStart)
			}
			if bytes {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		case '0', '1', '2', '3':
			if l.pos+2 > len(l.src) || !isOctal(l.src[l.pos]) || !isOctal(l.src[l.pos+1]) {
				return l.badEscape(start, escStart)
			}
			v := int(e-'0')<<6 | int(l.src[l.pos]-'0')<<3 | int(l.src[l.pos+1]-'0')
			l.pos += 2
			if bytes {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		default:
			return l.badEscape(start, escStart)
		}
	}
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

func (l *lexer) hexDigits(n int) (int, bool) {
	if l.pos+n > len(l.src) {
		return 0, false
	}
	v := 0
	for i := 0; i < n; i++ {
		c := l.src[l.pos+i]
		var d int
		switch {
		case isDigit(c):
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, false
		}
		v = v<<4 | d
	}
	l.pos += n
	return v, true
}

// badEscape reports an invalid escape and skips to the end of the string so
// one mistake yields one diagnostic.
func (l *lexer) badEscape(start, escStart int) token {
	end := escStart + 2
	if end > len(l.src) {
		end = len(l.src)
	}
	esc := l.src[escStart:end]
	quote := l.src[start]
	if quote == 'b' {
		quote = l.src[start+1]
	}
	for l.pos < len(l.src) && l.src[l.pos] != quote && l.src[l.pos] != '\n' {
		if l.src[l.pos] == '\\' {
			l.pos++
		}
		l.pos++
	}
	if l.pos < len(l.src) && l.src[l.pos] == quote {
		l.pos++
	}
	return token{kind: tIllegal, text: esc,
		val:   fmt.Sprintf("invalid escape sequence %s (allowed: \\\\ \\' \\\" \\n \\r \\t \\b \\f \\uXXXX \\xHH \\ooo)", esc),
		start: escStart, end: end}
}
