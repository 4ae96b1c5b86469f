// Package eval evaluates Security Rules expressions with production's
// semantics: errors are values that && and || absorb, lets and arguments are
// evaluated lazily, functions are lexically scoped, and every request has an
// expression budget and a time limit. It knows nothing about Firestore or
// Storage: services supply bindings (request, resource) and builtins (get,
// exists, …) through Env, and match request paths with Program.Match.
//
// Decisions are data: a traced evaluation records typed Steps keyed by AST
// node, each evaluated rule is a RuleResult with its minimal failing
// leaves, and an Explanation adds the path variables, the lookups made and
// the Budget used; display strings are rendered from them at the edge
// (Program.Render, RenderSteps, RenderFailure, Explanation.Annotate), so a
// traced decision costs little more than an untraced one. Standard is the
// standard library: one declaration table naming each function and
// method with its implementations, which the evaluator, package check
// and lint all read.
//
// NewProgram prepares a ruleset once: match blocks indexed by their first
// literal segment, each allow's methods and source, constant list and map
// literals folded, call sites resolved, and every condition and function
// body compiled to closures, which untraced runs evaluate (traced and
// counted runs walk the tree, recording each node). A Run keeps its
// per-request state (frames, lazy bindings, call arguments, the step
// buffer) in a few allocations it owns, so evaluating a condition
// allocates once, and Release hands them back for the next request.
package eval

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Program is a ruleset prepared for evaluation: its match blocks as a tree
// with the functions each scope declares.
type Program struct {
	Ruleset *ast.Ruleset
	File    *source.File
	// Root stands for the service block: its Funcs are the service-scope
	// functions and its Children the top-level match blocks.
	Root   *Block
	global map[string]*ast.Function
	// text is each expression node's source with whitespace collapsed,
	// computed once so traces do not re-slice the source per step.
	text map[ast.Expr]string
	// consts are the list and map literals made only of literals, folded
	// once, with the number of expressions evaluating them would count.
	consts map[ast.Expr]folded
	// calls are the call sites resolved once: the user function a bare
	// call names in its lexical scope, a method's implementations by
	// receiver type. Evaluation looks a call up by node, never by name.
	calls map[*ast.Call]*callPlan
	// conds are the allow conditions compiled (see compiled), which
	// untraced, uncounted runs evaluate.
	conds map[ast.Expr]compiled
	// lib is the standard library the calls are bound to: std, or the
	// table given to NewProgramWith.
	lib *stdlib
	// stepHint is the most steps a traced request has recorded, so the
	// next one allocates its step buffer once.
	stepHint atomic.Int64
}

// Text returns an expression's source text (whitespace collapsed).
func (p *Program) Text(e ast.Expr) string {
	if s, ok := p.text[e]; ok {
		return s
	}
	return SourceText(p.File, e)
}

// Block is a match block (or the service root) in the scope tree.
type Block struct {
	Match    *ast.Match // nil for the root
	Parent   *Block
	Children []*Block
	Funcs    map[string]*ast.Function
	// Pattern is the block's full path pattern from the root, e.g.
	// /databases/{database}/documents/users/{userId}.
	Pattern string
	// Depth is the number of match blocks from the root (root is 0).
	Depth int

	// byFirst indexes the children whose pattern starts with a literal
	// segment by that segment; wild lists the others. Matching looks up
	// the request's next segment instead of trying every child, so 200
	// sibling blocks cost one map lookup, not 200 attempts.
	byFirst map[string][]*Block
	wild    []*Block
	order   int // index among the parent's children

	// allows parallels Match.Allows: what deciding needs of each allow
	// statement, computed once.
	allows []allowInfo
	// allowedNotes is the note of a decision this block allows, as a
	// full slice: a decision with no other notes shares it (appending to
	// it copies).
	allowedNotes []string
}

// allowInfo is an allow statement prepared for deciding.
type allowInfo struct {
	ops      []string // method names
	cond     string   // the condition's source, "true" for none
	compiled compiled // the condition compiled, nil for none
}

