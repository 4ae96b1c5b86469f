// Package parser turns Security Rules source (Firestore and Storage) into an
// ast.Ruleset. It is a hand-written recursive-descent parser that never
// panics across its API, returns a partial tree together with every
// positioned diagnostic, and bounds nesting so hostile input can't exhaust
// the stack.
package parser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/source"
)

// Diagnostic codes produced by the parser.
const (
	CodeParse = "PARSE_ERROR"
)

const (
	maxErrors = 10
	// maxNesting bounds recursion; production's own nesting limit (99
	// levels, "Expression is too complex to evaluate safely.") is far lower
	// and is checked by package check.
	maxNesting = 400
)

// TypeNames are the type identifiers production accepts after `is`.
var TypeNames = []string{"bool", "bytes", "constraint", "duration", "float", "int", "latlng", "list", "vector", "set", "number", "map", "string", "timestamp", "path", "map_diff"}

type bailout struct{}

type parser struct {
	file  *source.File
	lex   lexer
	tok   token
	prev  token // the last consumed token
	diags source.Diagnostics
	depth int
}

// Parse parses a whole rules file. The returned ruleset is never nil; after
// errors it is partial. Diagnostics are sorted by position.
func Parse(file *source.File) (rs *ast.Ruleset, diags source.Diagnostics) {
	p := newParser(file)
	rs = &ast.Ruleset{File: file, Version: "1"}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
		p.diags.Sort()
		diags = p.diags
	}()
	p.next()
	p.parseRuleset(rs)
	return rs, p.diags
}

// ParseExpr parses a single expression, for tests and tools.
func ParseExpr(file *source.File) (e ast.Expr, diags source.Diagnostics) {
	p := newParser(file)
	e = &ast.Bad{}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
		diags = p.diags
	}()
	p.next()
	e = p.parseExpr()
	if p.tok.kind != tEOF {
		p.errorf(p.tok.start, p.tok.end, "expected end of expression, found %s", p.tok.describe())
	}
	return e, p.diags
}

func newParser(file *source.File) *parser {
	return &parser{file: file, lex: lexer{src: file.Text}}
}

func (p *parser) next() {
	p.prev = p.tok
	p.tok = p.lex.next()
	for p.tok.kind == tIllegal {
		p.errorf(p.tok.start, p.tok.end, "%s", p.tok.val)
		p.tok = p.lex.next()
	}
}

func (p *parser) span(start, end int) source.Span { return p.file.Span(start, end) }

func (p *parser) errorf(start, end int, format string, args ...any) {
	// One diagnostic per position: cascades from the same spot add nothing.
	pos := p.file.Pos(start)
	for _, d := range p.diags {
		if d.Span.Start.Offset == pos.Offset {
			return
		}
	}
	p.diags = append(p.diags, source.Diagnostic{
		Severity: source.Error, Code: CodeParse,
		Message: fmt.Sprintf(format, args...),
		Span:    p.span(start, end),
	})
	if len(p.diags) >= maxErrors {
		panic(bailout{})
	}
}

// expected reports "expected X, found Y" at the current token.
func (p *parser) expected(what string) {
	p.errorf(p.tok.start, p.tok.end, "expected %s, found %s", what, p.tok.describe())
}

func (p *parser) isKeyword(kw string) bool { return p.tok.kind == tIdent && p.tok.text == kw }

// expectOp consumes op or reports it missing; it returns whether it was there.
func (p *parser) expectOp(op string) bool {
	if p.tok.is(op) {
		p.next()
		return true
	}
	p.expected("'" + op + "'")
	return false
}

// optionalSemi consumes a ';' when present: production treats the statement
// terminator after allow, return and rules_version as optional.
func (p *parser) optionalSemi() {
	if p.tok.is(";") {
		p.next()
	}
}

