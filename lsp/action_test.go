package lsp_test

import (
	"testing"

	"github.com/pyric/pyric/lsp"
	"github.com/pyric/pyric/rules/source"
)

// TestCodeActions asks for the quick fixes of documents with mechanical
// lint findings, applies every edit offered and requires the findings
// gone from a lint of the result (and the result still parsing).
func TestCodeActions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		codes      []string // the findings the actions fix
	}{
		{"mistakes", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow read: if request.auth != null && resource.data.tags.size > 0 && resource.data.title.length < 100;
      allow write: if request.resource.data.n is int || request.resource.data.keys().size() == 0;
    }
  }
}
`, []string{"METHOD_MISSING_PARENS", "LENGTH_PROPERTY", "WRITE_WITHOUT_AUTH"}},
		{"strict equality", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow read: if request.auth.uid === resource.data.owner;
    }
  }
}
`, []string{"INVALID_OPERATOR"}},
	}
	c := start(t, lsp.Options{Debounce: -1}, "")
	for i, tc := range cases {
		uri := "file:///actions/" + string(rune('a'+i)) + "/firestore.rules"
		c.open(uri, "firestore-rules", tc.text)
		diags := c.waitDiags(uri, 1)
		var actions []lsp.CodeAction
		var p lsp.CodeActionParams
		p.TextDocument.URI = uri
		p.Range = lsp.Range{End: lsp.Position{Line: 100}}
		p.Context.Diagnostics = diags
		c.call("textDocument/codeAction", p, &actions)
		var edits []lsp.TextEdit
		got := map[string]bool{}
		for _, a := range actions {
			if a.Kind != "quickfix" || a.Edit == nil || len(a.Diagnostics) != 1 || a.Title == "" {
				t.Fatalf("%s: malformed action %+v", tc.name, a)
			}
			got[a.Diagnostics[0].Code] = true
			edits = append(edits, a.Edit.Changes[uri]...)
		}
		fixed := applyEdits(t, tc.text, edits)
		after := lsp.Diagnose(lsp.Firestore, source.NewFile("firestore.rules", fixed))
		for _, code := range tc.codes {
			if !got[code] {
				t.Errorf("%s: no action for %s among %d actions; diagnostics %+v", tc.name, code, len(actions), diags)
			}
			for _, d := range after {
				if d.Code == code || d.Code == "PARSE_ERROR" {
					t.Errorf("%s: after the fixes still %s: %s\n%s", tc.name, d.Code, d.Message, fixed)
				}
			}
		}
		// A range touching no finding gets no action.
		p.Range = lsp.Range{Start: lsp.Position{Line: 0}, End: lsp.Position{Line: 0, Character: 1}}
		c.call("textDocument/codeAction", p, &actions)
		if len(actions) != 0 {
			t.Errorf("%s: %d actions on line 1", tc.name, len(actions))
		}
	}
}
