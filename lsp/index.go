package lsp

import (
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

// declKind is what a name declares.
type declKind int

const (
	declFunction declKind = iota
	declParam
	declLet
	declPathVar
)

// decl is a declared name: a function, a parameter, a let binding or a
// path variable.
type decl struct {
	kind  declKind
	name  string
	span  source.Span // the name where it is declared
	fn    *ast.Function
	let   *ast.Let
	seg   *ast.Segment
	match *matchInfo  // the match block declaring a path variable or holding a function
	scope source.Span // where a Realtime Database $variable is visible
}

// use is a name resolved to its declaration.
type use struct {
	span source.Span
	decl *decl
}

// matchInfo is a match block with its full pattern.
type matchInfo struct {
	m      *ast.Match
	parent *matchInfo
	full   string // the patterns of the enclosing blocks and its own, joined
}

// analysis is the parse of one version of a document with its names
// resolved, for the requests that read the tree.
type analysis struct {
	doc     *document
	kind    Kind
	file    *source.File
	rs      *ast.Ruleset // Firestore and Storage; nil for the Realtime Database
	decls   []*decl
	uses    []use
	matches []*matchInfo
	// scopes records, for each function and allow, the names visible
	// in it (for completion).
	scopes []scopeSpan
}

// scopeSpan is a region of the source with the scope inside it.
type scopeSpan struct {
	span  source.Span
	scope *scope
	fn    *ast.Function // set inside a function
}

// scope is a lexical scope: functions and variables visible, with the
// enclosing scope.
type scope struct {
	parent *scope
	funcs  map[string]*decl
	vars   map[string]*decl
	match  *matchInfo
}

func newScope(parent *scope, m *matchInfo) *scope {
	return &scope{parent: parent, funcs: map[string]*decl{}, vars: map[string]*decl{}, match: m}
}

func (sc *scope) lookup(name string, fn bool) *decl {
	for ; sc != nil; sc = sc.parent {
		tab := sc.vars
		if fn {
			tab = sc.funcs
		}
		if d, ok := tab[name]; ok {
			return d
		}
	}
	return nil
}

// analyze parses a document and resolves its names. The parser's partial
// tree is used when the text does not parse, so navigation keeps working
// while the user types.
func analyze(doc *document, kind Kind) *analysis {
	a := &analysis{doc: doc, kind: kind, file: source.NewFile(uriPath(doc.uri), doc.text)}
	if kind == Database {
		a.analyzeDatabase()
		return a
	}
	if kind != Firestore && kind != Storage {
		return a
	}
	a.rs, _ = parser.Parse(a.file)
	if a.rs == nil {
		return a
	}
	top := newScope(nil, nil)
	var fns []*ast.Function
	fns = append(fns, a.rs.Functions...)
	if a.rs.Service != nil {
		fns = append(fns, a.rs.Service.Functions...)
	}
	a.declareFuncs(top, fns, nil)
	for _, f := range fns {
		a.resolveFunc(top, f)
	}
	if a.rs.Service != nil {
		for _, m := range a.rs.Service.Matches {
			a.resolveMatch(top, m, nil)
		}
	}
	return a
}

func (a *analysis) declareFuncs(sc *scope, fns []*ast.Function, m *matchInfo) {
	for _, f := range fns {
		if f == nil || f.Name == "" {
			continue
		}
		d := &decl{kind: declFunction, name: f.Name, span: f.NameSpan, fn: f, match: m}
		a.decls = append(a.decls, d)
		if _, dup := sc.funcs[f.Name]; !dup {
			sc.funcs[f.Name] = d
		}
	}
}

func (a *analysis) resolveMatch(parent *scope, m *ast.Match, up *matchInfo) {
	if m == nil {
		return
	}
	info := &matchInfo{m: m, parent: up}
	if m.Path != nil {
		info.full = m.Path.String()
	}
	if up != nil {
		info.full = up.full + info.full
	}
	a.matches = append(a.matches, info)
	sc := newScope(parent, info)
	if m.Path != nil {
		for _, seg := range m.Path.Segments {
			if seg.Kind == ast.SegLiteral || seg.Text == "" {
				continue
			}
			d := &decl{kind: declPathVar, name: seg.Text, span: nameSpan(a.file, seg), seg: seg, match: info}
			a.decls = append(a.decls, d)
			sc.vars[seg.Text] = d
		}
	}
	a.declareFuncs(sc, m.Functions, info)
	for _, f := range m.Functions {
		a.resolveFunc(sc, f)
	}
	for _, al := range m.Allows {
		if al == nil {
			continue
		}
		a.scopes = append(a.scopes, scopeSpan{span: al.Span, scope: sc})
		if !ast.IsNil(al.Cond) {
			a.resolveExpr(sc, al.Cond)
		}
	}
	for _, child := range m.Matches {
		a.resolveMatch(sc, child, info)
	}
}

// nameSpan is the span of a wildcard segment's variable name, without
// the braces and "=**".
func nameSpan(f *source.File, seg *ast.Segment) source.Span {
	start := seg.Span.Start.Offset
	if start < len(f.Text) && f.Text[start] == '{' {
		start++
	}
	return f.Span(start, min(start+len(seg.Text), len(f.Text)))
}

func (a *analysis) resolveFunc(parent *scope, f *ast.Function) {
	if f == nil {
		return
	}
	sc := newScope(parent, parent.match)
	a.scopes = append(a.scopes, scopeSpan{span: f.Span, scope: sc, fn: f})
	for _, p := range f.Params {
		if p == nil {
			continue
		}
		d := &decl{kind: declParam, name: p.Name, span: p.Sp, fn: f}
		a.decls = append(a.decls, d)
		sc.vars[p.Name] = d
	}
	for _, l := range f.Lets {
		if l == nil || l.Name == nil {
			continue
		}
		if !ast.IsNil(l.Value) {
			a.resolveExpr(sc, l.Value) // a let sees the ones before it
		}
		d := &decl{kind: declLet, name: l.Name.Name, span: l.Name.Sp, fn: f, let: l}
		a.decls = append(a.decls, d)
		sc.vars[l.Name.Name] = d
	}
	if !ast.IsNil(f.Return) {
		a.resolveExpr(sc, f.Return)
	}
}

func (a *analysis) resolveExpr(sc *scope, e ast.Expr) {
	callee := map[*ast.Ident]bool{}
	ast.Inspect(e, func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.Call:
			if id, ok := x.Fn.(*ast.Ident); ok {
				callee[id] = true
			}
		case *ast.Ident:
			if d := sc.lookup(x.Name, callee[x]); d != nil {
				a.uses = append(a.uses, use{span: x.Sp, decl: d})
			}
		}
		return true
	})
}

