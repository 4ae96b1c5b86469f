package storage

import (
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/source"
)

// firestoreFuncs are the functions of Storage's firestore namespace with
// their argument counts.
var firestoreFuncs = map[string]int{"get": 1, "exists": 1}

// checkFirestoreCalls reports calls into the firestore namespace that
// package check, which knows only the standard namespaces, lets through: an
// unknown function (a warning, as for any unknown name) and a wrong
// argument count (an error, as production rejects it for every function).
func checkFirestoreCalls(rs *ast.Ruleset) source.Diagnostics {
	var diags source.Diagnostics
	var walk func(e ast.Expr, shadowed map[string]bool)
	walk = func(e ast.Expr, shadowed map[string]bool) {
		switch e := e.(type) {
		case *ast.Paren:
			walk(e.X, shadowed)
		case *ast.Unary:
			walk(e.X, shadowed)
		case *ast.Binary:
			walk(e.X, shadowed)
			walk(e.Y, shadowed)
		case *ast.In:
			walk(e.X, shadowed)
			walk(e.Collection, shadowed)
		case *ast.Is:
			walk(e.X, shadowed)
		case *ast.Ternary:
			walk(e.Cond, shadowed)
			walk(e.Then, shadowed)
			walk(e.Else, shadowed)
		case *ast.Member:
			walk(e.X, shadowed)
		case *ast.Index:
			walk(e.X, shadowed)
			walk(e.Index, shadowed)
		case *ast.Slice:
			walk(e.X, shadowed)
			if e.Lo != nil {
				walk(e.Lo, shadowed)
			}
			if e.Hi != nil {
				walk(e.Hi, shadowed)
			}
		case *ast.List:
			for _, x := range e.Elems {
				walk(x, shadowed)
			}
		case *ast.Map:
			for _, en := range e.Entries {
				walk(en.Key, shadowed)
				walk(en.Value, shadowed)
			}
		case *ast.Path:
			for _, s := range e.Segments {
				if s.Interp != nil {
					walk(s.Interp, shadowed)
				}
			}
		case *ast.Call:
			for _, a := range e.Args {
				walk(a, shadowed)
			}
			m, ok := e.Fn.(*ast.Member)
			if !ok {
				return
			}
			id, ok := m.X.(*ast.Ident)
			if !ok || id.Name != "firestore" || shadowed["firestore"] {
				walk(m.X, shadowed)
				return
			}
			n, known := firestoreFuncs[m.Name]
			switch {
			case !known:
				diags = append(diags, source.Diagnostic{Severity: source.Warning, Code: check.CodeUndefinedFn,
					Message: "Invalid function name: firestore." + m.Name + ".", Span: m.NameSp})
			case n != len(e.Args):
				diags = append(diags, source.Diagnostic{Severity: source.Error, Code: check.CodeArgCount,
					Message: "Incorrect number of arguments supplied to function: firestore." + m.Name + ".", Span: e.Sp})
			}
		}
	}
	function := func(f *ast.Function, outer map[string]bool) {
		names := copySet(outer)
		for _, p := range f.Params {
			names[p.Name] = true
		}
		for _, l := range f.Lets {
			names[l.Name.Name] = true
		}
		for _, l := range f.Lets {
			walk(l.Value, names)
		}
		if f.Return != nil {
			walk(f.Return, names)
		}
	}
	var match func(m *ast.Match, outer map[string]bool)
	match = func(m *ast.Match, outer map[string]bool) {
		vars := copySet(outer)
		for _, s := range m.Path.Segments {
			if s.Kind != ast.SegLiteral {
				vars[s.Text] = true
			}
		}
		for _, f := range m.Functions {
			function(f, vars)
		}
		for _, a := range m.Allows {
			if a.Cond != nil {
				walk(a.Cond, vars)
			}
		}
		for _, c := range m.Matches {
			match(c, vars)
		}
	}
	for _, f := range rs.Functions {
		function(f, nil)
	}
	if rs.Service != nil {
		for _, f := range rs.Service.Functions {
			function(f, nil)
		}
		for _, m := range rs.Service.Matches {
			match(m, nil)
		}
	}
	return diags
}

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}
