package expr

import (
	"fmt"
	"strings"
)

// Error is a syntax error at [Pos, EndPos) of the expression text.
type Error struct {
	Pos, EndPos int
	Msg         string
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Pos, e.Msg) }

// MaxDepth is how deeply expressions may nest (parentheses, unary operators,
// operands of binary operators, call arguments). Deeper input is a syntax
// error rather than a stack overflow.
const MaxDepth = 100

// Precedence, loosest first, all binary operators left-associative (as in
// JavaScript):
//
//	?:                     right-associative ternary
//	||
//	&&
//	== != === !==
//	< <= > >=
//	+ -
//	* / %
//	! -                    prefix
//	. [] ()                postfix member, index, call
var binaryLevels = [][]string{
	{"||"},
	{"&&"},
	{"==", "!=", "===", "!=="},
	{"<", "<=", ">", ">="},
	{"+", "-"},
	{"*", "/", "%"},
}

// Parse parses one rule expression. It returns the tree, or the first syntax
// error. It never panics.
func Parse(src string) (n Node, err *Error) {
	p := &parser{lex: lexer{src: src}}
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, &Error{Pos: 0, EndPos: len(src), Msg: fmt.Sprintf("internal parser error: %v", r)}
		}
	}()
	p.advance()
	if p.err != nil {
		return nil, p.err
	}
	if p.tok.kind == tEOF {
		return nil, &Error{Pos: 0, EndPos: len(src), Msg: "empty expression"}
	}
	n = p.ternary(0)
	if p.err != nil {
		return nil, p.err
	}
	if p.tok.kind != tEOF {
		p.failTok("unexpected %s after the end of the expression", p.describe())
		return nil, p.err
	}
	return n, nil
}

type parser struct {
	lex lexer
	tok token
	// prevOperand reports whether the last consumed token ends an operand,
	// which decides whether '/' is division or a regex literal.
	prevOperand bool
	err         *Error
}

func (p *parser) advance() {
	if p.err != nil {
		return
	}
	t, err := p.lex.next(!p.prevOperand)
	if err != nil {
		p.err = err
		p.tok = token{kind: tEOF, pos: err.Pos, end: err.Pos}
		return
	}
	p.tok = t
	switch t.kind {
	case tIdent, tNumber, tString, tRegex:
		p.prevOperand = true
	case tOp:
		p.prevOperand = t.text == ")" || t.text == "]"
	default:
		p.prevOperand = false
	}
}

func (p *parser) fail(pos, end int, format string, args ...any) {
	if p.err == nil {
		if end <= pos {
			end = pos + 1
		}
		p.err = &Error{Pos: pos, EndPos: end, Msg: fmt.Sprintf(format, args...)}
	}
}

func (p *parser) failTok(format string, args ...any) {
	p.fail(p.tok.pos, p.tok.end, format, args...)
}

func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "end of expression"
	case tIdent:
		return fmt.Sprintf("identifier %s", p.tok.text)
	case tNumber:
		return fmt.Sprintf("number %s", p.tok.text)
	case tString:
		return fmt.Sprintf("string %s", p.tok.text)
	case tRegex:
		return fmt.Sprintf("regular expression %s", p.tok.text)
	}
	return fmt.Sprintf("'%s'", p.tok.text)
}

func (p *parser) isOp(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) expect(op string) int {
	pos := p.tok.pos
	if !p.isOp(op) {
		p.failTok("expected '%s', found %s", op, p.describe())
		return pos
	}
	p.advance()
	return pos
}

func (p *parser) tooDeep(depth int) bool {
	if depth > MaxDepth {
		p.failTok("expression is nested too deeply (more than %d levels)", MaxDepth)
		return true
	}
	return false
}

func (p *parser) ternary(depth int) Node {
	if p.tooDeep(depth) {
		return nil
	}
	c := p.binary(0, depth)
	if p.err != nil || !p.isOp("?") {
		return c
	}
	p.advance()
	then := p.ternary(depth + 1)
	if p.err != nil {
		return nil
	}
	p.expect(":")
	if p.err != nil {
		return nil
	}
	els := p.ternary(depth + 1)
	if p.err != nil {
		return nil
	}
	return &Cond{Cond: c, Then: then, Else: els}
}

func (p *parser) binary(level, depth int) Node {
	if level == len(binaryLevels) {
		return p.unary(depth)
	}
	x := p.binary(level+1, depth)
	for p.err == nil && p.tok.kind == tOp && contains(binaryLevels[level], p.tok.text) {
		op, pos := p.tok.text, p.tok.pos
		p.advance()
		y := p.binary(level+1, depth)
		if p.err != nil {
			return nil
		}
		x = &Binary{X: x, OpPos: pos, Op: op, Y: y}
	}
	if p.err != nil {
		return nil
	}
	return x
}

