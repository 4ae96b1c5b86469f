// Package check applies production's compile-time rules to a parsed
// ruleset: size, nesting and let limits, call depth and recursion,
// duplicate names, invalid regular expression literals and argument counts
// (errors, which reject the ruleset), and the warnings production reports
// for undefined names, unused lets and functions, unknown methods and
// rules_version 1. Messages use production's wording.
package check

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
)

// Limits production enforces when rules are deployed.
const (
	MaxSourceBytes = 256 * 1024
	MaxNesting     = 99
	MaxLets        = 11
	MaxCallDepth   = 20
)

// Codes of the diagnostics this package reports.
const (
	CodeSourceSize  = "SOURCE_SIZE"
	CodeNesting     = "NESTING_DEPTH"
	CodeLetLimit    = "LET_LIMIT"
	CodeCallDepth   = "CALL_DEPTH"
	CodeRecursion   = "RECURSION"
	CodeDuplicate   = "DUPLICATE_NAME"
	CodeRegex       = "INVALID_REGEX"
	CodeArgCount    = "ARGUMENT_COUNT"
	CodeUndefinedFn = "UNDEFINED_FUNCTION"
	CodeUndefinedID = "UNDEFINED_VARIABLE"
	CodeMethod      = "UNKNOWN_METHOD"
	CodeUnused      = "UNUSED"
	CodeVersion     = "RULES_VERSION"
	CodeService     = "SERVICE"
)

// Options configure a check.
type Options struct {
	// Service is the expected service name (cloud.firestore or
	// firebase.storage).
	Service string
	// Decls is the environment calls are resolved against; nil means
	// Environment(Service).
	Decls eval.Decls
	// Globals are the service's top-level variables (request, resource).
	Globals []string
}

var allowMethods = map[string]bool{"read": true, "write": true, "get": true, "list": true, "create": true, "update": true, "delete": true}

type checker struct {
	rs    *ast.Ruleset
	opts  Options
	diags source.Diagnostics
	// used records functions referenced anywhere.
	used map[*ast.Function]bool
	// calls is the call graph: function → functions it calls.
	calls map[*ast.Function][]*ast.Function
}

type scope struct {
	parent *scope
	funcs  map[string]*ast.Function
	vars   map[string]bool // path variables declared by this match block
}

// Check returns production's compile-time diagnostics for rs.
func Check(rs *ast.Ruleset, opts Options) source.Diagnostics {
	if opts.Decls == nil {
		opts.Decls = Environment(opts.Service)
	}
	if opts.Globals == nil {
		opts.Globals = []string{"request", "resource"}
	}
	c := &checker{rs: rs, opts: opts, used: map[*ast.Function]bool{}, calls: map[*ast.Function][]*ast.Function{}}
	c.run()
	c.diags.Sort()
	return c.diags
}

func (c *checker) errorf(sp source.Span, code, format string, args ...any) {
	c.diags = append(c.diags, source.Diagnostic{Severity: source.Error, Code: code, Message: fmt.Sprintf(format, args...), Span: sp})
}

func (c *checker) warnf(sp source.Span, code, format string, args ...any) {
	c.diags = append(c.diags, source.Diagnostic{Severity: source.Warning, Code: code, Message: fmt.Sprintf(format, args...), Span: sp})
}

func (c *checker) run() {
	file := c.rs.File
	if len(file.Text) > MaxSourceBytes {
		c.errorf(file.Span(0, 0), CodeSourceSize, "Rules source is %d bytes, exceeding the %d byte (256 KiB) limit.", len(file.Text), MaxSourceBytes)
	}
	if c.rs.Version == "1" && c.rs.VersionSpan == (source.Span{}) {
		c.warnf(file.Span(0, 0), CodeVersion, "Ruleset uses old version (version [1]). Please update to the latest version (version [2]).")
	} else if c.rs.Version == "1" {
		c.warnf(c.rs.VersionSpan, CodeVersion, "Ruleset uses old version (version [1]). Please update to the latest version (version [2]).")
	}
	global := &scope{funcs: map[string]*ast.Function{}}
	c.declare(global, c.rs.Functions)
	svc := c.rs.Service
	if svc == nil {
		return
	}
	if c.opts.Service != "" && svc.Name != c.opts.Service {
		c.warnf(svc.NameSpan, CodeService, "service %s is not %s: no rule in this file applies to %s requests", svc.Name, c.opts.Service, c.opts.Service)
	}
	svcScope := &scope{parent: global, funcs: map[string]*ast.Function{}}
	c.declare(svcScope, svc.Functions)
	var all []*ast.Function
	all = append(all, c.rs.Functions...)
	c.functions(global, c.rs.Functions)
	c.functions(svcScope, svc.Functions)
	all = append(all, svc.Functions...)
	for _, m := range svc.Matches {
		all = append(all, c.match(svcScope, m)...)
	}
	c.callGraph(all)
	for _, f := range all {
		if !c.used[f] {
			c.warnf(f.NameSpan, CodeUnused, "Unused function: %s.", f.Name)
		}
	}
}