// skipTo skips tokens until one of the given operators at nesting depth 0
// (not consumed), or EOF. Braces, brackets and parentheses are balanced.
func (p *parser) skipTo(stops ...string) {
	depth := 0
	for p.tok.kind != tEOF {
		if p.tok.kind == tOp {
			if depth == 0 {
				for _, s := range stops {
					if p.tok.text == s {
						return
					}
				}
			}
			switch p.tok.text {
			case "{", "(", "[":
				depth++
			case "}", ")", "]":
				if depth == 0 {
					return
				}
				depth--
			}
		}
		p.next()
	}
}

func (p *parser) parseRuleset(rs *ast.Ruleset) {
	if p.isKeyword("rules_version") {
		p.next()
		p.expectOp("=")
		if p.tok.kind == tString {
			rs.Version = p.tok.val
			rs.VersionSpan = p.span(p.tok.start, p.tok.end)
			if rs.Version != "1" && rs.Version != "2" {
				p.errorf(p.tok.start, p.tok.end, "unsupported rules version %s (production accepts '1' and '2')", rs.Version)
			}
			p.next()
		} else {
			p.expected("a version string such as '2'")
		}
		p.optionalSemi()
	}
	for p.tok.kind != tEOF {
		switch {
		case p.isKeyword("function"):
			if f := p.parseFunction(); f != nil {
				rs.Functions = append(rs.Functions, f)
			}
		case p.isKeyword("service"):
			if rs.Service != nil {
				p.errorf(p.tok.start, p.tok.end, "a rules file holds one service block")
			}
			svc := p.parseService()
			if rs.Service == nil {
				rs.Service = svc
			}
		case p.isKeyword("rules_version"):
			p.errorf(p.tok.start, p.tok.end, "rules_version must be the first statement of the file")
			p.skipTo(";")
			p.optionalSemi()
		default:
			p.expected("'service' or 'function'")
			p.next()
			p.skipTo("}")
			if p.tok.is("}") {
				p.next()
			}
		}
	}
	if rs.Service == nil {
		p.errorf(len(p.file.Text), len(p.file.Text), "missing service block (e.g. service cloud.firestore { ... })")
	}
}

func (p *parser) parseService() *ast.Service {
	start := p.tok.start
	p.next() // service
	svc := &ast.Service{}
	if p.tok.kind != tIdent {
		p.expected("a service name such as cloud.firestore")
	} else {
		nameStart := p.tok.start
		name := p.tok.text
		p.next()
		for p.tok.is(".") {
			p.next()
			if p.tok.kind != tIdent {
				p.expected("a name after '.'")
				break
			}
			name += "." + p.tok.text
			p.next()
		}
		svc.Name = name
		svc.NameSpan = p.span(nameStart, p.prev.end)
	}
	if !p.expectOp("{") {
		p.skipTo("{")
		if !p.tok.is("{") {
			svc.Span = p.span(start, p.prev.end)
			return svc
		}
		p.next()
	}
	for !p.tok.is("}") && p.tok.kind != tEOF {
		switch {
		case p.isKeyword("function"):
			if f := p.parseFunction(); f != nil {
				svc.Functions = append(svc.Functions, f)
			}
		case p.isKeyword("match"):
			if m := p.parseMatch(); m != nil {
				svc.Matches = append(svc.Matches, m)
			}
		case p.isKeyword("allow"):
			p.errorf(p.tok.start, p.tok.end, "allow statements belong inside a match block")
			p.parseAllow()
		default:
			p.expected("'match' or 'function'")
			p.next()
			p.skipTo(";", "}")
			p.optionalSemi()
		}
	}
	p.expectOp("}")
	svc.Span = p.span(start, p.prev.end)
	return svc
}

