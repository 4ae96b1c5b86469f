package lint

import (
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
)

// facts are what one expression (an allow condition, or a function's lets
// and return) does directly, without following calls.
type facts struct {
	// nodes counts the expressions evaluating it takes: every node but
	// parentheses (which production does not evaluate) and the namespace
	// name of a call like math.abs.
	nodes int
	// calls are user-function call sites, in source order.
	calls []callSite
	// lookups are document reads: get, exists, getAfter, existsAfter
	// (firestore.get and firestore.exists in Storage).
	lookups []*ast.Call
	// References to the service's bindings.
	auth     bool // request.auth
	incoming bool // request.resource (Firestore: also getAfter/existsAfter)
	time     ast.Expr
}

type callSite struct {
	call *ast.Call
	fn   *fnInfo
}

func (m *model) factsOfFunc(fi *fnInfo) facts {
	var out facts
	for _, l := range fi.f.Lets {
		out.add(m.factsOf(l.Value, fi.scope))
	}
	if fi.f.Return != nil {
		out.add(m.factsOf(fi.f.Return, fi.scope))
	}
	return out
}

func (f *facts) add(g facts) {
	f.nodes += g.nodes
	f.calls = append(f.calls, g.calls...)
	f.lookups = append(f.lookups, g.lookups...)
	f.auth = f.auth || g.auth
	f.incoming = f.incoming || g.incoming
	if f.time == nil {
		f.time = g.time
	}
}

// factsOf collects the direct facts of e evaluated in scope s. A nil e
// (an unconditional allow) has none.
func (m *model) factsOf(e ast.Expr, s *scope) facts {
	var out facts
	var walk func(e ast.Expr)
	walkAll := func(es []ast.Expr) {
		for _, x := range es {
			walk(x)
		}
	}
	walk = func(e ast.Expr) {
		if isNil(e) {
			return
		}
		switch e := e.(type) {
		case *ast.Paren:
			walk(e.X)
			return
		case *ast.Bad:
			return
		case *ast.Call:
			out.nodes++
			switch fn := e.Fn.(type) {
			case *ast.Ident:
				if fi := s.lookupFunc(fn.Name); fi != nil {
					out.calls = append(out.calls, callSite{call: e, fn: fi})
				} else if m.svc.builtins[fn.Name] {
					out.lookups = append(out.lookups, e)
					if fn.Name == "getAfter" || fn.Name == "existsAfter" {
						out.incoming = true
					}
				}
			case *ast.Member:
				// A namespace call (math.abs) evaluates its arguments; a
				// method call its receiver too. The member node itself is
				// part of the call.
				if id, ok := fn.X.(*ast.Ident); ok && isNamespace(m.svc, id.Name) && !s.isVar(id.Name) {
					if m.svc.storage && id.Name == "firestore" && (fn.Name == "get" || fn.Name == "exists") {
						out.lookups = append(out.lookups, e)
					}
				} else {
					walk(fn.X)
				}
			default:
				walk(e.Fn)
			}
			walkAll(e.Args)
			return
		case *ast.Member, *ast.Index:
			if p := memberPath(e); len(p) == 2 && p[0] == "request" && s.isGlobal("request") {
				switch p[1] {
				case "auth":
					out.auth = true
				case "resource":
					out.incoming = true
				case "time":
					if out.time == nil {
						out.time = e
					}
				}
			}
		}
		out.nodes++
		walkAll(children(e))
	}
	walk(e)
	return out
}

// isNamespace reports whether name is a standard or service namespace.
func isNamespace(svc *service, name string) bool {
	if _, ok := namespaceFuncs[name]; ok {
		return true
	}
	for _, n := range svc.namespaces {
		if n == name {
			return true
		}
	}
	return false
}

// namespaceFuncs are the standard library's namespaced functions, from
// the evaluator's declaration table.
var namespaceFuncs = func() map[string][]string {
	out := map[string][]string{}
	for _, n := range eval.Standard.Namespaces() {
		out[n] = eval.Standard.Namespace(n)
	}
	return out
}()

// spanOf is e's span, or the zero span for nil.
func spanOf(e ast.Expr) source.Span {
	if isNil(e) {
		return source.Span{}
	}
	return e.Span()
}