func contains(ops []string, s string) bool {
	for _, o := range ops {
		if o == s {
			return true
		}
	}
	return false
}

func (p *parser) unary(depth int) Node {
	if p.tooDeep(depth) {
		return nil
	}
	if p.isOp("!") || p.isOp("-") {
		op, pos := p.tok.text, p.tok.pos
		p.advance()
		x := p.unary(depth + 1)
		if p.err != nil {
			return nil
		}
		return &Unary{OpPos: pos, Op: op, X: x}
	}
	if p.isOp("+") {
		p.failTok("unary '+' is not supported")
		return nil
	}
	return p.postfix(depth)
}

func (p *parser) postfix(depth int) Node {
	x := p.primary(depth)
	for p.err == nil {
		switch {
		case p.isOp("."):
			p.advance()
			if p.tok.kind != tIdent {
				p.failTok("expected a property or method name after '.', found %s", p.describe())
				return nil
			}
			x = &Member{X: x, NamePos: p.tok.pos, Name: p.tok.text}
			p.advance()
		case p.isOp("["):
			lb := p.tok.pos
			p.advance()
			i := p.ternary(depth + 1)
			if p.err != nil {
				return nil
			}
			rb := p.expect("]")
			if p.err != nil {
				return nil
			}
			x = &Index{X: x, Lbrack: lb, Rbrack: rb, Index: i}
		case p.isOp("("):
			lp := p.tok.pos
			p.advance()
			var args []Node
			for p.err == nil && !p.isOp(")") {
				if len(args) > 0 {
					p.expect(",")
					if p.err != nil {
						return nil
					}
				}
				a := p.ternary(depth + 1)
				if p.err != nil {
					return nil
				}
				args = append(args, a)
			}
			rp := p.expect(")")
			if p.err != nil {
				return nil
			}
			x = &Call{Fun: x, Lparen: lp, Rparen: rp, Args: args}
		default:
			return x
		}
	}
	return nil
}

func (p *parser) primary(depth int) Node {
	t := p.tok
	switch t.kind {
	case tIdent:
		p.advance()
		switch t.text {
		case "true", "false":
			return &Literal{ValuePos: t.pos, ValueEnd: t.end, Kind: LitBool, Bool: t.text == "true", Raw: t.text}
		case "null":
			return &Literal{ValuePos: t.pos, ValueEnd: t.end, Kind: LitNull, Raw: t.text}
		case "undefined", "function", "var", "let", "const", "return", "new", "typeof", "instanceof", "in", "this":
			p.fail(t.pos, t.end, "'%s' is not supported in rule expressions", t.text)
			return nil
		}
		return &Ident{NamePos: t.pos, Name: t.text}
	case tNumber:
		p.advance()
		return &Literal{ValuePos: t.pos, ValueEnd: t.end, Kind: LitNumber, Num: t.num, Raw: t.text}
	case tString:
		p.advance()
		return &Literal{ValuePos: t.pos, ValueEnd: t.end, Kind: LitString, Str: t.str, Raw: t.text}
	case tRegex:
		p.advance()
		return &Regex{ValuePos: t.pos, ValueEnd: t.end, Pattern: t.str, Flags: t.flags}
	case tEOF:
		p.failTok("unexpected end of expression, expected an operand")
		return nil
	}
	switch t.text {
	case "(":
		p.advance()
		x := p.ternary(depth + 1)
		if p.err != nil {
			return nil
		}
		rp := p.expect(")")
		if p.err != nil {
			return nil
		}
		return &Paren{Lparen: t.pos, Rparen: rp, X: x}
	case "[":
		p.advance()
		var elems []Node
		for p.err == nil && !p.isOp("]") {
			if len(elems) > 0 {
				p.expect(",")
				if p.err != nil {
					return nil
				}
			}
			e := p.ternary(depth + 1)
			if p.err != nil {
				return nil
			}
			elems = append(elems, e)
		}
		rb := p.expect("]")
		if p.err != nil {
			return nil
		}
		return &Array{Lbrack: t.pos, Rbrack: rb, Elems: elems}
	}
	msg := fmt.Sprintf("unexpected %s, expected an operand", p.describe())
	if strings.ContainsAny(t.text, "=<>!&|+*%/") {
		msg = fmt.Sprintf("unexpected operator '%s': it needs an operand on its left", t.text)
	}
	p.failTok("%s", msg)
	return nil
}