// declare adds functions to a scope, reporting duplicates.
func (c *checker) declare(s *scope, fs []*ast.Function) {
	for _, f := range fs {
		if _, dup := s.funcs[f.Name]; dup {
			c.errorf(f.NameSpan, CodeDuplicate, "Function %s is already defined.", f.Name)
			continue
		}
		s.funcs[f.Name] = f
	}
}

func (c *checker) match(parent *scope, m *ast.Match) []*ast.Function {
	s := &scope{parent: parent, funcs: map[string]*ast.Function{}, vars: map[string]bool{}}
	for i, seg := range m.Path.Segments {
		if seg.Kind != ast.SegLiteral {
			s.vars[seg.Text] = true
		}
		if seg.Kind == ast.SegRecursive && i < len(m.Path.Segments)-1 {
			c.warnf(seg.Span, "RECURSIVE_WILDCARD_POSITION", "a recursive wildcard {%s=**} matches only when it is the last segment of a path", seg.Text)
		}
	}
	c.declare(s, m.Functions)
	c.functions(s, m.Functions)
	for _, a := range m.Allows {
		for _, mt := range a.Methods {
			if !allowMethods[mt.Name] {
				c.warnf(mt.Span, CodeMethod, "Invalid method name: %s.", mt.Name)
			}
		}
		if a.Cond != nil {
			c.expr(s, nil, a.Cond)
			c.nesting(a.Cond)
		}
	}
	out := append([]*ast.Function(nil), m.Functions...)
	for _, child := range m.Matches {
		out = append(out, c.match(s, child)...)
	}
	return out
}

// fnScope holds a function's parameters and lets while its body is checked.
type fnScope struct {
	fn     *ast.Function
	params map[string]bool
	lets   map[string]*ast.Let
	usedID map[string]bool
}

func (c *checker) functions(s *scope, fs []*ast.Function) {
	for _, f := range fs {
		fsc := &fnScope{fn: f, params: map[string]bool{}, lets: map[string]*ast.Let{}, usedID: map[string]bool{}}
		for _, p := range f.Params {
			if fsc.params[p.Name] {
				c.errorf(p.Sp, CodeDuplicate, "Variable %s is already defined.", p.Name)
			}
			fsc.params[p.Name] = true
		}
		for i, l := range f.Lets {
			if i == MaxLets {
				c.errorf(l.Name.Sp, CodeLetLimit, "Maximum allowed variable count of %d for a given function has been reached.", MaxLets-1)
			}
			if fsc.params[l.Name.Name] || fsc.lets[l.Name.Name] != nil {
				c.errorf(l.Name.Sp, CodeDuplicate, "The identifier [%s] is already bound in the current scope.", l.Name.Name)
			}
			c.expr(s, fsc, l.Value)
			c.nesting(l.Value)
			fsc.lets[l.Name.Name] = l
		}
		if f.Return != nil {
			c.expr(s, fsc, f.Return)
			c.nesting(f.Return)
		}
		for _, l := range f.Lets {
			if !fsc.usedID[l.Name.Name] {
				c.warnf(l.Name.Sp, CodeUnused, "Unused variable: %s.", l.Name.Name)
			}
		}
	}
}

func (s *scope) lookupFunc(name string) *ast.Function {
	for ; s != nil; s = s.parent {
		if f, ok := s.funcs[name]; ok {
			return f
		}
	}
	return nil
}