// index builds the children index of b and its descendants.
func (b *Block) index() {
	b.byFirst = map[string][]*Block{}
	b.wild = nil
	for i, c := range b.Children {
		c.order = i
		segs := c.Match.Path.Segments
		if len(segs) > 0 && segs[0].Kind == ast.SegLiteral {
			b.byFirst[segs[0].Text] = append(b.byFirst[segs[0].Text], c)
		} else {
			b.wild = append(b.wild, c)
		}
		c.index()
	}
}

// candidates returns, in source order, the children that could match a
// request whose next segment is segs[pos].
func (b *Block) candidates(segs []string, pos int) []*Block {
	if b.byFirst == nil {
		return b.Children
	}
	var lit []*Block
	if pos < len(segs) {
		lit = b.byFirst[segs[pos]]
	}
	switch {
	case len(lit) == 0:
		return b.wild
	case len(b.wild) == 0:
		return lit
	}
	out := make([]*Block, 0, len(lit)+len(b.wild))
	i, j := 0, 0
	for i < len(lit) || j < len(b.wild) {
		if j == len(b.wild) || (i < len(lit) && lit[i].order < b.wild[j].order) {
			out = append(out, lit[i])
			i++
		} else {
			out = append(out, b.wild[j])
			j++
		}
	}
	return out
}

// NewProgram prepares a parsed ruleset against the standard library
// (Standard). It does not validate it; run package check for
// production's compile-time errors.
func NewProgram(rs *ast.Ruleset) *Program { return newProgram(rs, std) }

// NewProgramWith prepares a parsed ruleset against a declaration table
// other than Standard (Standard extended with Decls.With): its methods
// and functions are the ones the table implements. Declarations without
// an implementation (a service's builtins) are left to the Env.
func NewProgramWith(rs *ast.Ruleset, d Decls) *Program { return newProgram(rs, newStdlib(d)) }

func newProgram(rs *ast.Ruleset, lib *stdlib) *Program {
	p := &Program{Ruleset: rs, File: rs.File, Root: &Block{Funcs: map[string]*ast.Function{}}, global: map[string]*ast.Function{}, lib: lib}
	for _, f := range rs.Functions {
		if _, dup := p.global[f.Name]; !dup {
			p.global[f.Name] = f
		}
	}
	if rs.Service != nil {
		addFuncs(p.Root, rs.Service.Functions)
		for _, m := range rs.Service.Matches {
			p.Root.Children = append(p.Root.Children, newBlock(m, p.Root))
		}
	}
	p.Root.index()
	p.planCalls()
	var allows func(b *Block)
	allows = func(b *Block) {
		if b.Match != nil {
			b.allowedNotes = []string{fmt.Sprintf("Allowed by match block '%s'", b.Pattern)}
			for _, a := range b.Match.Allows {
				info := allowInfo{ops: MethodNames(a), cond: "true"}
				if a.Cond != nil {
					info.cond = SourceText(p.File, a.Cond)
				}
				b.allows = append(b.allows, info)
			}
		}
		for _, c := range b.Children {
			allows(c)
		}
	}
	allows(p.Root)
	p.text = map[ast.Expr]string{}
	p.consts = map[ast.Expr]folded{}
	rs.Exprs(func(root ast.Expr) {
		ast.Inspect(root, func(e ast.Expr) bool {
			switch e.(type) {
			case *ast.List, *ast.Map:
				if v, n, ok := fold(e); ok {
					p.consts[e] = folded{v, n}
				}
			}
			return true
		})
		ast.Inspect(root, func(e ast.Expr) bool {
			if e != nil {
				p.text[e] = clipSource(SourceText(p.File, e))
			}
			return true
		})
	})
	p.compile()
	return p
}

func addFuncs(b *Block, fs []*ast.Function) {
	for _, f := range fs {
		if _, dup := b.Funcs[f.Name]; !dup {
			b.Funcs[f.Name] = f
		}
	}
}

