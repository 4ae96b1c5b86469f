package ast

import (
	"fmt"
	"strconv"
	"strings"
)

// Dump renders a ruleset as an indented tree with positions, for golden
// tests and debugging.
func Dump(rs *Ruleset) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ruleset version=%q\n", rs.Version)
	for _, f := range rs.Functions {
		dumpFunction(&b, f, 1)
	}
	if s := rs.Service; s != nil {
		fmt.Fprintf(&b, "  service %s @%s\n", s.Name, s.NameSpan.Start)
		for _, f := range s.Functions {
			dumpFunction(&b, f, 2)
		}
		for _, m := range s.Matches {
			dumpMatch(&b, m, 2)
		}
	}
	return b.String()
}

func indent(b *strings.Builder, depth int) { b.WriteString(strings.Repeat("  ", depth)) }

func dumpFunction(b *strings.Builder, f *Function, depth int) {
	indent(b, depth)
	params := make([]string, len(f.Params))
	for i, p := range f.Params {
		params[i] = p.Name
	}
	fmt.Fprintf(b, "function %s(%s) @%s\n", f.Name, strings.Join(params, ", "), f.NameSpan.Start)
	for _, l := range f.Lets {
		indent(b, depth+1)
		fmt.Fprintf(b, "let %s = %s\n", l.Name.Name, DumpExpr(l.Value))
	}
	indent(b, depth+1)
	fmt.Fprintf(b, "return %s\n", DumpExpr(f.Return))
}

func dumpMatch(b *strings.Builder, m *Match, depth int) {
	indent(b, depth)
	fmt.Fprintf(b, "match %s @%s\n", m.Path, m.Span.Start)
	for _, f := range m.Functions {
		dumpFunction(b, f, depth+1)
	}
	for _, a := range m.Allows {
		indent(b, depth+1)
		names := make([]string, len(a.Methods))
		for i, mt := range a.Methods {
			names[i] = mt.Name
		}
		cond := "<always>"
		if a.Cond != nil {
			cond = DumpExpr(a.Cond)
		}
		fmt.Fprintf(b, "allow %s @%s: %s\n", strings.Join(names, ","), a.Span.Start, cond)
	}
	for _, c := range m.Matches {
		dumpMatch(b, c, depth+1)
	}
}

// DumpExpr renders an expression as a fully parenthesized S-expression.
func DumpExpr(e Expr) string {
	var b strings.Builder
	dumpExpr(&b, e)
	return b.String()
}

func dumpExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case nil:
		b.WriteString("<nil>")
	case *Literal:
		switch e.Kind {
		case Null:
			b.WriteString("null")
		case Bool:
			b.WriteString(strconv.FormatBool(e.Bool))
		case Int:
			b.WriteString(strconv.FormatInt(e.Int, 10))
		case Float:
			b.WriteString(strconv.FormatFloat(e.Float, 'g', -1, 64) + "f")
		case String:
			b.WriteString(strconv.Quote(e.Str))
		case Bytes:
			b.WriteString("b" + strconv.Quote(e.Str))
		}
	case *Ident:
		b.WriteString(e.Name)
	case *Paren:
		b.WriteString("(paren ")
		dumpExpr(b, e.X)
		b.WriteString(")")
	case *Unary:
		fmt.Fprintf(b, "(%s ", e.Op)
		dumpExpr(b, e.X)
		b.WriteString(")")
	case *Binary:
		fmt.Fprintf(b, "(%s ", e.Op)
		dumpExpr(b, e.X)
		b.WriteString(" ")
		dumpExpr(b, e.Y)
		b.WriteString(")")
	case *In:
		b.WriteString("(in ")
		dumpExpr(b, e.X)
		b.WriteString(" ")
		dumpExpr(b, e.Collection)
		b.WriteString(")")
	case *Is:
		b.WriteString("(is ")
		dumpExpr(b, e.X)
		b.WriteString(" " + e.Type + ")")
	case *Ternary:
		b.WriteString("(? ")
		dumpExpr(b, e.Cond)
		b.WriteString(" ")
		dumpExpr(b, e.Then)
		b.WriteString(" ")
		dumpExpr(b, e.Else)
		b.WriteString(")")
	case *Member:
		b.WriteString("(. ")
		dumpExpr(b, e.X)
		b.WriteString(" " + e.Name + ")")
	case *Index:
		b.WriteString("(index ")
		dumpExpr(b, e.X)
		b.WriteString(" ")
		dumpExpr(b, e.Index)
		b.WriteString(")")
	case *Slice:
		b.WriteString("(slice ")
		dumpExpr(b, e.X)
		b.WriteString(" ")
		dumpExpr(b, e.Lo)
		b.WriteString(" ")
		dumpExpr(b, e.Hi)
		b.WriteString(")")
	case *Call:
		b.WriteString("(call ")
		dumpExpr(b, e.Fn)
		for _, a := range e.Args {
			b.WriteString(" ")
			dumpExpr(b, a)
		}
		b.WriteString(")")
	case *List:
		b.WriteString("(list")
		for _, x := range e.Elems {
			b.WriteString(" ")
			dumpExpr(b, x)
		}
		b.WriteString(")")
	case *Map:
		b.WriteString("(map")
		for _, en := range e.Entries {
			b.WriteString(" ")
			dumpExpr(b, en.Key)
			b.WriteString(":")
			dumpExpr(b, en.Value)
		}
		b.WriteString(")")
	case *Path:
		b.WriteString("(path")
		for _, s := range e.Segments {
			b.WriteString(" ")
			if s.Interp != nil {
				b.WriteString("$")
				dumpExpr(b, s.Interp)
			} else {
				b.WriteString(s.Text)
			}
		}
		b.WriteString(")")
	case *Bad:
		b.WriteString("<bad>")
	default:
		fmt.Fprintf(b, "<%T>", e)
	}
}