func (s *scope) hasVar(name string) bool {
	for ; s != nil; s = s.parent {
		if s.vars[name] {
			return true
		}
	}
	return false
}

func (c *checker) isGlobal(name string) bool {
	for _, g := range c.opts.Globals {
		if g == name {
			return true
		}
	}
	return false
}

func (c *checker) isBuiltin(name string) bool {
	_, ok := c.opts.Decls.Lookup(eval.Global, "", name)
	return ok
}

func (c *checker) isNamespace(name string) bool {
	return len(c.opts.Decls.Namespace(name)) > 0
}

// expr walks an expression checking names, calls and regex literals.
func (c *checker) expr(s *scope, fs *fnScope, e ast.Expr) {
	var callers *ast.Function
	if fs != nil {
		callers = fs.fn
	}
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		ast.Inspect(e, func(x ast.Expr) bool {
			switch x := x.(type) {
			case *ast.Ident:
				switch {
				case fs != nil && (fs.params[x.Name] || fs.lets[x.Name] != nil):
					fs.usedID[x.Name] = true
				case s.hasVar(x.Name), c.isGlobal(x.Name):
				default:
					c.warnf(x.Sp, CodeUndefinedID, "Invalid variable name: %s.", x.Name)
				}
			case *ast.Call:
				// The callee is not a variable: call checks it, walking a
				// method's receiver itself.
				for _, a := range x.Args {
					walk(a)
				}
				c.call(s, fs, callers, x, walk)
				return false
			}
			return true
		})
	}
	walk(e)
}

func (c *checker) call(s *scope, fs *fnScope, caller *ast.Function, e *ast.Call, walk func(ast.Expr)) {
	switch fn := e.Fn.(type) {
	case *ast.Ident:
		if f := s.lookupFunc(fn.Name); f != nil {
			c.used[f] = true
			if caller != nil {
				c.calls[caller] = append(c.calls[caller], f)
			}
			if len(e.Args) != len(f.Params) {
				c.errorf(e.Sp, CodeArgCount, "Incorrect number of arguments supplied to function: %s.", fn.Name)
			}
			return
		}
		if d, ok := c.opts.Decls.Lookup(eval.Global, "", fn.Name); ok && !d.Accepts(len(e.Args)) {
			c.errorf(e.Sp, CodeArgCount, "Incorrect number of arguments supplied to function: %s.", fn.Name)
			return
		}
		if !c.isBuiltin(fn.Name) {
			c.warnf(fn.Sp, CodeUndefinedFn, "Invalid function name: %s.", fn.Name)
		}
	case *ast.Member:
		if id, ok := fn.X.(*ast.Ident); ok && c.isNamespace(id.Name) && !s.hasVar(id.Name) && !(fs != nil && (fs.params[id.Name] || fs.lets[id.Name] != nil)) {
			d, known := c.opts.Decls.Lookup(eval.Namespaced, id.Name, fn.Name)
			switch {
			case !known:
				c.warnf(fn.NameSp, CodeUndefinedFn, "Invalid function name: %s.%s.", id.Name, fn.Name)
			case !d.Accepts(len(e.Args)):
				c.errorf(e.Sp, CodeArgCount, "Incorrect number of arguments supplied to function: %s.%s.", id.Name, fn.Name)
			}
			return
		}
		walk(fn.X)
		d, known := c.opts.Decls.Lookup(eval.Method, "", fn.Name)
		if !known {
			c.warnf(fn.NameSp, CodeUndefinedFn, "Invalid function name: %s.", fn.Name)
		} else if !d.Accepts(len(e.Args)) {
			// join() without a separator is declared with 0..1 arguments:
			// it compiles in Google's engine and fails only when evaluated.
			c.errorf(e.Sp, CodeArgCount, "Incorrect number of arguments supplied to function: %s.", fn.Name)
		}
		if (fn.Name == "matches" || fn.Name == "split" || fn.Name == "replace") && len(e.Args) >= 1 {
			if lit, ok := e.Args[0].(*ast.Literal); ok && lit.Kind == ast.String {
				if _, err := regexp.Compile(lit.Str); err != nil {
					c.errorf(lit.Sp, CodeRegex, "Invalid regular expression pattern. Pattern: %s.", lit.Str)
				}
			}
		}
	}
}