func newBlock(m *ast.Match, parent *Block) *Block {
	b := &Block{Match: m, Parent: parent, Funcs: map[string]*ast.Function{}, Depth: parent.Depth + 1}
	if parent.Pattern == "/" {
		b.Pattern = m.Path.String()
	} else {
		b.Pattern = parent.Pattern + m.Path.String()
	}
	if b.Pattern == "" {
		b.Pattern = "/"
	}
	addFuncs(b, m.Functions)
	for _, c := range m.Matches {
		b.Children = append(b.Children, newBlock(c, b))
	}
	return b
}

// LookupFunc resolves a function name lexically from block b: b and its
// ancestors, the service scope, then the file's global scope. The block that
// declares it is returned too (nil for globals).
func (p *Program) LookupFunc(b *Block, name string) (*ast.Function, *Block) {
	for ; b != nil; b = b.Parent {
		if f, ok := b.Funcs[name]; ok {
			return f, b
		}
	}
	if f, ok := p.global[name]; ok {
		return f, nil
	}
	return nil, nil
}

// Matched is one match block whose pattern matches the request path, with
// the path variables bound along the way.
type Matched struct {
	Block *Block
	// vars are the variables bound from the root to Block, outer first
	// (an inner name shadows an outer one: lookups scan from the end).
	vars []binding
	// chain is each block from the root to Block with how many of vars it
	// sees: a function declared in an outer block sees only that block's.
	chain []link
}

// link is one block of a matched chain and the number of variables bound
// up to and including it.
type link struct {
	b *Block
	n int
}

// visible returns the variables a block of the chain sees, nil when b is
// not on the chain (a function from an unrelated scope sees none).
func (m *Matched) visible(b *Block) []binding {
	for _, l := range m.chain {
		if l.b == b {
			return m.vars[:l.n:l.n]
		}
	}
	return nil
}

// Vars returns the path variables visible inside the matched block.
func (m *Matched) Vars() map[string]value.Value { return bindingMap(m.vars) }

// Bound returns the path variables visible inside the matched block
// without building a map.
func (m *Matched) Bound() Vars { return Vars{m} }

// Vars are the path variables bound inside a matched block: a view of
// the match (one word, so a decision holding it stays small), which a
// decision nobody asks about never turns into a map.
type Vars struct{ m *Matched }

// Lookup returns the value bound to name (an inner block's name shadows
// an outer one's).
func (v Vars) Lookup(name string) (value.Value, bool) {
	if v.m == nil {
		return nil, false
	}
	return lookupBinding(v.m.vars, name)
}

// Map returns the variables as a new map, nil when no block matched.
func (v Vars) Map() map[string]value.Value {
	if v.m == nil {
		return nil
	}
	return bindingMap(v.m.vars)
}

// VarsOf returns the path variables visible inside b, a block of the
// matched chain (nil when it is not on the chain).
func (m *Matched) VarsOf(b *Block) map[string]value.Value { return bindingMap(m.visible(b)) }

func bindingMap(bs []binding) map[string]value.Value {
	if bs == nil {
		return nil
	}
	out := make(map[string]value.Value, len(bs))
	for _, x := range bs {
		out[x.name] = x.v
	}
	return out
}

// lookupBinding finds name among bs, the innermost binding first.
func lookupBinding(bs []binding, name string) (value.Value, bool) {
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].name == name {
			return bs[i].v, true
		}
	}
	return nil, false
}

// Attempt records how one block fared against the request path, for
// explanations of near misses.
type Attempt struct {
	Pattern  string
	Line     int
	Matched  int // path segments consumed
	Total    int // path segments in the request
	Reason   string
	Bindings map[string]string
}

// Match reasons for attempts that failed.
const (
	ReasonLiteralMismatch = "literal-mismatch"
	ReasonRequestShorter  = "request-shorter"
	ReasonNoMatchingChild = "no-matching-child"
)

// Hypothetical is the last segment of a list request's path: the unknown
// document a query could return. A single wildcard matches it without
// binding (reading the variable is "Null value error."), a literal never
// matches it, and a recursive wildcard binds a Partial path.
const Hypothetical = "\x00document"