func contains(s source.Span, off int) bool {
	return s.Start.IsValid() && s.Start.Offset <= off && off <= s.End.Offset
}

// declAt returns the declaration named at off: by a use or by the
// declaration itself.
func (a *analysis) declAt(off int) (*decl, source.Span) {
	for _, u := range a.uses {
		if contains(u.span, off) {
			return u.decl, u.span
		}
	}
	for _, d := range a.decls {
		if contains(d.span, off) {
			return d, d.span
		}
	}
	return nil, source.Span{}
}

// occurrences are the declaration's span and every use's.
func (a *analysis) occurrences(d *decl, withDecl bool) []source.Span {
	var out []source.Span
	if withDecl {
		out = append(out, d.span)
	}
	for _, u := range a.uses {
		if u.decl == d {
			out = append(out, u.span)
		}
	}
	return out
}

// scopeAt returns the innermost recorded scope containing off.
func (a *analysis) scopeAt(off int) *scopeSpan {
	var best *scopeSpan
	for i := range a.scopes {
		s := &a.scopes[i]
		if contains(s.span, off) && (best == nil || s.span.Start.Offset >= best.span.Start.Offset) {
			best = s
		}
	}
	return best
}

// matchAt returns the innermost match block containing off.
func (a *analysis) matchAt(off int) *matchInfo {
	var best *matchInfo
	for _, m := range a.matches {
		if contains(m.m.Span, off) && (best == nil || m.m.Span.Start.Offset >= best.m.Span.Start.Offset) {
			best = m
		}
	}
	return best
}

// exprAt returns the innermost expression containing off, with its
// ancestors (outermost first).
func (a *analysis) exprAt(off int) []ast.Expr {
	if a.rs == nil {
		return nil
	}
	var best []ast.Expr
	a.rs.Exprs(func(root ast.Expr) {
		if ast.IsNil(root) || !contains(root.Span(), off) {
			return
		}
		var stack []ast.Expr
		ast.Inspect(root, func(x ast.Expr) bool {
			if x == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, x)
			if contains(x.Span(), off) && len(stack) > len(best) {
				best = append([]ast.Expr(nil), stack...)
			}
			return true
		})
	})
	return best
}