// callGraph reports recursion and call chains deeper than production allows.
func (c *checker) callGraph(all []*ast.Function) {
	const (
		white = iota
		grey
		black
	)
	color := map[*ast.Function]int{}
	depth := map[*ast.Function]int{} // longest chain starting here, counting itself
	chain := map[*ast.Function][]string{}
	reported := map[*ast.Function]bool{}
	var visit func(f *ast.Function) bool
	visit = func(f *ast.Function) bool {
		switch color[f] {
		case grey:
			return false
		case black:
			return true
		}
		color[f] = grey
		depth[f] = 1
		chain[f] = []string{f.Name}
		for _, g := range c.calls[f] {
			if !visit(g) {
				if !reported[f] {
					reported[f] = true
					c.errorf(f.NameSpan, CodeRecursion, "Recursive call is not allowed.")
				}
				continue
			}
			if depth[g]+1 > depth[f] {
				depth[f] = depth[g] + 1
				chain[f] = append([]string{f.Name}, chain[g]...)
			}
		}
		color[f] = black
		return true
	}
	for _, f := range all {
		visit(f)
	}
	// Production reports the overlong chain at its last function.
	byName := map[string]*ast.Function{}
	for _, f := range all {
		byName[f.Name] = f
	}
	var roots []*ast.Function
	for _, f := range all {
		if depth[f] > MaxCallDepth+1 {
			roots = append(roots, f)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return depth[roots[i]] > depth[roots[j]] })
	if len(roots) > 0 {
		f := roots[0]
		names := chain[f]
		last := byName[names[len(names)-1]]
		c.errorf(last.NameSpan, CodeCallDepth, "Maximum allowed call depth of %d is reached for [%s] call stack.", MaxCallDepth, strings.Join(names, "->"))
	}
}

// nesting reports an expression deeper than production's limit: each
// parenthesis, operator, list or map literal and call adds a level; member
// access does not (measured against the official emulator).
func (c *checker) nesting(e ast.Expr) {
	if d := Depth(e); d > MaxNesting {
		c.errorf(e.Span(), CodeNesting, "Expression is too complex to evaluate safely.")
	}
}

// Depth is the nesting depth production counts for its complexity limit.
func Depth(e ast.Expr) int {
	switch e := e.(type) {
	case *ast.Literal, *ast.Ident, *ast.Bad, nil:
		return 1
	case *ast.Paren:
		return 1 + Depth(e.X)
	case *ast.Unary:
		return 1 + Depth(e.X)
	case *ast.Binary:
		return 1 + max(Depth(e.X), Depth(e.Y))
	case *ast.In:
		return 1 + max(Depth(e.X), Depth(e.Collection))
	case *ast.Is:
		return 1 + Depth(e.X)
	case *ast.Ternary:
		return 1 + max(Depth(e.Cond), Depth(e.Then), Depth(e.Else))
	case *ast.Member:
		return Depth(e.X)
	case *ast.Index:
		return max(Depth(e.X), 1+Depth(e.Index))
	case *ast.Slice:
		d := Depth(e.X)
		if e.Lo != nil {
			d = max(d, 1+Depth(e.Lo))
		}
		if e.Hi != nil {
			d = max(d, 1+Depth(e.Hi))
		}
		return d
	case *ast.Call:
		d := 0
		if m, ok := e.Fn.(*ast.Member); ok {
			d = Depth(m.X)
		}
		for _, a := range e.Args {
			d = max(d, 1+Depth(a))
		}
		return max(d, 1)
	case *ast.List:
		d := 0
		for _, x := range e.Elems {
			d = max(d, Depth(x))
		}
		return 1 + d
	case *ast.Map:
		d := 0
		for _, en := range e.Entries {
			d = max(d, Depth(en.Key), Depth(en.Value))
		}
		return 1 + d
	case *ast.Path:
		d := 0
		for _, s := range e.Segments {
			if s.Interp != nil {
				d = max(d, Depth(s.Interp))
			}
		}
		return 1 + d
	}
	return 1
}