func (p *parser) parseMatch() *ast.Match {
	start := p.tok.start
	// Rescan the raw text after `match`: path segments are not tokens.
	p.lex.pos = p.tok.end
	m := &ast.Match{Path: p.scanMatchPath()}
	p.lex.prevOperand = false
	p.next()
	if !p.expectOp("{") {
		p.skipTo("{", "}")
		if !p.tok.is("{") {
			m.Span = p.span(start, p.prev.end)
			return m
		}
		p.next()
	}
	for !p.tok.is("}") && p.tok.kind != tEOF {
		switch {
		case p.isKeyword("function"):
			if f := p.parseFunction(); f != nil {
				m.Functions = append(m.Functions, f)
			}
		case p.isKeyword("match"):
			if c := p.parseMatch(); c != nil {
				m.Matches = append(m.Matches, c)
			}
		case p.isKeyword("allow"):
			if a := p.parseAllow(); a != nil {
				m.Allows = append(m.Allows, a)
			}
		default:
			p.expected("'allow', 'match' or 'function'")
			p.next()
			p.skipTo(";", "}")
			p.optionalSemi()
		}
	}
	p.expectOp("}")
	m.Span = p.span(start, p.prev.end)
	return m
}

// scanMatchPath reads /seg/{var}/{rest=**} from the raw source at lex.pos.
func (p *parser) scanMatchPath() *ast.MatchPath {
	p.lex.skipSpace()
	src := p.lex.src
	start := p.lex.pos
	mp := &ast.MatchPath{}
	if p.lex.pos >= len(src) || src[p.lex.pos] != '/' {
		p.errorf(p.lex.pos, p.lex.pos+1, "expected a path starting with '/' after 'match'")
		mp.Span = p.span(start, start)
		return mp
	}
	for p.lex.pos < len(src) && src[p.lex.pos] == '/' {
		p.lex.pos++
		segStart := p.lex.pos
		switch {
		case p.lex.pos < len(src) && src[p.lex.pos] == '{':
			end := strings.IndexByte(src[p.lex.pos:], '}')
			nl := strings.IndexByte(src[p.lex.pos:], '\n')
			if end < 0 || (nl >= 0 && nl < end) {
				p.errorf(segStart, segStart+1, "wildcard segment is never closed (missing })")
				mp.Span = p.span(start, p.lex.pos)
				return mp
			}
			inner := strings.TrimSpace(src[p.lex.pos+1 : p.lex.pos+end])
			p.lex.pos += end + 1
			seg := &ast.Segment{Kind: ast.SegWildcard, Text: inner, Span: p.span(segStart, p.lex.pos)}
			if name, rest, ok := strings.Cut(inner, "="); ok {
				seg.Kind = ast.SegRecursive
				seg.Text = strings.TrimSpace(name)
				if strings.TrimSpace(rest) != "**" {
					p.errorf(segStart, p.lex.pos, "a recursive wildcard is written {%s=**}", seg.Text)
				}
			}
			if !validIdent(seg.Text) {
				p.errorf(segStart, p.lex.pos, "wildcard name %q is not an identifier", seg.Text)
			}
			mp.Segments = append(mp.Segments, seg)
		case p.lex.pos < len(src) && (isPathChar(src[p.lex.pos]) || src[p.lex.pos] == '(' || src[p.lex.pos] == '$'):
			for p.lex.pos < len(src) && (isPathChar(src[p.lex.pos]) || strings.IndexByte("()$", src[p.lex.pos]) >= 0) {
				p.lex.pos++
			}
			mp.Segments = append(mp.Segments, &ast.Segment{Kind: ast.SegLiteral, Text: src[segStart:p.lex.pos], Span: p.span(segStart, p.lex.pos)})
		default:
			if len(mp.Segments) == 0 && (p.lex.pos >= len(src) || src[p.lex.pos] == ' ' || src[p.lex.pos] == '{') {
				// "match /" alone: an empty path
				mp.Span = p.span(start, p.lex.pos)
				return mp
			}
			p.errorf(segStart-1, segStart, "expected a path segment after '/'")
			mp.Span = p.span(start, p.lex.pos)
			return mp
		}
	}
	mp.Span = p.span(start, p.lex.pos)
	return mp
}

func validIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func (p *parser) parseAllow() *ast.Allow {
	start := p.tok.start
	p.next() // allow
	a := &ast.Allow{}
	for {
		if p.tok.kind != tIdent {
			p.expected("a method (read, write, get, list, create, update, delete)")
			p.skipTo(";", "}")
			p.optionalSemi()
			a.Span = p.span(start, p.prev.end)
			return a
		}
		a.Methods = append(a.Methods, ast.Method{Name: p.tok.text, Span: p.span(p.tok.start, p.tok.end)})
		p.next()
		if !p.tok.is(",") {
			break
		}
		p.next()
	}
	if p.tok.is(":") {
		p.next()
		if !p.isKeyword("if") {
			p.expected("'if'")
			p.skipTo(";", "}")
			p.optionalSemi()
			a.Span = p.span(start, p.prev.end)
			return a
		}
		p.next()
		if p.tok.is(";") || p.tok.is("}") || p.tok.kind == tEOF {
			// Production's wording and position (the token after 'if').
			p.errorf(p.tok.start, p.tok.end, "Missing conditional expression after 'if'.")
		} else {
			a.Cond = p.parseExpr()
		}
	}
	if !p.tok.is(";") && !p.tok.is("}") {
		p.expected("';' or '}' after the allow condition")
		p.skipTo(";", "}")
	}
	p.optionalSemi()
	a.Span = p.span(start, p.prev.end)
	return a
}

func (p *parser) parseFunction() *ast.Function {
	start := p.tok.start
	p.next() // function
	f := &ast.Function{}
	if p.tok.kind != tIdent {
		p.expected("a function name")
		p.skipTo("}")
		p.optionalClose()
		return nil
	}
	f.Name = p.tok.text
	f.NameSpan = p.span(p.tok.start, p.tok.end)
	p.next()
	if p.expectOp("(") {
		for !p.tok.is(")") && p.tok.kind != tEOF {
			if p.tok.kind != tIdent {
				p.expected("a parameter name")
				p.skipTo(")", "{")
				break
			}
			f.Params = append(f.Params, &ast.Ident{Name: p.tok.text, Sp: p.span(p.tok.start, p.tok.end)})
			p.next()
			if p.tok.is(",") {
				p.next()
			} else if !p.tok.is(")") {
				p.expected("',' or ')'")
				p.skipTo(")", "{")
				break
			}
		}
		if p.tok.is(")") {
			p.next()
		}
	}
	if !p.expectOp("{") {
		p.skipTo("}")
		p.optionalClose()
		f.Span = p.span(start, p.prev.end)
		return f
	}
	for p.isKeyword("let") {
		letStart := p.tok.start
		p.next()
		if p.tok.kind != tIdent {
			p.expected("a variable name after 'let'")
			p.skipTo(";", "}")
			p.optionalSemi()
			continue
		}
		name := &ast.Ident{Name: p.tok.text, Sp: p.span(p.tok.start, p.tok.end)}
		p.next()
		if !p.expectOp("=") {
			p.skipTo(";", "}")
			p.optionalSemi()
			continue
		}
		val := p.parseExpr()
		f.Lets = append(f.Lets, &ast.Let{Name: name, Value: val, Span: p.span(letStart, p.prev.end)})
		switch {
		case p.tok.is(";"):
			p.next()
		case p.isKeyword("let") || p.isKeyword("return"):
			p.errorf(p.tok.start, p.tok.end, "missing ';' at %s", p.tok.describe())
		default:
			p.errorf(p.tok.start, p.tok.end, "missing ';' at %s", p.tok.describe())
			p.skipTo(";", "}")
			p.optionalSemi()
		}
	}
	if p.isKeyword("return") {
		p.next()
		f.Return = p.parseExpr()
		p.optionalSemi()
	} else {
		p.expected("'let' or 'return'")
		p.skipTo("}")
	}
	if !p.tok.is("}") {
		p.expected("'}' closing the function")
		p.skipTo("}")
	}
	p.optionalClose()
	f.Span = p.span(start, p.prev.end)
	return f
}

