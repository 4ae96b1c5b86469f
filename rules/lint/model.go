package lint

import (
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
)

// service holds what differs between Firestore and Storage rules.
type service struct {
	name    string
	storage bool
	// noun is what the service stores: document or file.
	noun string
	// builtins are the bare functions the service defines beyond the
	// standard casts.
	builtins map[string]bool
	// namespaces are the service's namespaces beyond the standard library.
	namespaces []string
	// Lookup limits: a warning from lookupWarn documents (0: no warning
	// band), an error above lookupMax.
	lookupWarn, lookupMax int
}

var (
	firestoreService = &service{
		name:       Firestore,
		noun:       "document",
		builtins:   serviceBuiltins(Firestore),
		namespaces: serviceNamespaces(Firestore),
		lookupWarn: GetCountWarn,
		lookupMax:  GetCountMax,
	}
	// Storage reads Firestore documents through firestore.get and
	// firestore.exists, at most two distinct documents per evaluation
	// (features §21, S131).
	storageService = &service{
		name:       Storage,
		noun:       "file",
		storage:    true,
		builtins:   serviceBuiltins(Storage),
		namespaces: serviceNamespaces(Storage),
		lookupMax:  StorageGetCountMax,
	}
)

// serviceBuiltins are the bare functions a service's environment
// (check.Environment) declares beyond the standard library.
func serviceBuiltins(name string) map[string]bool {
	out := map[string]bool{}
	for _, n := range check.Environment(name).Globals() {
		if _, std := eval.Standard.Lookup(eval.Global, "", n); !std {
			out[n] = true
		}
	}
	return out
}

// serviceNamespaces are the namespaces a service's environment declares
// beyond the standard library.
func serviceNamespaces(name string) []string {
	var out []string
	for _, n := range check.Environment(name).Namespaces() {
		if len(eval.Standard.Namespace(n)) == 0 {
			out = append(out, n)
		}
	}
	return out
}

func serviceFor(name string) *service {
	if name == Storage {
		return storageService
	}
	return firestoreService
}

// standardFuncs are the bare functions every service has.
var standardFuncs = func() map[string]bool {
	out := map[string]bool{}
	for _, n := range eval.Standard.Globals() {
		out[n] = true
	}
	return out
}()

// model is a parsed ruleset prepared for analysis: every function with its
// lexical scope, every allow statement with its block, and the facts each
// expression establishes (which functions it calls, which documents it
// reads, whether it looks at request.auth, …).
type model struct {
	file  *source.File
	rs    *ast.Ruleset
	prog  *eval.Program
	svc   *service
	funcs []*fnInfo
	fnOf  map[*ast.Function]*fnInfo
	rules []*rule
	// blocks lists every match block in source order (preorder).
	blocks []*eval.Block
}

// fnInfo is one user function.
type fnInfo struct {
	f *ast.Function
	// scope is the function's declaration scope: its match block, the
	// service root for service-scope functions, nil for global ones.
	scope *scope
	facts facts

	// memoized analyses
	depth      int // longest call chain from here, counting itself
	next       *fnInfo
	cost       int // expressions with every call expanded
	calls      int // user-function calls with every call expanded
	reach      map[*fnInfo]bool
	lookupKeys map[string]bool
	// Analysis states: 0 new, 1 in progress (a cycle), 2 done.
	dState, cState, kState int
	// callers counts call sites in other functions.
	callers int
}

// rule is one allow statement.
type rule struct {
	block   *eval.Block
	allow   *ast.Allow
	index   int // position among its block's allows
	scope   *scope
	facts   facts
	methods map[string]bool // expanded: get list create update delete
}

// scope is where an expression is evaluated: it says which functions and
// variables its names resolve to.
type scope struct {
	m *model
	// block is the match block (prog.Root for service scope, nil for
	// global scope).
	block *eval.Block
	// fn is the enclosing function, nil in an allow condition.
	fn     *ast.Function
	locals map[string]bool
}

// lookupFunc resolves a function name lexically.
func (s *scope) lookupFunc(name string) *fnInfo {
	f, _ := s.m.prog.LookupFunc(s.block, name)
	if f == nil {
		return nil
	}
	return s.m.fnOf[f]
}

// isVar reports whether name is a parameter, let or path variable here.
func (s *scope) isVar(name string) bool {
	if s.locals[name] {
		return true
	}
	for b := s.block; b != nil; b = b.Parent {
		if b.Match == nil {
			continue
		}
		for _, seg := range b.Match.Path.Segments {
			if seg.Kind != ast.SegLiteral && seg.Text == name {
				return true
			}
		}
	}
	return false
}

