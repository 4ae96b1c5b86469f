package lsp

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/rtdb/expr"
	"github.com/pyric/pyric/rules/rtdb/jsonc"
)

// databaseVariables are the names a Realtime Database rule sees besides
// its $wildcards.
var databaseVariables = map[string]binding{
	"auth":    {"object or null", "The signed-in user: uid, provider and token (the ID token's claims); null when unauthenticated."},
	"data":    {"snapshot", "The data at this location before the operation."},
	"newData": {"snapshot", "The data at this location as it would be after the write (.write and .validate)."},
	"root":    {"snapshot", "The database root before the operation."},
	"now":     {"number", "The server time in milliseconds since the epoch."},
	"query":   {"object", "In .read rules: the read's query (orderByChild, startAt, limitToFirst, …)."},
}

// analyzeDatabase resolves the $wildcard variables of a
// database.rules.json: each "$name" key declares a variable for its
// subtree, used as $name inside the rule strings below it.
func (a *analysis) analyzeDatabase() {
	root, err := jsonc.Parse(a.file.Text)
	if err != nil || root == nil || root.Kind != jsonc.Object {
		return
	}
	rules := root.Get("rules")
	if rules == nil {
		return
	}
	a.walkDatabase(rules, "", nil)
}

func (a *analysis) walkDatabase(v *jsonc.Value, path string, scope []*decl) {
	if v == nil || v.Kind != jsonc.Object {
		return
	}
	for _, m := range v.Members {
		switch {
		case strings.HasPrefix(m.Key, "$"):
			sub := path + "/" + m.Key
			d := &decl{kind: declPathVar, name: m.Key, span: a.file.Span(m.KeyStart+1, m.KeyEnd-1), match: &matchInfo{full: sub}}
			if m.Value != nil {
				d.scope = a.file.Span(m.Value.Start, m.Value.End)
			}
			a.decls = append(a.decls, d)
			a.walkDatabase(m.Value, sub, append(scope[:len(scope):len(scope)], d))
		case m.Key == ".read" || m.Key == ".write" || m.Key == ".validate":
			if m.Value == nil || m.Value.Kind != jsonc.String {
				continue
			}
			n, perr := expr.Parse(m.Value.Str)
			if perr != nil || n == nil {
				continue
			}
			sv := m.Value
			expr.Walk(n, func(x expr.Node) bool {
				id, ok := x.(*expr.Ident)
				if !ok || !strings.HasPrefix(id.Name, "$") {
					return true
				}
				for i := len(scope) - 1; i >= 0; i-- {
					if scope[i].name == id.Name {
						a.uses = append(a.uses, use{span: a.file.Span(sv.Offset(id.Pos()), sv.Offset(id.End())), decl: scope[i]})
						break
					}
				}
				return true
			})
		case strings.HasPrefix(m.Key, "."):
		default:
			a.walkDatabase(m.Value, path+"/"+m.Key, scope)
		}
	}
}

// databaseWord is the identifier (with a leading $) around off.
func databaseWord(text string, off int) (string, int, int) {
	start, end := off, off
	for start > 0 && isWordByte(text[start-1]) {
		start--
	}
	for end < len(text) && isWordByte(text[end]) {
		end++
	}
	return text[start:end], start, end
}

// hoverDatabase describes a rule's variable under the cursor.
func (a *analysis) hoverDatabase(off int) *Hover {
	word, start, end := databaseWord(a.file.Text, off)
	b, ok := databaseVariables[word]
	if !ok || start > 0 && a.file.Text[start-1] == '.' {
		return nil
	}
	r := a.doc.rangeOf(a.file.Span(start, end))
	return &Hover{Contents: MarkupContent{Kind: "markdown", Value: bindingDoc(word, b)}, Range: &r}
}

// completeDatabase completes inside a rule string: after a dot, the
// snapshot or string methods (from package rtdb's tables) or auth's
// properties; elsewhere the variables and the $wildcards in scope.
func (a *analysis) completeDatabase(off int) []CompletionItem {
	text := a.file.Text[:off]
	i := len(text)
	for i > 0 && isWordByte(text[i-1]) {
		i--
	}
	before := text[:i]
	items := []CompletionItem{}
	if strings.HasSuffix(before, ".") {
		recv := receiverChain(before[:len(before)-1])
		switch {
		case recv == "auth":
			for _, p := range []string{"provider", "token", "uid"} {
				items = append(items, CompletionItem{Label: p, Kind: KindField})
			}
		case recv == "data" || recv == "newData" || recv == "root" || strings.HasSuffix(strings.TrimSpace(before[:len(before)-1]), ")"):
			for _, m := range rtdb.SnapshotMethods() {
				items = append(items, CompletionItem{Label: m, Kind: KindMethod, Detail: "snapshot." + m + "()", InsertText: m + "($0)", InsertTextFormat: formatSnippet})
			}
		default:
			for _, m := range rtdb.StringMethods() {
				items = append(items, CompletionItem{Label: m, Kind: KindMethod, Detail: "string." + m + "()", InsertText: m + "($0)", InsertTextFormat: formatSnippet})
			}
			items = append(items, CompletionItem{Label: "length", Kind: KindField, Detail: "string.length"})
		}
		return items
	}
	for _, name := range []string{"auth", "data", "newData", "now", "query", "root"} {
		b := databaseVariables[name]
		items = append(items, CompletionItem{Label: name, Kind: KindVariable, Detail: b.typ, Documentation: b.doc})
	}
	for _, d := range a.decls {
		if d.kind == declPathVar && contains(d.scope, off) {
			items = append(items, CompletionItem{Label: d.name, Kind: KindVariable, Detail: fmt.Sprintf("key matched at %s", d.match.full)})
		}
	}
	return items
}
