// Package expr is the syntax of Realtime Database rule expressions, the
// JavaScript-like language inside the strings of database.rules.json: a
// hand-written lexer, the AST and a recursive-descent parser with
// JavaScript's operator precedence. It knows nothing about what identifiers
// mean; checking and evaluation live in package rtdb.
//
// Offsets are byte offsets into the expression text (the decoded JSON
// string), half-open [Pos, End).
package expr

import (
	"fmt"
	"strconv"
	"strings"
)

// Node is an expression node.
type Node interface {
	Pos() int // offset of the first byte
	End() int // offset just past the last byte
	node()
}

// Ident is a name: auth, data, newData, root, now, or a $variable.
type Ident struct {
	NamePos int
	Name    string
}

// LitKind is the type of a literal.
type LitKind int

// Literal kinds.
const (
	LitNull LitKind = iota
	LitBool
	LitNumber
	LitString
)

// Literal is null, true, false, a number or a string.
type Literal struct {
	ValuePos, ValueEnd int
	Kind               LitKind
	Bool               bool
	Num                float64
	Str                string
	Raw                string // source text
}

// Regex is a regular expression literal /pattern/flags.
type Regex struct {
	ValuePos, ValueEnd int
	Pattern            string
	Flags              string
}

// Array is an array literal [a, b], which RTDB accepts as the argument of
// hasChildren().
type Array struct {
	Lbrack, Rbrack int // Rbrack is the offset of ']'
	Elems          []Node
}

// Paren is a parenthesized expression.
type Paren struct {
	Lparen, Rparen int
	X              Node
}

// Unary is !x or -x.
type Unary struct {
	OpPos int
	Op    string
	X     Node
}

// Binary is x op y for every binary operator, && and || included.
type Binary struct {
	X     Node
	OpPos int
	Op    string
	Y     Node
}

// Cond is the ternary c ? a : b.
type Cond struct {
	Cond, Then, Else Node
}

// Member is x.name.
type Member struct {
	X       Node
	NamePos int
	Name    string
}

// Index is x[i].
type Index struct {
	X              Node
	Lbrack, Rbrack int
	Index          Node
}

// Call is fun(args); Fun is a Member for every method call.
type Call struct {
	Fun            Node
	Lparen, Rparen int
	Args           []Node
}

func (n *Ident) Pos() int   { return n.NamePos }
func (n *Literal) Pos() int { return n.ValuePos }
func (n *Regex) Pos() int   { return n.ValuePos }
func (n *Array) Pos() int   { return n.Lbrack }
func (n *Paren) Pos() int   { return n.Lparen }
func (n *Unary) Pos() int   { return n.OpPos }
func (n *Binary) Pos() int  { return n.X.Pos() }
func (n *Cond) Pos() int    { return n.Cond.Pos() }
func (n *Member) Pos() int  { return n.X.Pos() }
func (n *Index) Pos() int   { return n.X.Pos() }
func (n *Call) Pos() int    { return n.Fun.Pos() }

func (n *Ident) End() int   { return n.NamePos + len(n.Name) }
func (n *Literal) End() int { return n.ValueEnd }
func (n *Regex) End() int   { return n.ValueEnd }
func (n *Array) End() int   { return n.Rbrack + 1 }
func (n *Paren) End() int   { return n.Rparen + 1 }
func (n *Unary) End() int   { return n.X.End() }
func (n *Binary) End() int  { return n.Y.End() }
func (n *Cond) End() int    { return n.Else.End() }
func (n *Member) End() int  { return n.NamePos + len(n.Name) }
func (n *Index) End() int   { return n.Rbrack + 1 }
func (n *Call) End() int    { return n.Rparen + 1 }

func (*Ident) node()   {}
func (*Literal) node() {}
func (*Regex) node()   {}
func (*Array) node()   {}
func (*Paren) node()   {}
func (*Unary) node()   {}
func (*Binary) node()  {}
func (*Cond) node()    {}
func (*Member) node()  {}
func (*Index) node()   {}
func (*Call) node()    {}

// Walk calls fn for n and then, when fn returns true, for each child in
// source order.
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	switch n := n.(type) {
	case *Array:
		for _, e := range n.Elems {
			Walk(e, fn)
		}
	case *Paren:
		Walk(n.X, fn)
	case *Unary:
		Walk(n.X, fn)
	case *Binary:
		Walk(n.X, fn)
		Walk(n.Y, fn)
	case *Cond:
		Walk(n.Cond, fn)
		Walk(n.Then, fn)
		Walk(n.Else, fn)
	case *Member:
		Walk(n.X, fn)
	case *Index:
		Walk(n.X, fn)
		Walk(n.Index, fn)
	case *Call:
		Walk(n.Fun, fn)
		for _, a := range n.Args {
			Walk(a, fn)
		}
	}
}

// Unparen strips any parentheses around n.
func Unparen(n Node) Node {
	for {
		p, ok := n.(*Paren)
		if !ok {
			return n
		}
		n = p.X
	}
}

// Dump prints n as an S-expression, for golden tests and debugging.
func Dump(n Node) string {
	var b strings.Builder
	dump(&b, n)
	return b.String()
}

func dump(b *strings.Builder, n Node) {
	switch n := n.(type) {
	case nil:
		b.WriteString("<nil>")
	case *Ident:
		b.WriteString(n.Name)
	case *Literal:
		switch n.Kind {
		case LitNull:
			b.WriteString("null")
		case LitBool:
			b.WriteString(strconv.FormatBool(n.Bool))
		case LitNumber:
			b.WriteString(strconv.FormatFloat(n.Num, 'g', -1, 64))
		default:
			b.WriteString(strconv.Quote(n.Str))
		}
	case *Regex:
		fmt.Fprintf(b, "/%s/%s", n.Pattern, n.Flags)
	case *Array:
		b.WriteString("[")
		for i, e := range n.Elems {
			if i > 0 {
				b.WriteString(" ")
			}
			dump(b, e)
		}
		b.WriteString("]")
	case *Paren:
		b.WriteString("(paren ")
		dump(b, n.X)
		b.WriteString(")")
	case *Unary:
		fmt.Fprintf(b, "(%s ", n.Op)
		dump(b, n.X)
		b.WriteString(")")
	case *Binary:
		fmt.Fprintf(b, "(%s ", n.Op)
		dump(b, n.X)
		b.WriteString(" ")
		dump(b, n.Y)
		b.WriteString(")")
	case *Cond:
		b.WriteString("(? ")
		dump(b, n.Cond)
		b.WriteString(" ")
		dump(b, n.Then)
		b.WriteString(" ")
		dump(b, n.Else)
		b.WriteString(")")
	case *Member:
		b.WriteString("(. ")
		dump(b, n.X)
		b.WriteString(" " + n.Name + ")")
	case *Index:
		b.WriteString("([] ")
		dump(b, n.X)
		b.WriteString(" ")
		dump(b, n.Index)
		b.WriteString(")")
	case *Call:
		b.WriteString("(call ")
		dump(b, n.Fun)
		for _, a := range n.Args {
			b.WriteString(" ")
			dump(b, a)
		}
		b.WriteString(")")
	}
}