// Match returns every block whose full pattern matches segs exactly, in
// source order, plus the attempts that failed. Version "1" recursive
// wildcards match one or more segments; version "2" zero or more. A
// recursive wildcard followed by more segments matches zero segments only
// (what the official emulator does with such a pattern).
//
// Attempts (near misses, for explaining a request no block matches) are
// computed only when nothing matched: the matching itself follows the
// children index and never tries blocks whose first literal segment
// differs from the request's.
func (p *Program) Match(segs []string) ([]Matched, []Attempt) {
	m, a, _ := p.match(segs, nil)
	return m, a
}

// Scratch is storage for the first results of one request's matching and
// deciding (the first matched block with its variables, the first
// evaluated rule), which a service's per-request object can hold so they
// need no allocations of their own. The results point into it: it must
// live as long as they are used, and serve one request only.
type Scratch struct {
	scope scope
	first firstRule
}

// firstRule is the first evaluated rule's results (see Allows).
type firstRule struct {
	trace [1]sim.Rule
	rules [1]RuleResult
}

// MatchIn is Match with its first result in s (nil: allocated).
func (p *Program) MatchIn(segs []string, s *Scratch) ([]Matched, []Attempt) {
	var sc *scope
	if s != nil {
		sc = &s.scope
	}
	m, a, _ := p.match(segs, sc)
	return m, a
}

// match is Match reporting also how many pattern segments it tried; sc
// holds the first result (nil: allocated).
func (p *Program) match(segs []string, sc *scope) ([]Matched, []Attempt, int) {
	// The matching state is scratch, reused through a pool; one
	// allocation holds the first result, its variables and the segments
	// wildcards bind.
	if sc == nil {
		sc = &scope{}
	}
	st := matchStates.Get().(*matchState)
	defer matchStates.Put(st)
	// Set field by field: the buffers are overwritten as they are used
	// (zeroing the whole state cost more than matching).
	st.p, st.segs, st.out, st.attempts, st.indexed, st.tries, st.spare, st.strs = p, segs, nil, nil, true, 0, sc, &sc.strs
	st.vars, st.chain = st.buf[:0], st.chainBuf[:0]
	for _, c := range p.Root.candidates(segs, 0) {
		st.match(c, 0)
	}
	if len(st.out) > 0 {
		return st.out, nil, st.tries
	}
	var attempts []Attempt
	st.attempts, st.indexed = &attempts, false
	for _, c := range p.Root.Children {
		st.match(c, 0)
	}
	return st.out, attempts, st.tries
}

// scope holds a short match's result, variables and chain in one
// allocation.
type scope struct {
	out   [1]Matched
	vars  [4]binding
	chain [4]link
	// strs holds the first segments as values, boxed in place when a
	// wildcard binds them (a position's string never changes); every
	// result of a match shares the first scope's.
	strs [8]value.String
}

// binding is one path variable bound while matching a block's pattern.
type binding struct {
	name string
	v    value.Value
}

// matchState is one request's matching: vars and chain are stacks that
// grow as blocks match and shrink as matching backtracks, so matching
// allocates only the Matched results it returns.
type matchState struct {
	p        *Program
	segs     []string
	vars     []binding
	chain    []link
	out      []Matched
	attempts *[]Attempt
	indexed  bool
	tries    int              // pattern segments tried
	spare    *scope           // the first result's scope
	strs     *[8]value.String // the first scope's (see scope)
	buf      [8]binding
	chainBuf [8]link
}

// matchStates are matching states for reuse: matching allocates only
// the results it returns.
var matchStates = sync.Pool{New: func() any { return new(matchState) }}

// segValue is segment pos as a value.
func (st *matchState) segValue(pos int) value.Value {
	if pos < len(st.strs) {
		st.strs[pos] = value.String(st.segs[pos])
		return value.BoxString(&st.strs[pos])
	}
	return value.String(st.segs[pos])
}

