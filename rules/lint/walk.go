package lint

import (
	"strconv"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/source"
)

// children returns e's direct sub-expressions in source order.
func children(e ast.Expr) []ast.Expr { return ast.Children(e) }

// inspect calls fn for e and, when fn returns true, for every descendant,
// in preorder (ast.Inspect). It passes each node's parent (nil for e).
// Nil expressions are skipped.
func inspect(e ast.Expr, fn func(e, parent ast.Expr) bool) {
	var stack []ast.Expr // the nodes whose children are being visited
	ast.Inspect(e, func(x ast.Expr) bool {
		if x == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		var parent ast.Expr
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		if !fn(x, parent) {
			return false
		}
		stack = append(stack, x)
		return true
	})
}

// isNil reports whether an expression interface is nil or holds a nil
// pointer (partial trees can have either).
func isNil(e ast.Expr) bool { return ast.IsNil(e) }

// unparen strips parentheses.
func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.Paren)
		if !ok || p == nil {
			return e
		}
		e = p.X
	}
}

// memberPath returns the names of a chain of identifiers, member accesses
// and string-literal indexes (request.auth.uid, request['auth']), or nil
// for anything else.
func memberPath(e ast.Expr) []string {
	switch e := unparen(e).(type) {
	case *ast.Ident:
		return []string{e.Name}
	case *ast.Member:
		if p := memberPath(e.X); p != nil {
			return append(p, e.Name)
		}
	case *ast.Index:
		if lit, ok := unparen(e.Index).(*ast.Literal); ok && lit.Kind == ast.String {
			if p := memberPath(e.X); p != nil {
				return append(p, lit.Str)
			}
		}
	}
	return nil
}

// hasPrefix reports whether path starts with the given names.
func hasPrefix(path []string, prefix ...string) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if path[i] != p {
			return false
		}
	}
	return true
}

// calleeName returns the name of a bare call f(x) or "".
func calleeName(c *ast.Call) string {
	if id, ok := c.Fn.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// srcText returns the source text of a span with runs of whitespace
// collapsed, for messages and fixes.
func srcText(f *source.File, sp source.Span) string {
	a, b := sp.Start.Offset, sp.End.Offset
	if a < 0 || b > len(f.Text) || a > b {
		return ""
	}
	return strings.Join(strings.Fields(f.Text[a:b]), " ")
}

// shorten truncates s for a message.
func shorten(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// conjuncts flattens a top-level && chain, looking through parentheses.
func conjuncts(e ast.Expr) []ast.Expr {
	e = unparen(e)
	if b, ok := e.(*ast.Binary); ok && b.Op == "&&" {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	if isNil(e) {
		return nil
	}
	return []ast.Expr{e}
}

// fingerprint renders an expression canonically: parentheses, spacing and
// quote style do not matter, and names in rename (path variables) are
// replaced so /users/{uid} and /users/{userId} compare equal.
func fingerprint(e ast.Expr, rename map[string]string) string {
	var b strings.Builder
	var fp func(e ast.Expr)
	fp = func(e ast.Expr) {
		switch e := e.(type) {
		case nil:
			b.WriteString("_")
		case *ast.Paren:
			fp(e.X)
		case *ast.Literal:
			switch e.Kind {
			case ast.String:
				b.WriteString(strconv.Quote(e.Str))
			case ast.Bytes:
				b.WriteString("b" + strconv.Quote(e.Str))
			case ast.Int:
				b.WriteString(strconv.FormatInt(e.Int, 10))
			case ast.Float:
				b.WriteString(strconv.FormatFloat(e.Float, 'g', -1, 64))
			default:
				b.WriteString(e.Raw)
			}
		case *ast.Ident:
			if r, ok := rename[e.Name]; ok {
				b.WriteString(r)
			} else {
				b.WriteString(e.Name)
			}
		case *ast.Unary:
			b.WriteString(e.Op)
			fp(e.X)
		case *ast.Binary:
			b.WriteByte('(')
			fp(e.X)
			b.WriteString(" " + e.Op + " ")
			fp(e.Y)
			b.WriteByte(')')
		case *ast.In:
			b.WriteByte('(')
			fp(e.X)
			b.WriteString(" in ")
			fp(e.Collection)
			b.WriteByte(')')
		case *ast.Is:
			b.WriteByte('(')
			fp(e.X)
			b.WriteString(" is " + e.Type + ")")
		case *ast.Ternary:
			b.WriteByte('(')
			fp(e.Cond)
			b.WriteString(" ? ")
			fp(e.Then)
			b.WriteString(" : ")
			fp(e.Else)
			b.WriteByte(')')
		case *ast.Member:
			fp(e.X)
			b.WriteString("." + e.Name)
		case *ast.Index:
			fp(e.X)
			b.WriteByte('[')
			fp(e.Index)
			b.WriteByte(']')
		case *ast.Slice:
			fp(e.X)
			b.WriteByte('[')
			if e.Lo != nil {
				fp(e.Lo)
			}
			b.WriteByte(':')
			if e.Hi != nil {
				fp(e.Hi)
			}
			b.WriteByte(']')
		case *ast.Call:
			if m, ok := e.Fn.(*ast.Member); ok {
				fp(m.X)
				b.WriteString("." + m.Name)
			} else {
				fp(e.Fn)
			}
			b.WriteByte('(')
			for i, a := range e.Args {
				if i > 0 {
					b.WriteString(", ")
				}
				fp(a)
			}
			b.WriteByte(')')
		case *ast.List:
			b.WriteByte('[')
			for i, x := range e.Elems {
				if i > 0 {
					b.WriteString(", ")
				}
				fp(x)
			}
			b.WriteByte(']')
		case *ast.Map:
			b.WriteByte('{')
			for i, en := range e.Entries {
				if i > 0 {
					b.WriteString(", ")
				}
				fp(en.Key)
				b.WriteString(": ")
				fp(en.Value)
			}
			b.WriteByte('}')
		case *ast.Path:
			for _, s := range e.Segments {
				b.WriteByte('/')
				if s.Interp != nil {
					b.WriteString("$(")
					fp(s.Interp)
					b.WriteByte(')')
				} else {
					b.WriteString(s.Text)
				}
			}
		default:
			b.WriteString("?")
		}
	}
	fp(e)
	return b.String()
}
