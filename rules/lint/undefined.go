package lint

import (
	"fmt"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/source"
)

// mistakeCodes are the codes whose diagnostics replace check's generic
// "Invalid function name" / "Invalid variable name" at the same place.
var mistakeCodes = map[string]bool{
	CodeHallucinatedMethod: true, CodeHallucinatedGlobal: true, CodeWrongContextPath: true,
	CodeLengthProperty: true, CodeMissingParens: true, CodeInvalidPathInterpolation: true,
	CodeUndefinedFunction: true,
}

// covered returns the start offsets of lint's own mistake diagnostics.
func (l *linter) covered() map[int]bool {
	at := map[int]bool{}
	for off := range l.also {
		at[off] = true
	}
	for _, d := range l.diags {
		if mistakeCodes[d.Code] {
			at[d.Span.Start.Offset] = true
		}
	}
	return at
}

// undefined reports calls to functions and reads of names that do not
// exist. Production compiles them with a warning, then fails them at
// evaluation ("Function not found error", an unbound variable), so the
// condition containing one can never succeed through it: lint makes them
// errors, with the closest defined name as the fix.
func (l *linter) undefined(cdiags source.Diagnostics) {
	covered := l.covered()
	bare := map[int]bool{}
	scopeAt := map[int]*scope{}
	for _, u := range l.m.units() {
		s := u.s
		inspect(u.e, func(e, _ ast.Expr) bool {
			switch e := e.(type) {
			case *ast.Ident:
				scopeAt[e.Sp.Start.Offset] = s
			case *ast.Call:
				id, ok := e.Fn.(*ast.Ident)
				if !ok {
					return true
				}
				bare[id.Sp.Start.Offset] = true
				if covered[id.Sp.Start.Offset] || s.lookupFunc(id.Name) != nil || l.svc.builtins[id.Name] || standardFuncs[id.Name] {
					return true
				}
				l.undefinedFunc(id, s)
			}
			return true
		})
	}
	covered = l.covered()
	for _, d := range cdiags {
		off := d.Span.Start.Offset
		switch d.Code {
		case check.CodeUndefinedFn:
			if bare[off] || covered[off] {
				continue
			}
			name := l.file.Text[d.Span.Start.Offset:d.Span.End.Offset]
			fix := ""
			if s := suggest(name, l.methods); s != "" {
				fix = fmt.Sprintf("did you mean `%s()`?", s)
			}
			l.report(source.Error, CodeUndefinedFunction, d.Span, fix,
				"no rules type has a method %s(): the call fails at evaluation (\"Function not found error\")", name)
		case check.CodeUndefinedID:
			if covered[off] {
				continue
			}
			name := l.file.Text[d.Span.Start.Offset:d.Span.End.Offset]
			fix := ""
			if s := scopeAt[off]; s != nil {
				vars, _ := s.names()
				if sug := suggest(name, vars); sug != "" {
					fix = fmt.Sprintf("did you mean `%s`?", sug)
				}
			}
			l.report(source.Error, CodeUndefinedVariable, d.Span, fix,
				"`%s` is not defined here (not a parameter, let, path variable, request or resource); reading it fails at evaluation", name)
		}
	}
}

func (l *linter) undefinedFunc(id *ast.Ident, s *scope) {
	fix := ""
	switch {
	case l.svc.storage && (id.Name == "get" || id.Name == "exists"):
		fix = fmt.Sprintf("write `firestore.%s(/databases/(default)/documents/…)`", id.Name)
	case l.svc.storage && (id.Name == "getAfter" || id.Name == "existsAfter"):
		fix = "Storage rules have no post-write view of Firestore; use firestore.get() or firestore.exists()"
	default:
		_, funcs := s.names()
		if sug := suggest(id.Name, funcs); sug != "" {
			fix = fmt.Sprintf("did you mean `%s()`?", sug)
		}
	}
	l.report(source.Error, CodeUndefinedFunction, id.Sp, fix,
		"%s() is not defined in this scope: the call fails at evaluation (\"Function not found error: Name: [%s]\")", id.Name, id.Name)
}
