package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/lsp"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
)

const sample = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    // Signed in and the owner.
    function isOwner(uid) {
      let me = request.auth.uid;
      return me == uid;
    }
    match /users/{userId} {
      allow read: if isOwner(userId) && math.abs(1) == 1;
      allow write: if isOwner(userId) && request.resource.data.keys().hasOnly(['name']);
    }
  }
}
`

// at returns the protocol position of the n-th occurrence (0-based) of
// needle in text, plus delta characters.
func at(t *testing.T, text, needle string, n, delta int) lsp.Position {
	t.Helper()
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(text[off+1:], needle)
		if j < 0 {
			t.Fatalf("%q: occurrence %d not found", needle, n)
		}
		off += 1 + j
	}
	off += delta
	line := strings.Count(text[:off], "\n")
	return lsp.Position{Line: line, Character: off - (strings.LastIndex(text[:off], "\n") + 1)}
}

func pos(uri string, p lsp.Position) lsp.TextDocumentPositionParams {
	return lsp.TextDocumentPositionParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: p}
}

func TestFirestoreFeatures(t *testing.T) {
	t.Parallel()
	c := start(t, lsp.Options{Debounce: -1}, "")
	uri := "file:///project/firestore.rules"
	c.open(uri, "firestore-rules", sample)
	if d := c.waitDiags(uri, 1); len(d) != 0 {
		t.Fatalf("clean sample: %+v", d)
	}

	t.Run("incremental edit", func(t *testing.T) {
		// Replace `me == uid` by `me == ` (a syntax error) and back.
		p := at(t, sample, "uid;\n    }", 0, 0)
		c.notify("textDocument/didChange", lsp.DidChangeTextDocumentParams{
			TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: uri, Version: 2},
			ContentChanges: []lsp.TextDocumentContentChangeEvent{{Range: &lsp.Range{Start: p, End: lsp.Position{Line: p.Line, Character: p.Character + 3}}, Text: ""}},
		})
		d := c.waitDiags(uri, 2)
		if len(d) == 0 || d[0].Severity != lsp.SeverityError || d[0].Code != "PARSE_ERROR" || d[0].Range.Start.Line != p.Line {
			t.Fatalf("after the edit: %+v", d)
		}
		c.notify("textDocument/didChange", lsp.DidChangeTextDocumentParams{
			TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: uri, Version: 3},
			ContentChanges: []lsp.TextDocumentContentChangeEvent{{Range: &lsp.Range{Start: p, End: p}, Text: "uid"}},
		})
		if d := c.waitDiags(uri, 3); len(d) != 0 {
			t.Fatalf("after undoing the edit: %+v", d)
		}
	})

	t.Run("hover", func(t *testing.T) {
		var h lsp.Hover
		c.call("textDocument/hover", pos(uri, at(t, sample, "abs", 0, 1)), &h)
		d, _ := check.Environment(check.Firestore).Lookup(eval.Namespaced, "math", "abs")
		if !strings.Contains(h.Contents.Value, "math.abs(arg1)") || !strings.Contains(h.Contents.Value, d.Doc) {
			t.Errorf("math.abs: %q", h.Contents.Value)
		}
		c.call("textDocument/hover", pos(uri, at(t, sample, "userId)", 0, 2)), &h)
		if !strings.Contains(h.Contents.Value, "userId: string") || !strings.Contains(h.Contents.Value, "/databases/{database}/documents/users/{userId}") {
			t.Errorf("path variable: %q", h.Contents.Value)
		}
		c.call("textDocument/hover", pos(uri, at(t, sample, "auth.uid", 0, 1)), &h)
		if !strings.Contains(h.Contents.Value, "request.auth: map or null") {
			t.Errorf("request.auth: %q", h.Contents.Value)
		}
		c.call("textDocument/hover", pos(uri, at(t, sample, "me ==", 0, 0)), &h)
		if !strings.Contains(h.Contents.Value, "let me = request.auth.uid") {
			t.Errorf("let: %q", h.Contents.Value)
		}
		c.call("textDocument/hover", pos(uri, at(t, sample, "/users/", 0, 2)), &h)
		if !strings.Contains(h.Contents.Value, "Matches documents at `/databases/{database}/documents/users/{userId}`") {
			t.Errorf("match: %q", h.Contents.Value)
		}
	})

	t.Run("definition and references", func(t *testing.T) {
		var locs []lsp.Location
		c.call("textDocument/definition", pos(uri, at(t, sample, "isOwner(userId) &&", 0, 2)), &locs)
		if len(locs) != 1 || locs[0].Range.Start != at(t, sample, "isOwner", 0, 0) {
			t.Fatalf("definition of isOwner: %+v", locs)
		}
		c.call("textDocument/definition", pos(uri, at(t, sample, "me ==", 0, 0)), &locs)
		if len(locs) != 1 || locs[0].Range.Start != at(t, sample, "me =", 0, 0) {
			t.Fatalf("definition of let me: %+v", locs)
		}
		c.call("textDocument/references", lsp.ReferenceParams{TextDocumentPositionParams: pos(uri, at(t, sample, "{userId}", 0, 1))}, &locs)
		if len(locs) != 2 {
			t.Fatalf("references of userId: %+v", locs)
		}
	})

	t.Run("rename", func(t *testing.T) {
		var edit lsp.WorkspaceEdit
		c.call("textDocument/rename", lsp.RenameParams{TextDocumentPositionParams: pos(uri, at(t, sample, "isOwner", 1, 0)), NewName: "owns"}, &edit)
		if got := applyEdits(t, sample, edit.Changes[uri]); strings.Contains(got, "isOwner") || strings.Count(got, "owns(") != 3 {
			t.Fatalf("rename:\n%s", got)
		}
		if err := c.callErr("textDocument/rename", lsp.RenameParams{TextDocumentPositionParams: pos(uri, at(t, sample, "isOwner", 1, 0)), NewName: "not valid"}, &edit); err == nil {
			t.Fatal("a rename to an invalid name succeeded")
		}
	})

	t.Run("completion", func(t *testing.T) {
		labels := func(text string, p lsp.Position) map[string]bool {
			u := "file:///project/c" + string(rune('a'+p.Line)) + ".rules"
			c.open(u, "firestore-rules", text)
			var l lsp.CompletionList
			c.call("textDocument/completion", pos(u, p), &l)
			out := map[string]bool{}
			for _, it := range l.Items {
				out[it.Label] = true
			}
			return out
		}
		edited := strings.Replace(sample, "math.abs(1) == 1", "request.auth.", 1)
		if got := labels(edited, at(t, edited, "auth.;", 0, 5)); !got["uid"] || !got["token"] || len(got) != 2 {
			t.Errorf("request.auth.: %v", got)
		}
		edited = strings.Replace(sample, "math.abs(1) == 1", "math.", 1)
		if got := labels(edited, at(t, edited, "math.;", 0, 5)); !got["abs"] || !got["pow"] || got["size"] {
			t.Errorf("math.: %v", got)
		}
		edited = strings.Replace(sample, "math.abs(1) == 1", "request.resource.data.", 1)
		if got := labels(edited, at(t, edited, "data.;", 0, 5)); !got["keys"] || !got["diff"] || got["lower"] {
			t.Errorf("request.resource.data.: %v", got)
		}
		edited = strings.Replace(sample, "math.abs(1) == 1", "userId.", 1)
		if got := labels(edited, at(t, edited, "userId.;", 0, 7)); !got["lower"] || !got["matches"] || got["keys"] {
			t.Errorf("userId.: %v", got)
		}
		if got := labels(sample, at(t, sample, "math.abs", 0, 0)); !got["userId"] || !got["database"] || !got["isOwner"] || !got["request"] || !got["math"] {
			t.Errorf("in a condition: %v", got)
		}
		edited = strings.Replace(sample, "allow write", "allow ", 1)
		if got := labels(edited, at(t, edited, "allow :", 0, 6)); !got["create"] || !got["list"] || len(got) != 7 {
			t.Errorf("allow operations: %v", got)
		}
		if got := labels(sample, at(t, sample, "    match /users", 0, 4)); !got["match"] || !got["allow"] || !got["function"] {
			t.Errorf("between statements: %v", got)
		}
	})

	t.Run("symbols", func(t *testing.T) {
		var syms []lsp.DocumentSymbol
		c.call("textDocument/documentSymbol", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}}, &syms)
		b, _ := json.Marshal(syms)
		for _, want := range []string{`"service cloud.firestore"`, `"match /databases/{database}/documents"`, `"isOwner"`, `"match /users/{userId}"`, `"allow read"`, `"allow write"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("outline lacks %s: %s", want, b)
			}
		}
	})

	t.Run("formatting", func(t *testing.T) {
		messy := strings.ReplaceAll(sample, "\n  ", "\n\t ") + "\n\n\n   // trailing comment   \n"
		u := "file:///project/messy.rules"
		c.open(u, "firestore-rules", messy)
		var edits []lsp.TextEdit
		c.call("textDocument/formatting", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: u}}, &edits)
		got := applyEdits(t, messy, edits)
		if got != sample+"\n// trailing comment\n" {
			t.Fatalf("formatted:\n%s", got)
		}
		if lsp.Format(got) != got {
			t.Fatal("formatting is not idempotent")
		}
	})
}