// isGlobal reports whether name is the service binding (request or
// resource) and not shadowed.
func (s *scope) isGlobal(name string) bool {
	return (name == "request" || name == "resource") && !s.isVar(name)
}

// names lists the variables and functions visible here, for suggestions.
func (s *scope) names() (vars, funcs []string) {
	for n := range s.locals {
		vars = append(vars, n)
	}
	for b := s.block; b != nil; b = b.Parent {
		if b.Match != nil {
			for _, seg := range b.Match.Path.Segments {
				if seg.Kind != ast.SegLiteral {
					vars = append(vars, seg.Text)
				}
			}
		}
		for n := range b.Funcs {
			funcs = append(funcs, n)
		}
	}
	for _, f := range s.m.rs.Functions {
		funcs = append(funcs, f.Name)
	}
	vars = append(vars, "request", "resource")
	for n := range s.m.svc.builtins {
		funcs = append(funcs, n)
	}
	for n := range standardFuncs {
		funcs = append(funcs, n)
	}
	return vars, funcs
}

// lastWildcard is the innermost single-segment wildcard of the scope's
// block, e.g. "userId" in /users/{userId}; "" when there is none.
func (s *scope) lastWildcard() string {
	for b := s.block; b != nil; b = b.Parent {
		if b.Match == nil {
			continue
		}
		segs := b.Match.Path.Segments
		for i := len(segs) - 1; i >= 0; i-- {
			if segs[i].Kind == ast.SegWildcard {
				return segs[i].Text
			}
		}
	}
	return ""
}

func newModel(file *source.File, rs *ast.Ruleset, svc *service) *model {
	m := &model{file: file, rs: rs, prog: eval.NewProgram(rs), svc: svc, fnOf: map[*ast.Function]*fnInfo{}}
	addFuncs := func(fs []*ast.Function, b *eval.Block) {
		for _, f := range fs {
			fi := &fnInfo{f: f, scope: m.fnScope(f, b)}
			m.funcs = append(m.funcs, fi)
			m.fnOf[f] = fi
		}
	}
	addFuncs(rs.Functions, nil)
	if rs.Service != nil {
		addFuncs(rs.Service.Functions, m.prog.Root)
	}
	var walk func(b *eval.Block)
	walk = func(b *eval.Block) {
		m.blocks = append(m.blocks, b)
		addFuncs(b.Match.Functions, b)
		for i, a := range b.Match.Allows {
			r := &rule{block: b, allow: a, index: i, scope: &scope{m: m, block: b}, methods: expandMethods(a)}
			m.rules = append(m.rules, r)
		}
		for _, c := range b.Children {
			walk(c)
		}
	}
	for _, c := range m.prog.Root.Children {
		walk(c)
	}
	for _, fi := range m.funcs {
		fi.facts = m.factsOfFunc(fi)
	}
	for _, r := range m.rules {
		r.facts = m.factsOf(r.allow.Cond, r.scope)
	}
	for _, fi := range m.funcs {
		for _, cs := range fi.facts.calls {
			cs.fn.callers++
		}
	}
	return m
}

func (m *model) fnScope(f *ast.Function, b *eval.Block) *scope {
	s := &scope{m: m, block: b, fn: f, locals: map[string]bool{}}
	for _, p := range f.Params {
		s.locals[p.Name] = true
	}
	for _, l := range f.Lets {
		if l.Name != nil {
			s.locals[l.Name.Name] = true
		}
	}
	return s
}

// expandMethods turns an allow's verbs into the five request methods.
func expandMethods(a *ast.Allow) map[string]bool {
	out := map[string]bool{}
	for _, m := range a.Methods {
		switch m.Name {
		case "read":
			out["get"], out["list"] = true, true
		case "write":
			out["create"], out["update"], out["delete"] = true, true, true
		case "get", "list", "create", "update", "delete":
			out[m.Name] = true
		}
	}
	return out
}

func isWrite(methods map[string]bool) bool {
	return methods["create"] || methods["update"] || methods["delete"]
}

func isRead(methods map[string]bool) bool { return methods["get"] || methods["list"] }

// recursive reports whether a block's own path ends in a recursive
// wildcard, so it matches every document below its prefix.
func recursive(b *eval.Block) bool {
	segs := b.Match.Path.Segments
	return len(segs) > 0 && segs[len(segs)-1].Kind == ast.SegRecursive
}
