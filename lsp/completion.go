package lsp

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/value"
)

// operations are what allow grants.
var operations = []string{"read", "write", "get", "list", "create", "update", "delete"}

// snippets are the statements of a match block.
var snippets = []CompletionItem{
	{Label: "match", Kind: KindSnippet, Detail: "match block", InsertText: "match /${1:collection}/{${2:id}} {\n\t$0\n}", InsertTextFormat: formatSnippet},
	{Label: "allow", Kind: KindSnippet, Detail: "allow statement", InsertText: "allow ${1|read,write,get,list,create,update,delete|}: if ${2:request.auth != null};", InsertTextFormat: formatSnippet},
	{Label: "function", Kind: KindSnippet, Detail: "function declaration", InsertText: "function ${1:name}(${2}) {\n\treturn ${0:true};\n}", InsertTextFormat: formatSnippet},
}

// mapTyped are access chains known to be maps.
var mapTyped = map[string]bool{
	"request.resource.data": true, "resource.data": true, "request.auth.token": true, "request.query": true,
	"request.resource.metadata": true, "resource.metadata": true, "request.params": true,
}

// completion answers textDocument/completion; sess, when set, adds the
// fields of the session's documents after request.resource.data. and
// resource.data.
func completion(a *analysis, off int, sess *Session) any {
	list := CompletionList{Items: []CompletionItem{}}
	if a.kind == Database {
		list.Items = a.completeDatabase(off)
		return list
	}
	if a.kind != Firestore && a.kind != Storage {
		return list
	}
	text := a.doc.text[:off]
	// The word being typed and what stands before it.
	i := len(text)
	for i > 0 && isWordByte(text[i-1]) {
		i--
	}
	before := text[:i]
	env := check.Environment(a.service())
	if strings.HasSuffix(before, ".") {
		recv := receiverChain(before[:len(before)-1])
		list.Items = a.afterDot(env, recv)
		if recv == "request.resource.data" || recv == "resource.data" {
			if m := a.matchAt(off); m != nil && sess != nil && a.kind == Firestore {
				for _, f := range sess.fields(m.full) {
					list.Items = append(list.Items, CompletionItem{Label: f, Kind: KindField, Detail: "field of the session's documents at " + m.full})
				}
			}
		}
		return list
	}
	if isAllowContext(before) {
		for _, op := range operations {
			list.Items = append(list.Items, CompletionItem{Label: op, Kind: KindKeyword, Detail: "operation"})
		}
		return list
	}
	sc := a.scopeAt(off)
	if sc == nil {
		// Between statements: the snippets, and nothing of expressions.
		list.Items = append(list.Items, snippets...)
		return list
	}
	seen := map[string]bool{}
	add := func(it CompletionItem) {
		if !seen[it.Label] {
			seen[it.Label] = true
			list.Items = append(list.Items, it)
		}
	}
	for x := sc.scope; x != nil; x = x.parent {
		for _, name := range sortedKeys(x.vars) {
			d := x.vars[name]
			detail := "let binding"
			switch d.kind {
			case declParam:
				detail = "parameter"
			case declPathVar:
				detail = "path variable of " + d.match.full
			}
			add(CompletionItem{Label: name, Kind: KindVariable, Detail: detail})
		}
		for _, name := range sortedKeys(x.funcs) {
			add(CompletionItem{Label: name, Kind: KindFunction, Detail: signature(x.funcs[name].fn), InsertText: name + "($0)", InsertTextFormat: formatSnippet})
		}
	}
	for _, name := range []string{"request", "resource"} {
		b := bindings[a.service()][name]
		add(CompletionItem{Label: name, Kind: KindVariable, Detail: b.typ, Documentation: b.doc})
	}
	for _, name := range env.Globals() {
		d, _ := env.Lookup(eval.Global, "", name)
		add(CompletionItem{Label: name, Kind: KindFunction, Detail: "builtin", Documentation: d.Doc, InsertText: name + "($0)", InsertTextFormat: formatSnippet})
	}
	for _, space := range env.Namespaces() {
		add(CompletionItem{Label: space, Kind: KindModule, Detail: "namespace", Documentation: strings.Join(env.Namespace(space), ", ")})
	}
	for _, kw := range []string{"true", "false", "null"} {
		add(CompletionItem{Label: kw, Kind: KindConstant})
	}
	return list
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// receiverChain returns the dotted identifier chain ending at the end of s
// ("request.resource.data"), "" when what precedes is not one (a call, a
// literal).
func receiverChain(s string) string {
	i := len(s)
	for i > 0 && (isWordByte(s[i-1]) || s[i-1] == '.') {
		i--
	}
	c := strings.Trim(s[i:], ".")
	if c == "" || strings.Contains(c, "..") {
		return ""
	}
	if c[0] >= '0' && c[0] <= '9' {
		return ""
	}
	return c
}

// isAllowContext reports whether the cursor is in an allow's operation
// list: after `allow` or a comma following an operation, before the colon.
func isAllowContext(before string) bool {
	line := before[strings.LastIndexAny(before, ";{}\n")+1:]
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "allow") || strings.Contains(t, ":") {
		return false
	}
	rest := strings.TrimSpace(strings.TrimPrefix(t, "allow"))
	return rest == "" || strings.HasSuffix(rest, ",")
}

