package expr

import (
	"fmt"
	"strconv"
	"strings"
)

// Node is an expression tree node.
type Node interface {
	// Offset is the node's byte offset in the source.
	Offset() int
	String() string
}

// Lit is a literal: nil, bool, int64, float64 or string.
type Lit struct {
	Off   int
	Value any
}

// Name is an identifier read from the environment (doc, now, auth, $alias).
type Name struct {
	Off  int
	Name string
}

// Member is x.name.
type Member struct {
	Off  int
	X    Node
	Name string
}

// Index is x[i].
type Index struct {
	Off  int
	X, I Node
}

// Call is a built-in call, fn(args...).
type Call struct {
	Off  int
	Fn   string
	Args []Node
}

// Unary is !x or -x.
type Unary struct {
	Off int
	Op  string
	X   Node
}

// Binary is x op y.
type Binary struct {
	Off  int
	Op   string
	X, Y Node
}

// List is a list literal [a, b].
type List struct {
	Off   int
	Elems []Node
}

// Cond is c ? t : f.
type Cond struct {
	Off     int
	C, T, F Node
}

func (n *Lit) Offset() int    { return n.Off }
func (n *Name) Offset() int   { return n.Off }
func (n *Member) Offset() int { return n.Off }
func (n *Index) Offset() int  { return n.Off }
func (n *Call) Offset() int   { return n.Off }
func (n *Unary) Offset() int  { return n.Off }
func (n *Binary) Offset() int { return n.Off }
func (n *Cond) Offset() int   { return n.Off }
func (n *List) Offset() int   { return n.Off }
func (n *List) String() string {
	parts := make([]string, len(n.Elems))
	for i, a := range n.Elems {
		parts[i] = a.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (n *Lit) String() string {
	switch v := n.Value.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	default:
		return fmt.Sprint(v)
	}
}
func (n *Name) String() string   { return n.Name }
func (n *Member) String() string { return n.X.String() + "." + n.Name }
func (n *Index) String() string  { return n.X.String() + "[" + n.I.String() + "]" }
func (n *Call) String() string {
	parts := make([]string, len(n.Args))
	for i, a := range n.Args {
		parts[i] = a.String()
	}
	return n.Fn + "(" + strings.Join(parts, ", ") + ")"
}
func (n *Unary) String() string  { return "(" + n.Op + n.X.String() + ")" }
func (n *Binary) String() string { return "(" + n.X.String() + " " + n.Op + " " + n.Y.String() + ")" }
func (n *Cond) String() string {
	return "(" + n.C.String() + " ? " + n.T.String() + " : " + n.F.String() + ")"
}

// binaryPrec is the one precedence table of the binary operators (higher
// binds tighter); all are left-associative. The conditional ?: binds
// loosest and is right-associative; unary ! and - bind tighter than every
// binary operator.
var binaryPrec = map[string]int{
	"||": 1,
	"&&": 2,
	"==": 3, "!=": 3,
	"<": 4, "<=": 4, ">": 4, ">=": 4,
	"+": 5, "-": 5,
	"*": 6, "/": 6, "%": 6,
}

// Expr is a parsed expression.
type Expr struct {
	Source string
	Root   Node
}

// Parse tokenizes and parses src. Errors are *LexError or *ParseError.
func Parse(src string) (*Expr, error) {
	toks, err := Tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	root, err := p.parseCond(1)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.Kind != EOF {
		return nil, p.errorf(t.Off, "unexpected %s after the expression", describe(t))
	}
	return &Expr{Source: src, Root: root}, nil
}

type parser struct {
	src  string
	toks []Token
	i    int
}

func (p *parser) peek() Token { return p.toks[p.i] }
func (p *parser) next() Token {
	t := p.toks[p.i]
	if t.Kind != EOF {
		p.i++
	}
	return t
}

func (p *parser) errorf(off int, format string, args ...any) error {
	return &ParseError{Pos: posAt(p.src, off), Msg: fmt.Sprintf(format, args...)}
}

func describe(t Token) string {
	switch t.Kind {
	case EOF:
		return "end of expression"
	case String:
		return "string " + strconv.Quote(t.Text)
	default:
		return "'" + t.Text + "'"
	}
}

func (p *parser) depth(off, d int) error {
	if d > MaxDepth {
		return &ParseError{Pos: posAt(p.src, off), Msg: fmt.Sprintf("expression nests deeper than %d levels", MaxDepth), limit: true}
	}
	return nil
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.Kind == Op && t.Text == s
}

func (p *parser) expect(s string) error {
	t := p.peek()
	if t.Kind != Op || t.Text != s {
		return p.errorf(t.Off, "expected '%s', found %s", s, describe(t))
	}
	p.next()
	return nil
}

// parseCond parses c ? t : f (right-associative) at nesting depth d.
func (p *parser) parseCond(d int) (Node, error) {
	if err := p.depth(p.peek().Off, d); err != nil {
		return nil, err
	}
	c, err := p.parseBinary(1, d)
	if err != nil {
		return nil, err
	}
	if !p.isOp("?") {
		return c, nil
	}
	q := p.next()
	t, err := p.parseCond(d + 1)
	if err != nil {
		return nil, err
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	f, err := p.parseCond(d + 1)
	if err != nil {
		return nil, err
	}
	return &Cond{Off: q.Off, C: c, T: t, F: f}, nil
}

// parseBinary is precedence climbing over binaryPrec.
func (p *parser) parseBinary(minPrec, d int) (Node, error) {
	x, err := p.parseUnary(d)
	if err != nil {
		return nil, err
	}
	levels := 0
	for {
		t := p.peek()
		prec, ok := binaryPrec[t.Text]
		if t.Kind != Op || !ok || prec < minPrec {
			return x, nil
		}
		p.next()
		levels++
		if err := p.depth(t.Off, d+levels); err != nil {
			return nil, err
		}
		y, err := p.parseBinary(prec+1, d+levels)
		if err != nil {
			return nil, err
		}
		x = &Binary{Off: t.Off, Op: t.Text, X: x, Y: y}
	}
}

func (p *parser) parseUnary(d int) (Node, error) {
	if err := p.depth(p.peek().Off, d); err != nil {
		return nil, err
	}
	if p.isOp("!") || p.isOp("-") {
		t := p.next()
		x, err := p.parseUnary(d + 1)
		if err != nil {
			return nil, err
		}
		return &Unary{Off: t.Off, Op: t.Text, X: x}, nil
	}
	return p.parsePostfix(d)
}

func (p *parser) parsePostfix(d int) (Node, error) {
	x, err := p.parsePrimary(d)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.Kind != Op {
			return x, nil
		}
		switch t.Text {
		case ".":
			p.next()
			d++
			if err := p.depth(t.Off, d); err != nil {
				return nil, err
			}
			name := p.next()
			if name.Kind != Ident || strings.HasPrefix(name.Text, "$") {
				return nil, p.errorf(name.Off, "expected a field name after '.', found %s", describe(name))
			}
			x = &Member{Off: t.Off, X: x, Name: name.Text}
		case "[":
			p.next()
			d++
			if err := p.depth(t.Off, d); err != nil {
				return nil, err
			}
			i, err := p.parseCond(d + 1)
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			x = &Index{Off: t.Off, X: x, I: i}
		case "(":
			return nil, p.errorf(t.Off, "only built-in functions can be called (%s)", strings.Join(builtinNames(), ", "))
		default:
			return x, nil
		}
	}
}

func (p *parser) parsePrimary(d int) (Node, error) {
	t := p.next()
	switch t.Kind {
	case Int:
		n, err := strconv.ParseInt(t.Text, 10, 64)
		if err != nil {
			return nil, p.errorf(t.Off, "integer %s is out of range", t.Text)
		}
		return &Lit{Off: t.Off, Value: n}, nil
	case Float:
		f, err := strconv.ParseFloat(t.Text, 64)
		if err != nil {
			return nil, p.errorf(t.Off, "number %s is out of range", t.Text)
		}
		return &Lit{Off: t.Off, Value: f}, nil
	case String:
		return &Lit{Off: t.Off, Value: t.Text}, nil
	case Ident:
		switch t.Text {
		case "true":
			return &Lit{Off: t.Off, Value: true}, nil
		case "false":
			return &Lit{Off: t.Off, Value: false}, nil
		case "null":
			return &Lit{Off: t.Off, Value: nil}, nil
		}
		if p.isOp("(") {
			if _, ok := builtins[t.Text]; !ok {
				return nil, p.errorf(t.Off, "unknown function %s (built-ins: %s)", t.Text, strings.Join(builtinNames(), ", "))
			}
			p.next()
			var args []Node
			for !p.isOp(")") {
				if len(args) > 0 {
					if err := p.expect(","); err != nil {
						return nil, err
					}
				}
				a, err := p.parseCond(d + 1)
				if err != nil {
					return nil, err
				}
				args = append(args, a)
			}
			p.next()
			return &Call{Off: t.Off, Fn: t.Text, Args: args}, nil
		}
		return &Name{Off: t.Off, Name: t.Text}, nil
	case Op:
		if t.Text == "[" {
			var elems []Node
			for !p.isOp("]") {
				if len(elems) > 0 {
					if err := p.expect(","); err != nil {
						return nil, err
					}
				}
				a, err := p.parseCond(d + 1)
				if err != nil {
					return nil, err
				}
				elems = append(elems, a)
			}
			p.next()
			return &List{Off: t.Off, Elems: elems}, nil
		}
		if t.Text == "(" {
			x, err := p.parseCond(d + 1)
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return x, nil
		}
	}
	return nil, p.errorf(t.Off, "expected a value, found %s", describe(t))
}
