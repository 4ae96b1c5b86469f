package lsp

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
)

// service is the rules environment name of a kind (check.Firestore, …).
func (a *analysis) service() string {
	if a.kind == Storage {
		return check.Storage
	}
	return check.Firestore
}

func (a *analysis) location(s source.Span) Location {
	return Location{URI: a.doc.uri, Range: a.doc.rangeOf(s)}
}

// definition answers textDocument/definition for functions, parameters,
// let bindings and path variables.
func definition(a *analysis, off int) any {
	d, _ := a.declAt(off)
	if d == nil {
		return nil
	}
	return []Location{a.location(d.span)}
}

// references answers textDocument/references.
func references(a *analysis, off int, withDecl bool) []Location {
	d, _ := a.declAt(off)
	if d == nil {
		return []Location{}
	}
	out := []Location{}
	for _, s := range a.occurrences(d, withDecl) {
		out = append(out, a.location(s))
	}
	return out
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keywords can't name anything.
var keywords = map[string]bool{
	"allow": true, "match": true, "function": true, "let": true, "return": true, "service": true,
	"if": true, "true": true, "false": true, "null": true, "in": true, "is": true, "rules_version": true,
}

func prepareRename(a *analysis, off int) any {
	d, s := a.declAt(off)
	if d == nil {
		return nil
	}
	return map[string]any{"range": a.doc.rangeOf(s), "placeholder": d.name}
}

// rename answers textDocument/rename: every occurrence of a function,
// parameter, let binding or path variable, refused when the new name is
// not an identifier or is taken in a scope it would reach.
func rename(a *analysis, off int, newName string) (any, error) {
	d, _ := a.declAt(off)
	if d == nil {
		return nil, errorf(jsonrpc2.CodeInvalidParams, "nothing to rename here: place the cursor on a function, parameter, let binding or path variable")
	}
	plain := newName
	if a.kind == Database {
		// A Realtime Database wildcard keeps its $.
		if !strings.HasPrefix(newName, "$") {
			return nil, errorf(jsonrpc2.CodeInvalidParams, "%q: a wildcard's name starts with $", newName)
		}
		plain = newName[1:]
	}
	if !identRe.MatchString(plain) || keywords[newName] {
		return nil, errorf(jsonrpc2.CodeInvalidParams, "%q is not a valid name", newName)
	}
	for _, other := range a.decls {
		if other != d && other.name == newName && (other.kind == declFunction) == (d.kind == declFunction) && sameReach(other, d) {
			return nil, errorf(jsonrpc2.CodeInvalidParams, "%q is already declared at line %d", newName, other.span.Start.Line)
		}
	}
	var edits []TextEdit
	for _, s := range a.occurrences(d, true) {
		edits = append(edits, TextEdit{Range: a.doc.rangeOf(s), NewText: newName})
	}
	return WorkspaceEdit{Changes: map[string][]TextEdit{a.doc.uri: edits}}, nil
}

// sameReach reports whether two declarations may be visible from one
// place: a conservative test (same function, or enclosing match blocks).
func sameReach(x, y *decl) bool {
	if x.fn != nil && y.fn != nil && x.kind != declFunction && y.kind != declFunction {
		return x.fn == y.fn
	}
	return true
}

// documentSymbols answers textDocument/documentSymbol: the match tree,
// with each block's functions and allows.
func documentSymbols(_ *Server, a *analysis) any {
	out := []DocumentSymbol{}
	if a.rs == nil {
		return out
	}
	for _, f := range a.rs.Functions {
		out = append(out, a.funcSymbol(f))
	}
	if svc := a.rs.Service; svc != nil {
		sym := DocumentSymbol{Name: "service " + svc.Name, Kind: SymbolNamespace, Range: a.doc.rangeOf(svc.Span), SelectionRange: a.doc.rangeOf(svc.NameSpan)}
		for _, f := range svc.Functions {
			sym.Children = append(sym.Children, a.funcSymbol(f))
		}
		for _, m := range svc.Matches {
			sym.Children = append(sym.Children, a.matchSymbol(m))
		}
		out = append(out, sym)
	}
	return out
}

func (a *analysis) funcSymbol(f *ast.Function) DocumentSymbol {
	return DocumentSymbol{Name: f.Name, Detail: signature(f), Kind: SymbolFunction, Range: a.doc.rangeOf(f.Span), SelectionRange: a.doc.rangeOf(f.NameSpan)}
}

func (a *analysis) matchSymbol(m *ast.Match) DocumentSymbol {
	name, sel := "match", a.doc.rangeOf(m.Span)
	if m.Path != nil {
		name, sel = "match "+m.Path.String(), a.doc.rangeOf(m.Path.Span)
	}
	sym := DocumentSymbol{Name: name, Kind: SymbolNamespace, Range: a.doc.rangeOf(m.Span), SelectionRange: sel}
	for _, f := range m.Functions {
		sym.Children = append(sym.Children, a.funcSymbol(f))
	}
	for _, al := range m.Allows {
		var methods []string
		for _, x := range al.Methods {
			methods = append(methods, x.Name)
		}
		detail := "always"
		if !ast.IsNil(al.Cond) {
			detail = "if " + source.ClipText(oneLine(a.text(al.Cond.Span())), 80)
		}
		sym.Children = append(sym.Children, DocumentSymbol{Name: "allow " + strings.Join(methods, ", "), Detail: detail, Kind: SymbolEvent, Range: a.doc.rangeOf(al.Span), SelectionRange: a.doc.rangeOf(al.Span)})
	}
	for _, c := range m.Matches {
		sym.Children = append(sym.Children, a.matchSymbol(c))
	}
	return sym
}

func (a *analysis) text(s source.Span) string {
	if !s.Start.IsValid() || s.End.Offset > len(a.file.Text) || s.End.Offset < s.Start.Offset {
		return ""
	}
	return a.file.Text[s.Start.Offset:s.End.Offset]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func signature(f *ast.Function) string {
	var ps []string
	for _, p := range f.Params {
		if p != nil {
			ps = append(ps, p.Name)
		}
	}
	return "function " + f.Name + "(" + strings.Join(ps, ", ") + ")"
}

// binding describes a name or property the service defines.
type binding struct{ typ, doc string }

// bindings are request, resource and their properties, per service: what
// hover says about them. The property names are lint.Properties'.
var bindings = map[string]map[string]binding{
	check.Firestore: {
		"request":                   {"map", "The incoming request: who asks (auth), what (method, path, query) and, for writes, the document as it would be (resource)."},
		"request.auth":              {"map or null", "The signed-in user: uid and token (the ID token's claims); null when the request is unauthenticated."},
		"request.auth.uid":          {"string", "The user's id."},
		"request.auth.token":        {"map", "The ID token's claims: email, email_verified, firebase.sign_in_provider, custom claims, …"},
		"request.method":            {"string", "The operation: get, list, create, update or delete."},
		"request.path":              {"path", "The path of the document asked for."},
		"request.query":             {"map", "For list requests: limit, offset and orderBy."},
		"request.time":              {"timestamp", "When the request was received."},
		"request.resource":          {"map", "The document as it would be after the write (create and update)."},
		"request.resource.data":     {"map", "The fields of the document as it would be after the write."},
		"request.resource.__name__": {"path", "The document's full path."},
		"resource":                  {"map or null", "The document as stored before the request; null when it does not exist."},
		"resource.data":             {"map", "The stored document's fields."},
		"resource.__name__":         {"path", "The stored document's full path."},
		"database":                  {"string", "The database id, from match /databases/{database}/documents."},
	},
	check.Storage: {
		"request":                      {"map", "The incoming request: auth, method, path, time and, for writes, the object as it would be (resource)."},
		"request.auth":                 {"map or null", "The signed-in user: uid and token; null when unauthenticated."},
		"request.auth.uid":             {"string", "The user's id."},
		"request.auth.token":           {"map", "The ID token's claims."},
		"request.method":               {"string", "The operation: get, list, create, update or delete."},
		"request.path":                 {"path", "The object path asked for."},
		"request.params":               {"map", "For list requests: the query's parameters (prefix, delimiter, …)."},
		"request.time":                 {"timestamp", "When the request was received."},
		"request.resource":             {"map", "The object's metadata as it would be after the upload: name, size, contentType, metadata, …"},
		"resource":                     {"map or null", "The stored object's metadata; null when it does not exist."},
		"request.resource.size":        {"int", "The object's size in bytes."},
		"resource.size":                {"int", "The object's size in bytes."},
		"request.resource.contentType": {"string", "The object's MIME type."},
		"resource.contentType":         {"string", "The object's MIME type."},
		"request.resource.metadata":    {"map", "The object's custom metadata."},
		"resource.metadata":            {"map", "The object's custom metadata."},
		"request.resource.name":        {"string", "The object's full name (path)."},
		"resource.name":                {"string", "The object's full name (path)."},
	},
}

// chain renders an access chain of identifiers and members
// ("request.auth.uid"), or "" for any other expression.
func chain(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.Member:
		if x := chain(e.X); x != "" {
			return x + "." + e.Name
		}
	}
	return ""
}

// hover answers textDocument/hover.
func hover(a *analysis, off int) any {
	if d, s := a.declAt(off); d != nil {
		r := a.doc.rangeOf(s)
		return &Hover{Contents: MarkupContent{Kind: "markdown", Value: a.describe(d)}, Range: &r}
	}
	if a.kind == Database {
		if h := a.hoverDatabase(off); h != nil {
			return h
		}
		return nil
	}
	if a.rs == nil {
		return nil
	}
	stack := a.exprAt(off)
	for i := len(stack) - 1; i >= 0; i-- {
		if text, span, ok := a.hoverExpr(stack, i, off); ok {
			r := a.doc.rangeOf(span)
			return &Hover{Contents: MarkupContent{Kind: "markdown", Value: text}, Range: &r}
		}
	}
	if m := a.matchAt(off); m != nil && m.m.Path != nil && contains(m.m.Path.Span, off) {
		r := a.doc.rangeOf(m.m.Path.Span)
		return &Hover{Contents: MarkupContent{Kind: "markdown", Value: a.describeMatch(m)}, Range: &r}
	}
	return nil
}

// hoverExpr describes stack[i] when it is a call's name, a binding or a
// property of one.
func (a *analysis) hoverExpr(stack []ast.Expr, i, off int) (string, source.Span, bool) {
	env := check.Environment(a.service())
	var parent ast.Expr
	if i > 0 {
		parent = stack[i-1]
	}
	switch e := stack[i].(type) {
	case *ast.Member:
		if !contains(e.NameSp, off) {
			return "", source.Span{}, false
		}
		if call, ok := parent.(*ast.Call); ok && call.Fn == e {
			if ns, ok := e.X.(*ast.Ident); ok {
				if d, ok := env.Lookup(eval.Namespaced, ns.Name, e.Name); ok {
					return declDoc(d), e.NameSp, true
				}
			}
			if d, ok := env.Lookup(eval.Method, "", e.Name); ok {
				return declDoc(d), e.NameSp, true
			}
			return "", source.Span{}, false
		}
		if b, ok := bindings[a.service()][chain(e)]; ok {
			return bindingDoc(chain(e), b), e.NameSp, true
		}
	case *ast.Ident:
		if call, ok := parent.(*ast.Call); ok && call.Fn == e {
			if d, ok := env.Lookup(eval.Global, "", e.Name); ok {
				return declDoc(d), e.Sp, true
			}
		}
		if b, ok := bindings[a.service()][e.Name]; ok {
			return bindingDoc(e.Name, b), e.Sp, true
		}
		for _, space := range env.Namespaces() {
			if space == e.Name {
				return fmt.Sprintf("```\nnamespace %s\n```\nFunctions: %s.", space, strings.Join(env.Namespace(space), ", ")), e.Sp, true
			}
		}
	}
	return "", source.Span{}, false
}

func bindingDoc(name string, b binding) string {
	return fmt.Sprintf("```\n%s: %s\n```\n%s", name, b.typ, b.doc)
}

// declDoc renders a stdlib or builtin declaration: its signature and its
// one-line doc, from the one table (eval.Standard, with the service's
// builtins from check.Environment).
func declDoc(d eval.Decl) string {
	args := make([]string, 0, max(d.MaxArgs, d.MinArgs))
	switch {
	case d.MaxArgs == eval.AnyArgs:
		args = append(args, "…")
	default:
		for i := 0; i < d.MaxArgs; i++ {
			a := fmt.Sprintf("arg%d", i+1)
			if i >= d.MinArgs {
				a += "?"
			}
			args = append(args, a)
		}
	}
	sig := d.Name + "(" + strings.Join(args, ", ") + ")"
	switch d.Kind {
	case eval.Namespaced:
		sig = d.Namespace + "." + sig
	case eval.Method:
		var recv []string
		for _, r := range d.Receivers {
			recv = append(recv, r.Type.String())
		}
		sig = "(" + strings.Join(recv, " | ") + ")." + sig
	}
	doc := d.Doc
	if d.Status == eval.CompileOnly {
		doc += " (compiles, but fails when evaluated)"
	}
	return "```\n" + sig + "\n```\n" + doc
}

// describe renders a declaration for hover.
func (a *analysis) describe(d *decl) string {
	switch d.kind {
	case declFunction:
		where := "at the top level"
		if d.match != nil {
			where = "in match " + d.match.full
		}
		return fmt.Sprintf("```\n%s\n```\nUser function declared %s, line %d.", signature(d.fn), where, d.span.Start.Line)
	case declParam:
		return fmt.Sprintf("```\n%s: any\n```\nParameter of `%s`.", d.name, signature(d.fn))
	case declLet:
		val := ""
		if d.let != nil && !ast.IsNil(d.let.Value) {
			val = source.ClipText(oneLine(a.text(d.let.Value.Span())), 120)
		}
		return fmt.Sprintf("```\nlet %s = %s\n```\nLet binding of `%s`, line %d.", d.name, val, signature(d.fn), d.span.Start.Line)
	case declPathVar:
		if a.kind == Database {
			return fmt.Sprintf("```\n%s: string\n```\nThe key matched at `%s`.", d.name, d.match.full)
		}
		typ := "string"
		what := "one segment of the matched path"
		if d.seg != nil && d.seg.Kind == ast.SegRecursive {
			typ, what = "path", "the rest of the matched path (zero or more segments)"
		}
		return fmt.Sprintf("```\n%s: %s\n```\nPath variable: %s, in match `%s`.", d.name, typ, what, d.match.full)
	}
	return d.name
}

// describeMatch renders the document paths a match block matches.
func (a *analysis) describeMatch(m *matchInfo) string {
	noun := "documents"
	full := m.full
	if a.kind == Storage {
		noun = "objects"
	}
	var vars []string
	for x := m; x != nil; x = x.parent {
		if x.m.Path == nil {
			continue
		}
		for _, s := range x.m.Path.Segments {
			switch s.Kind {
			case ast.SegWildcard:
				vars = append(vars, fmt.Sprintf("`%s`: any one segment", s.Text))
			case ast.SegRecursive:
				vars = append(vars, fmt.Sprintf("`%s`: the rest of the path", s.Text))
			}
		}
	}
	text := fmt.Sprintf("```\nmatch %s\n```\nMatches %s at `%s`", m.m.Path.String(), noun, full)
	if len(vars) > 0 {
		text += " — " + strings.Join(vars, "; ")
	}
	if len(m.m.Allows) == 0 {
		text += ". No allow here: requests for these paths need an allow in a nested match."
	}
	return text + "."
}