// match tries block b at request position pos.
func (st *matchState) match(b *Block, pos int) {
	nv, nc := len(st.vars), len(st.chain)
	st.try(b, 0, pos, nv)
	st.vars, st.chain = st.vars[:nv], st.chain[:nc]
}

func (st *matchState) miss(b *Block, pos int, reason string, from int) {
	if st.attempts != nil {
		*st.attempts = append(*st.attempts, attempt(b, pos, len(st.segs), reason, st.vars[from:]))
	}
}

// record adds b, matched with the current variables and chain, to the
// results. A short match's variables and chain live in one scope
// allocation (the first result's also holds the result itself).
func (st *matchState) record(b *Block) {
	m := Matched{Block: b}
	if len(st.vars) > len(scope{}.vars) || len(st.chain) > len(scope{}.chain) {
		m.vars = append(make([]binding, 0, len(st.vars)), st.vars...)
		m.chain = append(make([]link, 0, len(st.chain)), st.chain...)
		st.out = append(st.out, m)
		return
	}
	sc := st.spare
	if sc == nil {
		sc = new(scope)
	}
	st.spare = nil
	m.vars = append(sc.vars[:0:len(st.vars)], st.vars...)
	m.chain = append(sc.chain[:0:len(st.chain)], st.chain...)
	if st.out == nil {
		sc.out[0] = m
		st.out = sc.out[:1:1]
		return
	}
	st.out = append(st.out, m)
}

// try matches pattern segment i of b at request position pos; the
// variables b bound so far are st.vars[from:].
func (st *matchState) try(b *Block, i, pos, from int) {
	st.tries++
	segs := st.segs
	pattern := b.Match.Path.Segments
	if i == len(pattern) {
		st.chain = append(st.chain, link{b, len(st.vars)})
		if pos == len(segs) {
			st.record(b)
		}
		if len(b.Children) == 0 && pos != len(segs) {
			st.miss(b, pos, ReasonNoMatchingChild, from)
		}
		kids := b.Children
		if st.indexed {
			kids = b.candidates(segs, pos)
		}
		for _, c := range kids {
			st.match(c, pos)
		}
		st.chain = st.chain[:len(st.chain)-1]
		return
	}
	seg := pattern[i]
	switch seg.Kind {
	case ast.SegLiteral:
		if pos >= len(segs) {
			st.miss(b, pos, ReasonRequestShorter, from)
			return
		}
		if segs[pos] != seg.Text {
			st.miss(b, pos, ReasonLiteralMismatch, from)
			return
		}
		st.try(b, i+1, pos+1, from)
	case ast.SegWildcard:
		if pos >= len(segs) {
			st.miss(b, pos, ReasonRequestShorter, from)
			return
		}
		if segs[pos] == Hypothetical {
			st.try(b, i+1, pos+1, from)
			return
		}
		n := len(st.vars)
		st.vars = append(st.vars, binding{seg.Text, st.segValue(pos)})
		st.try(b, i+1, pos+1, from)
		st.vars = st.vars[:n]
	case ast.SegRecursive:
		n := len(st.vars)
		defer func() { st.vars = st.vars[:n] }()
		if i < len(pattern)-1 {
			st.vars = append(st.vars, binding{seg.Text, value.Path{}})
			st.try(b, i+1, pos, from)
			return
		}
		if len(segs) == pos && st.p.Ruleset.Version == "1" {
			st.miss(b, pos, ReasonRequestShorter, from)
			return
		}
		// The remainder covers a list request's unknown document unless
		// an earlier wildcard already took it.
		partial := pos < len(segs) && segs[len(segs)-1] == Hypothetical
		if partial && st.p.Ruleset.Version == "1" {
			// The official emulator never matches a list request with a
			// rules_version '1' recursive wildcard.
			st.miss(b, pos, ReasonRequestShorter, from)
			return
		}
		rest := append([]string(nil), segs[pos:]...)
		if partial {
			rest = rest[:len(rest)-1]
		}
		st.vars = append(st.vars, binding{seg.Text, value.Path{Segments: rest, Partial: partial}})
		st.try(b, i+1, len(segs), from)
	}
}

