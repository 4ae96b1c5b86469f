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
	walk := func(e ast.Expr, shadowed map[string]bool) {
		ast.Inspect(e, func(x ast.Expr) bool {
			call, ok := x.(*ast.Call)
			if !ok {
				return true
			}
			m, ok := call.Fn.(*ast.Member)
			if !ok {
				return true
			}
			if id, ok := m.X.(*ast.Ident); !ok || id.Name != "firestore" || shadowed["firestore"] {
				return true
			}
			n, known := firestoreFuncs[m.Name]
			switch {
			case !known:
				diags = append(diags, source.Diagnostic{Severity: source.Warning, Code: check.CodeUndefinedFn,
					Message: "Invalid function name: firestore." + m.Name + ".", Span: m.NameSp})
			case n != len(call.Args):
				diags = append(diags, source.Diagnostic{Severity: source.Error, Code: check.CodeArgCount,
					Message: "Incorrect number of arguments supplied to function: firestore." + m.Name + ".", Span: call.Sp})
			}
			return true
		})
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