func (p *parser) optionalClose() {
	if p.tok.is("}") {
		p.next()
	}
}

// Expressions, lowest precedence first: ternary, ||, &&, in/is, ==/!=,
// relational, additive, multiplicative, unary, postfix. Binary operators
// associate left; the ternary associates right.

func (p *parser) enter() {
	p.depth++
	if p.depth > maxNesting {
		p.errorf(p.tok.start, p.tok.end, "expression is nested too deeply")
		panic(bailout{})
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) parseExpr() ast.Expr {
	p.enter()
	defer p.leave()
	cond := p.parseOr()
	if !p.tok.is("?") {
		return cond
	}
	p.next()
	then := p.parseExpr()
	if !p.expectOp(":") {
		return &ast.Ternary{Cond: cond, Then: then, Else: &ast.Bad{Sp: p.span(p.tok.start, p.tok.start)}, Sp: p.span(cond.Span().Start.Offset, p.prev.end)}
	}
	els := p.parseExpr()
	return &ast.Ternary{Cond: cond, Then: then, Else: els, Sp: p.span(cond.Span().Start.Offset, els.Span().End.Offset)}
}

func (p *parser) binary(x ast.Expr, op token, y ast.Expr) ast.Expr {
	return &ast.Binary{Op: op.text, X: x, Y: y, OpSpan: p.span(op.start, op.end), Sp: p.span(x.Span().Start.Offset, y.Span().End.Offset)}
}

func (p *parser) parseOr() ast.Expr {
	x := p.parseAnd()
	for p.tok.is("||") {
		op := p.tok
		p.next()
		x = p.binary(x, op, p.parseAnd())
	}
	return x
}

func (p *parser) parseAnd() ast.Expr {
	x := p.parseInIs()
	for p.tok.is("&&") {
		op := p.tok
		p.next()
		x = p.binary(x, op, p.parseInIs())
	}
	return x
}

func (p *parser) parseInIs() ast.Expr {
	x := p.parseEquality()
	for {
		switch {
		case p.isKeyword("in"):
			op := p.tok
			p.next()
			y := p.parseEquality()
			x = &ast.In{X: x, Collection: y, OpSpan: p.span(op.start, op.end), Sp: p.span(x.Span().Start.Offset, y.Span().End.Offset)}
		case p.isKeyword("is"):
			op := p.tok
			p.next()
			if p.tok.kind != tIdent {
				p.expected("a type name after 'is'")
				return x
			}
			typ := p.tok
			p.next()
			if !isTypeName(typ.text) {
				p.errorf(typ.start, typ.end, "An unsupported type identifier was used with the 'is' operator. Received %s. Expected one of %s", typ.text, strings.Join(TypeNames, ","))
			}
			x = &ast.Is{X: x, Type: typ.text, TypeSpan: p.span(typ.start, typ.end), OpSpan: p.span(op.start, op.end), Sp: p.span(x.Span().Start.Offset, typ.end)}
			// `is` is a postfix operator in production's grammar: a
			// tighter-binding operator may follow it and takes the whole
			// `x is T` as its left operand (`a is bool < 3` is `(a is
			// bool) < 3`).
			x = p.continueTighter(x)
		default:
			return x
		}
	}
}

// continueTighter continues parsing binary operators that bind tighter
// than in/is, with x as the left operand.
func (p *parser) continueTighter(x ast.Expr) ast.Expr {
	for {
		switch {
		case p.tok.is("==") || p.tok.is("!="):
			op := p.tok
			p.next()
			x = p.binary(x, op, p.parseRelational())
		case p.tok.is("<") || p.tok.is("<=") || p.tok.is(">") || p.tok.is(">="):
			op := p.tok
			p.next()
			x = p.binary(x, op, p.parseAdditive())
		case p.tok.is("+") || p.tok.is("-"):
			op := p.tok
			p.next()
			x = p.binary(x, op, p.parseMultiplicative())
		case p.tok.is("*") || p.tok.is("/") || p.tok.is("%"):
			op := p.tok
			p.next()
			x = p.binary(x, op, p.parseUnary())
		default:
			return x
		}
	}
}

func isTypeName(s string) bool {
	for _, t := range TypeNames {
		if t == s {
			return true
		}
	}
	return false
}

func (p *parser) parseEquality() ast.Expr {
	x := p.parseRelational()
	for {
		switch {
		case p.tok.is("==") || p.tok.is("!="):
			op := p.tok
			p.next()
			x = p.binary(x, op, p.parseRelational())
		case p.tok.is("===") || p.tok.is("!=="):
			want := p.tok.text[:2]
			p.errorf(p.tok.start, p.tok.end, "'%s' is not a rules operator; use '%s'", p.tok.text, want)
			op := p.tok
			op.text = want
			p.next()
			x = p.binary(x, op, p.parseRelational())
		default:
			return x
		}
	}
}

func (p *parser) parseRelational() ast.Expr {
	x := p.parseAdditive()
	for p.tok.is("<") || p.tok.is("<=") || p.tok.is(">") || p.tok.is(">=") {
		op := p.tok
		p.next()
		x = p.binary(x, op, p.parseAdditive())
	}
	return x
}

func (p *parser) parseAdditive() ast.Expr {
	x := p.parseMultiplicative()
	for p.tok.is("+") || p.tok.is("-") {
		op := p.tok
		p.next()
		x = p.binary(x, op, p.parseMultiplicative())
	}
	return x
}

func (p *parser) parseMultiplicative() ast.Expr {
	x := p.parseUnary()
	for p.tok.is("*") || p.tok.is("/") || p.tok.is("%") {
		op := p.tok
		if op.text == "/" && op.end < len(p.lex.src) && startsPathSegment(p.lex.src[op.end]) {
			// Production lexes "/x" as a path segment even here.
			p.errorf(op.start, op.end+1, "'/' directly followed by %q starts a path; put a space after '/' to divide", p.lex.src[op.end])
		}
		p.next()
		x = p.binary(x, op, p.parseUnary())
	}
	return x
}

func startsPathSegment(c byte) bool { return isPathChar(c) || c == '$' || c == '(' }

func (p *parser) parseUnary() ast.Expr {
	p.enter()
	defer p.leave()
	switch {
	case p.tok.is("!"):
		op := p.tok
		p.next()
		x := p.parseUnary()
		return &ast.Unary{Op: "!", X: x, OpPos: p.file.Pos(op.start), Sp: p.span(op.start, x.Span().End.Offset)}
	case p.tok.is("-"):
		op := p.tok
		p.next()
		if p.tok.is("-") {
			p.errorf(p.tok.start, p.tok.end, "unexpected '-' (write -(-x) to negate twice)")
		}
		x := p.parseUnary()
		// Fold -<number literal> so the most negative int literal works.
		if lit, ok := x.(*ast.Literal); ok && (lit.Kind == ast.Int || lit.Kind == ast.Float) && lit.Sp.Start.Offset == op.end {
			return p.negateLiteral(op, lit)
		}
		return &ast.Unary{Op: "-", X: x, OpPos: p.file.Pos(op.start), Sp: p.span(op.start, x.Span().End.Offset)}
	case p.tok.is("--") || p.tok.is("++"):
		p.errorf(p.tok.start, p.tok.end, "Increment (++) and decrement (--) operators are not supported.")
		p.next()
		return p.parseUnary()
	}
	return p.parsePostfix(p.parsePrimary())
}

func (p *parser) negateLiteral(op token, lit *ast.Literal) ast.Expr {
	n := *lit
	n.Raw = "-" + lit.Raw
	n.Sp = p.span(op.start, lit.Sp.End.Offset)
	if lit.Kind == ast.Float {
		n.Float = -lit.Float
		return &n
	}
	v, err := strconv.ParseInt("-"+strings.TrimPrefix(lit.Raw, "+"), 10, 64)
	if err != nil {
		p.errorf(op.start, lit.Sp.End.Offset, "integer literal %s is out of range", n.Raw)
	}
	n.Int = v
	return &n
}

func (p *parser) parsePostfix(x ast.Expr) ast.Expr {
	for {
		switch {
		case p.tok.is("."):
			p.next()
			if p.tok.kind != tIdent {
				p.expected("a field or method name after '.'")
				return x
			}
			name := p.tok
			p.next()
			m := &ast.Member{X: x, Name: name.text, NameSp: p.span(name.start, name.end), Sp: p.span(x.Span().Start.Offset, name.end)}
			if p.tok.is("(") {
				x = p.parseCall(m)
			} else {
				x = m
			}
		case p.tok.is("?."):
			p.errorf(p.tok.start, p.tok.end, "optional chaining '?.' is not part of the rules language; guard with 'in' or map.get()")
			p.next()
		case p.tok.is("["):
			x = p.parseIndex(x)
		default:
			return x
		}
	}
}

func (p *parser) parseIndex(x ast.Expr) ast.Expr {
	p.next() // [
	var lo, hi ast.Expr
	if !p.tok.is(":") {
		lo = p.parseExpr()
	}
	if p.tok.is(":") {
		p.next()
		if !p.tok.is("]") {
			hi = p.parseExpr()
		}
		p.expectOp("]")
		return &ast.Slice{X: x, Lo: lo, Hi: hi, Sp: p.span(x.Span().Start.Offset, p.prev.end)}
	}
	p.expectOp("]")
	return &ast.Index{X: x, Index: lo, Sp: p.span(x.Span().Start.Offset, p.prev.end)}
}

func (p *parser) parseCall(fn ast.Expr) ast.Expr {
	lparen := p.tok
	p.next()
	args := p.parseList(")")
	return &ast.Call{Fn: fn, Args: args, Lparen: p.file.Pos(lparen.start), Sp: p.span(fn.Span().Start.Offset, p.prev.end)}
}

// parseList parses comma-separated expressions up to close (consumed); a
// trailing comma is allowed.
func (p *parser) parseList(close string) []ast.Expr {
	var out []ast.Expr
	for !p.tok.is(close) && p.tok.kind != tEOF {
		out = append(out, p.parseExpr())
		if p.tok.is(",") {
			p.next()
			continue
		}
		if !p.tok.is(close) {
			p.expected("',' or '" + close + "'")
			p.skipTo(close, ";")
			break
		}
	}
	p.expectOp(close)
	return out
}

func (p *parser) parsePrimary() ast.Expr {
	t := p.tok
	switch t.kind {
	case tInt:
		p.next()
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			// Production: "Integer value is out of the [...] range."; the most
			// negative value is handled by negateLiteral via the raw text.
			if t.text != "9223372036854775808" {
				p.errorf(t.start, t.end, "integer literal %s is out of range [-9223372036854775808, 9223372036854775807]", t.text)
			}
		}
		return &ast.Literal{Kind: ast.Int, Int: v, Raw: t.text, Sp: p.span(t.start, t.end)}
	case tFloat:
		p.next()
		v, _ := strconv.ParseFloat(t.text, 64)
		return &ast.Literal{Kind: ast.Float, Float: v, Raw: t.text, Sp: p.span(t.start, t.end)}
	case tString:
		p.next()
		return &ast.Literal{Kind: ast.String, Str: t.val, Raw: t.text, Sp: p.span(t.start, t.end)}
	case tBytes:
		p.next()
		return &ast.Literal{Kind: ast.Bytes, Str: t.val, Raw: t.text, Sp: p.span(t.start, t.end)}
	case tIdent:
		p.next()
		sp := p.span(t.start, t.end)
		switch t.text {
		case "true", "false":
			return &ast.Literal{Kind: ast.Bool, Bool: t.text == "true", Raw: t.text, Sp: sp}
		case "null":
			return &ast.Literal{Kind: ast.Null, Raw: t.text, Sp: sp}
		}
		id := &ast.Ident{Name: t.text, Sp: sp}
		if p.tok.is("(") {
			return p.parseCall(id)
		}
		return id
	case tOp:
		switch t.text {
		case "(":
			p.next()
			x := p.parseExpr()
			p.expectOp(")")
			return &ast.Paren{X: x, Sp: p.span(t.start, p.prev.end)}
		case "[":
			p.next()
			elems := p.parseList("]")
			return &ast.List{Elems: elems, Sp: p.span(t.start, p.prev.end)}
		case "{":
			return p.parseMap()
		case "/":
			return p.parsePath()
		}
	}
	p.expected("an expression")
	if t.kind != tEOF && !t.is(";") && !t.is("}") && !t.is(")") && !t.is("]") {
		p.next()
	}
	return &ast.Bad{Sp: p.span(t.start, t.end)}
}