func attempt(b *Block, matched, total int, reason string, bound []binding) Attempt {
	a := Attempt{Pattern: b.Pattern, Line: b.Match.Span.Start.Line, Matched: matched, Total: total, Reason: reason}
	if len(bound) > 0 {
		a.Bindings = map[string]string{}
		for _, x := range bound {
			if s, ok := x.v.(value.String); ok {
				a.Bindings[x.name] = string(s)
			} else {
				a.Bindings[x.name] = value.Show(x.v)
			}
		}
	}
	return a
}

// folded is a constant list or map literal's value and the number of
// expressions its evaluation counts.
type folded struct {
	v value.Value
	n int
}

// fold evaluates a literal made only of literals (lists and maps of
// strings, numbers, …): its value is the same on every evaluation, and
// values are immutable. Map keys must be strings, as evaluation requires.
func fold(e ast.Expr) (value.Value, int, bool) {
	switch e := e.(type) {
	case *ast.Paren:
		return fold(e.X)
	case *ast.Literal:
		v := literal(e)
		return v, 1, v != nil
	case *ast.List:
		out := make(value.List, len(e.Elems))
		n := 1
		for i, x := range e.Elems {
			v, k, ok := fold(x)
			if !ok {
				return nil, 0, false
			}
			out[i], n = v, n+k
		}
		return out, n, true
	case *ast.Map:
		out := make(value.Map, len(e.Entries))
		n := 1
		for _, en := range e.Entries {
			k, kn, ok := fold(en.Key)
			if !ok {
				return nil, 0, false
			}
			ks, isStr := k.(value.String)
			if !isStr {
				return nil, 0, false
			}
			if _, dup := out[string(ks)]; dup {
				return nil, 0, false
			}
			v, vn, ok := fold(en.Value)
			if !ok {
				return nil, 0, false
			}
			out[string(ks)], n = v, n+kn+vn
		}
		return out, n, true
	}
	return nil, 0, false
}

// callPlan is a call site resolved when the program is prepared.
type callPlan struct {
	// user and decl are the user function a bare call resolves to and the
	// block declaring it (nil for a global function); user is nil when
	// no user function has the name.
	user *ast.Function
	decl *Block
	// methods are the implementations of a method call's name by
	// receiver type (nil entries: no such method on that type).
	methods *methodSet
}

// methodSet maps receiver types to one method name's implementations.
type methodSet [value.TError + 1]MethodFunc

// planCalls resolves every call site of the ruleset in the block it is
// evaluated from: an allow condition in its match block, a function body
// (lets and return) in the block declaring the function.
func (p *Program) planCalls() {
	p.calls = map[*ast.Call]*callPlan{}
	plan := func(e ast.Expr, b *Block) {
		ast.Inspect(e, func(x ast.Expr) bool {
			c, ok := x.(*ast.Call)
			if !ok {
				return true
			}
			cp := &callPlan{}
			switch fn := c.Fn.(type) {
			case *ast.Ident:
				cp.user, cp.decl = p.LookupFunc(b, fn.Name)
			case *ast.Member:
				cp.methods = p.lib.methodSets[fn.Name]
			}
			p.calls[c] = cp
			return true
		})
	}
	function := func(f *ast.Function, b *Block) {
		for _, l := range f.Lets {
			plan(l.Value, b)
		}
		if f.Return != nil {
			plan(f.Return, b)
		}
	}
	for _, f := range p.Ruleset.Functions {
		function(f, nil)
	}
	var block func(b *Block)
	block = func(b *Block) {
		for _, f := range b.Funcs {
			function(f, b)
		}
		if b.Match != nil {
			for _, a := range b.Match.Allows {
				if a.Cond != nil {
					plan(a.Cond, b)
				}
			}
		}
		for _, c := range b.Children {
			block(c)
		}
	}
	block(p.Root)
}