// afterDot completes what follows `recv.`: a namespace's functions, a
// binding's properties, or methods by the receiver's type.
func (a *analysis) afterDot(env eval.Decls, recv string) []CompletionItem {
	items := []CompletionItem{}
	for _, space := range env.Namespaces() {
		if recv == space {
			for _, name := range env.Namespace(space) {
				d, _ := env.Lookup(eval.Namespaced, space, name)
				items = append(items, CompletionItem{Label: name, Kind: KindFunction, Detail: space + "." + name, Documentation: d.Doc, InsertText: name + "($0)", InsertTextFormat: formatSnippet})
			}
			return items
		}
	}
	svc := a.service()
	for _, p := range lint.Properties(svc, recv) {
		b := bindings[svc][recv+"."+p]
		items = append(items, CompletionItem{Label: p, Kind: KindField, Detail: b.typ, Documentation: b.doc})
	}
	if len(items) > 0 {
		return items
	}
	var types []value.Type
	switch {
	case mapTyped[recv]:
		types = []value.Type{value.TMap}
	case recv == "request.auth.uid" || recv == "request.method":
		types = []value.Type{value.TString}
	case recv == "request.time":
		types = []value.Type{value.TTimestamp}
	case recv == "request.path" || strings.HasSuffix(recv, "__name__"):
		types = []value.Type{value.TPath}
	default:
		if d := a.pathVar(recv); d != nil {
			types = []value.Type{value.TString}
			if d.seg != nil && d.seg.Kind == ast.SegRecursive {
				types = []value.Type{value.TPath}
			}
		}
	}
	for _, name := range env.Methods() {
		d, _ := env.Lookup(eval.Method, "", name)
		if types != nil && !receives(d, types) {
			continue
		}
		var recvs []string
		for _, r := range d.Receivers {
			recvs = append(recvs, r.Type.String())
		}
		items = append(items, CompletionItem{Label: name, Kind: KindMethod, Detail: "(" + strings.Join(recvs, " | ") + ")." + name + "()", Documentation: d.Doc, InsertText: name + "($0)", InsertTextFormat: formatSnippet})
	}
	return items
}

func receives(d eval.Decl, types []value.Type) bool {
	for _, r := range d.Receivers {
		for _, t := range types {
			if r.Type == t {
				return true
			}
		}
	}
	return false
}

// pathVar returns a path variable declaration named name, if any.
func (a *analysis) pathVar(name string) *decl {
	for _, d := range a.decls {
		if d.kind == declPathVar && d.name == name {
			return d
		}
	}
	return nil
}

func sortedKeys(m map[string]*decl) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fields returns the field names of the session's Firestore documents
// whose path the match pattern matches: the captured final state and
// every committed write, sorted.
func (s *Session) fields(pattern string) []string {
	if s.Fixture == nil {
		return nil
	}
	docs := map[string]map[string]any{}
	if sd := s.Fixture.Services["firestore"]; sd != nil && len(sd.State) > 0 {
		var st struct {
			Documents map[string]map[string]any `json:"documents"`
		}
		if json.Unmarshal(sd.State, &st) == nil {
			docs = st.Documents
		}
	}
	for _, e := range s.Fixture.Events {
		if e.Service == "firestore" && e.Commit != nil {
			if after, ok := e.Commit.After.(map[string]any); ok {
				if docs == nil {
					docs = map[string]map[string]any{}
				}
				docs[e.Path] = after
			}
		}
	}
	pat := strings.Split(strings.Trim(documentsPattern(pattern), "/"), "/")
	seen := map[string]bool{}
	var out []string
	for path, fields := range docs {
		if !matchPattern(pat, strings.Split(strings.Trim(path, "/"), "/")) {
			continue
		}
		for f := range fields {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// documentsPattern strips the /databases/{database}/documents prefix of
// a Firestore match pattern: events name documents from there.
func documentsPattern(p string) string {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 4)
	if len(parts) >= 3 && parts[0] == "databases" && parts[2] == "documents" {
		if len(parts) == 4 {
			return parts[3]
		}
		return ""
	}
	return p
}

// matchPattern matches path segments against pattern segments: a
// literal matches itself, {x} one segment, {x=**} the rest.
func matchPattern(pat, segs []string) bool {
	for i, p := range pat {
		if strings.HasSuffix(p, "=**}") {
			return true
		}
		if i >= len(segs) {
			return false
		}
		if !(strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}")) && p != segs[i] {
			return false
		}
	}
	return len(pat) == len(segs)
}