func (p *parser) parseMap() ast.Expr {
	start := p.tok.start
	p.next() // {
	m := &ast.Map{}
	for !p.tok.is("}") && p.tok.kind != tEOF {
		k := p.parseExpr()
		if !p.expectOp(":") {
			p.skipTo("}", ";")
			break
		}
		v := p.parseExpr()
		m.Entries = append(m.Entries, ast.MapEntry{Key: k, Value: v})
		if p.tok.is(",") {
			p.next()
			continue
		}
		if !p.tok.is("}") {
			p.expected("',' or '}'")
			p.skipTo("}", ";")
			break
		}
	}
	p.expectOp("}")
	m.Sp = p.span(start, p.prev.end)
	return m
}

// parsePath parses a path literal starting at the current '/' token by
// rescanning the raw source: /databases/$(database)/documents/users/$(uid).
func (p *parser) parsePath() ast.Expr {
	src := p.lex.src
	start := p.tok.start
	path := &ast.Path{}
	pos := start
	for pos < len(src) && src[pos] == '/' {
		segStart := pos + 1
		if segStart >= len(src) {
			break
		}
		c := src[segStart]
		switch {
		case c == '$' && segStart+1 < len(src) && src[segStart+1] == '(':
			p.lex.pos = segStart + 2
			p.lex.prevOperand = false
			p.next()
			x := p.parseExpr()
			if !p.tok.is(")") {
				p.expected("')' closing $(...)")
				path.Sp = p.span(start, p.tok.start)
				return path
			}
			pos = p.tok.end
			path.Segments = append(path.Segments, &ast.PathSegment{Interp: x, Sp: p.span(segStart, pos)})
		case c == '{':
			end := strings.IndexAny(src[segStart:], "}\n")
			stop := len(src)
			if end >= 0 {
				stop = segStart + end + 1
			}
			name := strings.Trim(src[segStart:stop], "{}")
			p.errorf(segStart, stop, "{%s} inside a path literal is not interpolated; write $(%s)", name, name)
			path.Segments = append(path.Segments, &ast.PathSegment{Text: src[segStart:stop], Sp: p.span(segStart, stop)})
			pos = stop
		case isPathChar(c) || c == '(':
			pos = segStart
			for pos < len(src) && (isPathChar(src[pos]) || src[pos] == '(' || src[pos] == ')') {
				if src[pos] == ')' && !strings.Contains(src[segStart:pos], "(") {
					break // the ')' closes an enclosing call: get(/a/b)
				}
				pos++
			}
			path.Segments = append(path.Segments, &ast.PathSegment{Text: src[segStart:pos], Sp: p.span(segStart, pos)})
		default:
			if len(path.Segments) == 0 {
				p.errorf(start, start+1, "expected an expression, found '/'")
			}
			pos = segStart - 1
			goto done
		}
	}
done:
	if pos == start {
		pos = start + 1
	}
	p.lex.pos = pos
	p.lex.prevOperand = true
	p.next()
	path.Sp = p.span(start, pos)
	return path
}