// applyEdits applies non-overlapping edits to text.
func applyEdits(t *testing.T, text string, edits []lsp.TextEdit) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	offset := func(p lsp.Position) int {
		off := 0
		for i := 0; i < p.Line && i < len(lines); i++ {
			off += len(lines[i])
		}
		return off + p.Character // the tests' texts are ASCII
	}
	// Apply from the end so earlier offsets stay valid.
	for i := len(edits) - 1; i >= 0; i-- {
		best := i
		for j := 0; j < i; j++ {
			if offset(edits[j].Range.Start) > offset(edits[best].Range.Start) {
				best = j
			}
		}
		edits[i], edits[best] = edits[best], edits[i]
		e := edits[i]
		text = text[:offset(e.Range.Start)] + e.NewText + text[offset(e.Range.End):]
	}
	return text
}

// TestFirebaseJSONNamesFiles opens rules.json, which is nothing until the
// workspace's firebase.json names it as the database rules: after a
// watched-files notification it is diagnosed as such.
func TestFirebaseJSONNamesFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := start(t, lsp.Options{Debounce: -1}, dir)
	path := filepath.Join(dir, "rules.json")
	text := `{"rules": {".read": "auth != nul"}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := fileURI(path)
	c.open(uri, "json", text)
	var h any
	c.call("textDocument/hover", pos(uri, lsp.Position{Line: 0, Character: 22}), &h)
	if h != nil {
		t.Fatalf("hover on an unknown file: %v", h)
	}
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"database": {"rules": "rules.json"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []map[string]any{{"uri": fileURI(filepath.Join(dir, "firebase.json")), "type": 2}}})
	d := c.waitDiags(uri, 1)
	if len(d) != 1 || d[0].Code != "UNKNOWN_IDENTIFIER" || d[0].Range.Start.Character != 29 {
		t.Fatalf("after firebase.json named it: %+v", d)
	}
}
