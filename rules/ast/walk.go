package ast

// Operators of Unary and Binary expressions, as the parser spells them.
const (
	OpOr  = "||"
	OpAnd = "&&"
	OpEq  = "=="
	OpNe  = "!="
	OpLt  = "<"
	OpLe  = "<="
	OpGt  = ">"
	OpGe  = ">="
	OpAdd = "+"
	OpSub = "-"
	OpMul = "*"
	OpDiv = "/"
	OpMod = "%"
	OpNot = "!"
	OpNeg = "-"
)

// Children returns e's direct sub-expressions in source order, skipping
// absent ones (a slice's missing bounds). A namespace or method call's
// receiver is the X of its Fn member.
func Children(e Expr) []Expr {
	var out []Expr
	add := func(xs ...Expr) {
		for _, x := range xs {
			if !IsNil(x) {
				out = append(out, x)
			}
		}
	}
	switch e := e.(type) {
	case *Paren:
		add(e.X)
	case *Unary:
		add(e.X)
	case *Binary:
		add(e.X, e.Y)
	case *In:
		add(e.X, e.Collection)
	case *Is:
		add(e.X)
	case *Ternary:
		add(e.Cond, e.Then, e.Else)
	case *Member:
		add(e.X)
	case *Index:
		add(e.X, e.Index)
	case *Slice:
		add(e.X, e.Lo, e.Hi)
	case *Call:
		add(e.Fn)
		add(e.Args...)
	case *List:
		add(e.Elems...)
	case *Map:
		for _, en := range e.Entries {
			add(en.Key, en.Value)
		}
	case *Path:
		for _, s := range e.Segments {
			if s != nil {
				add(s.Interp)
			}
		}
	}
	return out
}

// IsNil reports whether an expression interface is nil or holds a nil
// pointer.
func IsNil(e Expr) bool {
	if e == nil {
		return true
	}
	switch e := e.(type) {
	case *Literal:
		return e == nil
	case *Ident:
		return e == nil
	case *Unary:
		return e == nil
	case *Binary:
		return e == nil
	case *In:
		return e == nil
	case *Is:
		return e == nil
	case *Ternary:
		return e == nil
	case *Member:
		return e == nil
	case *Index:
		return e == nil
	case *Slice:
		return e == nil
	case *Call:
		return e == nil
	case *List:
		return e == nil
	case *Map:
		return e == nil
	case *Path:
		return e == nil
	case *Paren:
		return e == nil
	case *Bad:
		return e == nil
	}
	return false
}

// Visitor's Visit is called for each node Walk meets; a nil result stops
// the descent into that node's children. After the children, Visit(nil)
// is called, as go/ast does.
type Visitor interface {
	Visit(e Expr) (w Visitor)
}

// Walk traverses e depth-first in source order.
func Walk(v Visitor, e Expr) {
	if IsNil(e) {
		return
	}
	if v = v.Visit(e); v == nil {
		return
	}
	for _, c := range Children(e) {
		Walk(v, c)
	}
	v.Visit(nil)
}

type inspector func(Expr) bool

func (f inspector) Visit(e Expr) Visitor {
	if f(e) {
		return f
	}
	return nil
}

// Inspect calls f for e and its descendants in preorder while f returns
// true, then f(nil) after each node's children.
func Inspect(e Expr, f func(Expr) bool) { Walk(inspector(f), e) }

// Exprs calls f for the root expression of every allow condition, let and
// return in the ruleset (global functions, the service's functions and
// every match block's, nested blocks included), in source order.
func (rs *Ruleset) Exprs(f func(Expr)) {
	fn := func(fs []*Function) {
		for _, x := range fs {
			if x == nil {
				continue
			}
			for _, l := range x.Lets {
				if l != nil && !IsNil(l.Value) {
					f(l.Value)
				}
			}
			if !IsNil(x.Return) {
				f(x.Return)
			}
		}
	}
	var match func(ms []*Match)
	match = func(ms []*Match) {
		for _, m := range ms {
			if m == nil {
				continue
			}
			fn(m.Functions)
			for _, a := range m.Allows {
				if a != nil && !IsNil(a.Cond) {
					f(a.Cond)
				}
			}
			match(m.Matches)
		}
	}
	fn(rs.Functions)
	if rs.Service != nil {
		fn(rs.Service.Functions)
		match(rs.Service.Matches)
	}
}
