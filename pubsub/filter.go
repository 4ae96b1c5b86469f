package pubsub

import (
	"fmt"
	"strconv"
	"strings"
)

// Filter is a parsed subscription filter: production's filter language
// over message attributes.
//
//	expr    = unary { "AND" unary } | unary { "OR" unary }
//	unary   = ( "NOT" | "-" ) unary | primary
//	primary = "(" expr ")"
//	        | "attributes" "." key ( "=" | "!=" ) string
//	        | "attributes" ":" key
//	        | "hasPrefix" "(" "attributes" "." key "," string ")"
//	key     = identifier | string
//
// NOT binds tightest; as in production, AND and OR may not be mixed in
// one chain without parentheses. A missing attribute makes = false and != true, as in
// production. The empty filter matches everything.
type Filter struct {
	root fnode
	src  string
}

// maxFilterDepth bounds nesting so a hostile filter cannot exhaust the
// stack (the 256-byte limit bounds it too; this guards direct callers).
const maxFilterDepth = 64

type fnode interface {
	eval(attrs map[string]string) bool
}

type (
	fAnd   struct{ l, r fnode }
	fOr    struct{ l, r fnode }
	fNot   struct{ x fnode }
	fEq    struct{ key, val string }
	fNe    struct{ key, val string }
	fHas   struct{ key string }
	fPrefx struct{ key, prefix string }
)

func (n fAnd) eval(a map[string]string) bool { return n.l.eval(a) && n.r.eval(a) }
func (n fOr) eval(a map[string]string) bool  { return n.l.eval(a) || n.r.eval(a) }
func (n fNot) eval(a map[string]string) bool { return !n.x.eval(a) }
func (n fEq) eval(a map[string]string) bool {
	v, ok := a[n.key]
	return ok && v == n.val
}
func (n fNe) eval(a map[string]string) bool {
	v, ok := a[n.key]
	return !ok || v != n.val
}
func (n fHas) eval(a map[string]string) bool { _, ok := a[n.key]; return ok }
func (n fPrefx) eval(a map[string]string) bool {
	v, ok := a[n.key]
	return ok && strings.HasPrefix(v, n.prefix)
}

// Matches reports whether a message with these attributes passes the
// filter; a nil or empty Filter passes everything.
func (f *Filter) Matches(attrs map[string]string) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(attrs)
}

// String is the filter's source.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.src
}

// ParseFilter parses a filter; the error is INVALID_ARGUMENT naming the
// problem and its byte offset.
func ParseFilter(src string) (*Filter, error) {
	if len(src) > MaxFilterBytes {
		return nil, invalid("Invalid filter: the filter is %d bytes; the limit is %d.", len(src), MaxFilterBytes)
	}
	if strings.TrimSpace(src) == "" {
		return &Filter{src: src}, nil
	}
	p := &fparser{src: src}
	p.next()
	n := p.expr()
	if p.err == nil && p.tok.kind != tEOF {
		p.fail("unexpected %s", p.tok)
	}
	if p.err != nil {
		return nil, invalid("Invalid filter: %v", p.err)
	}
	return &Filter{root: n, src: src}, nil
}

type tkind int

const (
	tEOF tkind = iota
	tIdent
	tString
	tLParen
	tRParen
	tDot
	tColon
	tComma
	tEq
	tNe
	tMinus
)

type token struct {
	kind tkind
	text string // identifier text or unquoted string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of filter"
	case tString:
		return strconv.Quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

var single = [256]tkind{'(': tLParen, ')': tRParen, '.': tDot, ':': tColon, ',': tComma, '=': tEq, '-': tMinus}

type fparser struct {
	src   string
	off   int
	tok   token
	err   error
	depth int
}

func (p *fparser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), p.tok.pos)
	}
}

