// Package expr is the $expr sentinel language: a small, bounded expression
// DSL that may stand for any value in a write payload, as {"$expr": "..."},
// and is resolved against the current state before the write is applied
// (the MCP transaction tool binds each read alias as $alias, plus now and
// auth). It has a lexer, a parser and an evaluator with fixed limits
// (MaxLength, MaxLiteral, MaxDepth) and typed errors carrying positions.
// No I/O, no loops, no assignment: every expression terminates.
package expr

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is a token kind.
type Kind int

// Token kinds.
const (
	EOF Kind = iota
	Ident
	Int
	Float
	String
	Op // punctuation and operators; Token.Text holds it
)

// Token is one lexeme.
type Token struct {
	Kind Kind
	Text string // the source text (for String: the decoded value)
	Off  int    // byte offset in the source
}

var ops = []string{"&&", "||", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "!", "?", ":", ".", ",", "(", ")", "[", "]"}

// Tokenize splits src into tokens, ending with EOF. It fails on a source
// longer than MaxLength, an unknown character, an unterminated string or a
// string literal longer than MaxLiteral.
func Tokenize(src string) ([]Token, error) {
	if len(src) > MaxLength {
		return nil, &LexError{Pos: posAt(src, MaxLength), Msg: fmt.Sprintf("expression is %d bytes; the limit is %d", len(src), MaxLength), limit: true}
	}
	var out []Token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			if src[i] == '$' && j == i+1 {
				return nil, &LexError{Pos: posAt(src, i), Msg: "'$' must be followed by a name, as in $alias"}
			}
			out = append(out, Token{Kind: Ident, Text: src[i:j], Off: i})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			kind := Int
			if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
				kind = Float
				j++
				for j < len(src) && src[j] >= '0' && src[j] <= '9' {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					kind = Float
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(src) && isIdentPart(src[j]) {
				return nil, &LexError{Pos: posAt(src, j), Msg: fmt.Sprintf("unexpected %q after number", src[j])}
			}
			out = append(out, Token{Kind: kind, Text: src[i:j], Off: i})
			i = j
		case c == '\'' || c == '"':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, Token{Kind: String, Text: s, Off: i})
			i += n
		default:
			matched := false
			for _, op := range ops {
				if strings.HasPrefix(src[i:], op) {
					out = append(out, Token{Kind: Op, Text: op, Off: i})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				msg := fmt.Sprintf("unexpected character %q", c)
				switch {
				case strings.HasPrefix(src[i:], "="):
					msg = "unexpected '=': assignment is not part of $expr; compare with =="
				case c == '&' || c == '|':
					msg = fmt.Sprintf("unexpected %q: use && or ||", c)
				}
				return nil, &LexError{Pos: posAt(src, i), Msg: msg}
			}
		}
	}
	out = append(out, Token{Kind: EOF, Off: len(src)})
	return out, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// lexString decodes a quoted string starting at src[i]; it returns the
// value and the number of source bytes consumed.
func lexString(src string, i int) (string, int, error) {
	q := src[i]
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == q:
			if b.Len() > MaxLiteral {
				return "", 0, &LexError{Pos: posAt(src, i), Msg: fmt.Sprintf("string literal is %d bytes; the limit is %d", b.Len(), MaxLiteral), limit: true}
			}
			return b.String(), j + 1 - i, nil
		case c == '\\':
			if j+1 >= len(src) {
				return "", 0, &LexError{Pos: posAt(src, j), Msg: "unterminated escape at end of expression"}
			}
			e := src[j+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'u':
				if j+6 > len(src) {
					return "", 0, &LexError{Pos: posAt(src, j), Msg: `\u needs four hex digits`}
				}
				r, err := strconv.ParseUint(src[j+2:j+6], 16, 32)
				if err != nil {
					return "", 0, &LexError{Pos: posAt(src, j), Msg: `\u needs four hex digits`}
				}
				b.WriteRune(rune(r))
				j += 4
			default:
				return "", 0, &LexError{Pos: posAt(src, j), Msg: fmt.Sprintf("unknown escape \\%c", e)}
			}
			j += 2
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", 0, &LexError{Pos: posAt(src, i), Msg: "unterminated string literal"}
}