// next scans one token into p.tok.
func (p *fparser) next() {
	for p.off < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.off]) >= 0 {
		p.off++
	}
	start := p.off
	if p.off >= len(p.src) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := p.src[p.off]
	switch {
	case c == '!' && strings.HasPrefix(p.src[p.off:], "!="):
		p.off += 2
		p.tok = token{kind: tNe, text: "!=", pos: start}
	case single[c] != 0:
		p.off++
		p.tok = token{kind: single[c], text: string(c), pos: start}
	case c == '"' || c == '\'' || c == '`':
		p.off++
		var b strings.Builder
		for {
			if p.off >= len(p.src) {
				p.tok = token{kind: tString, pos: start}
				p.err = fmt.Errorf("unterminated string at offset %d", start)
				return
			}
			d := p.src[p.off]
			p.off++
			if d == c {
				break
			}
			if d == '\\' && p.off < len(p.src) {
				d = p.src[p.off]
				p.off++
			}
			b.WriteByte(d)
		}
		p.tok = token{kind: tString, text: b.String(), pos: start}
	case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		for p.off < len(p.src) {
			d := p.src[p.off]
			if d == '_' || 'a' <= d && d <= 'z' || 'A' <= d && d <= 'Z' || '0' <= d && d <= '9' {
				p.off++
				continue
			}
			break
		}
		p.tok = token{kind: tIdent, text: p.src[start:p.off], pos: start}
	default:
		p.off++
		p.tok = token{kind: tEOF, pos: start}
		p.err = fmt.Errorf("unexpected character %q at offset %d", c, start)
	}
}

// expr parses unary operands joined by AND or OR. Production has no
// precedence between the two: a chain mixing them must be grouped with
// parentheses, so one chain holds one operator and associates left.
func (p *fparser) expr() fnode {
	l := p.unary()
	op := ""
	for p.err == nil && p.tok.kind == tIdent && (p.tok.text == "AND" || p.tok.text == "OR") {
		if op != "" && p.tok.text != op {
			p.fail("AND and OR must be grouped with parentheses")
			return l
		}
		op = p.tok.text
		p.next()
		r := p.unary()
		if op == "OR" {
			l = fOr{l, r}
		} else {
			l = fAnd{l, r}
		}
	}
	return l
}

func (p *fparser) unary() fnode {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxFilterDepth {
		p.fail("the filter nests too deeply")
		return fHas{}
	}
	if p.tok.kind == tMinus || p.tok.kind == tIdent && p.tok.text == "NOT" {
		p.next()
		return fNot{p.unary()}
	}
	return p.primary()
}

func (p *fparser) expect(k tkind, what string) string {
	if p.err != nil {
		return ""
	}
	if p.tok.kind != k {
		p.fail("expected %s, found %s", what, p.tok)
		return ""
	}
	t := p.tok.text
	p.next()
	return t
}

func (p *fparser) key() string {
	if p.tok.kind == tIdent || p.tok.kind == tString {
		t := p.tok.text
		p.next()
		return t
	}
	p.fail("expected an attribute name, found %s", p.tok)
	return ""
}

func (p *fparser) primary() fnode {
	if p.err != nil {
		return fHas{}
	}
	switch {
	case p.tok.kind == tLParen:
		p.next()
		n := p.expr()
		p.expect(tRParen, `")"`)
		return n
	case p.tok.kind == tIdent && p.tok.text == "hasPrefix":
		p.next()
		p.expect(tLParen, `"("`)
		p.attrWord()
		p.expect(tDot, `"."`)
		k := p.key()
		p.expect(tComma, `","`)
		v := p.expect(tString, "a string")
		p.expect(tRParen, `")"`)
		return fPrefx{k, v}
	case p.tok.kind == tIdent && p.tok.text == "attributes":
		p.next()
		switch p.tok.kind {
		case tColon:
			p.next()
			return fHas{p.key()}
		case tDot:
			p.next()
			k := p.key()
			switch p.tok.kind {
			case tEq:
				p.next()
				return fEq{k, p.expect(tString, "a string")}
			case tNe:
				p.next()
				return fNe{k, p.expect(tString, "a string")}
			}
			p.fail(`expected "=" or "!=", found %s`, p.tok)
			return fHas{}
		}
		p.fail(`expected "." or ":" after attributes, found %s`, p.tok)
		return fHas{}
	}
	p.fail("expected attributes, hasPrefix, NOT or \"(\", found %s", p.tok)
	return fHas{}
}

func (p *fparser) attrWord() {
	if p.tok.kind == tIdent && p.tok.text == "attributes" {
		p.next()
		return
	}
	p.fail("expected attributes, found %s", p.tok)
}
