package lsp_test

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/lsp"
	"github.com/pyric/pyric/rules/check"
)

// TestVSCodeExtension checks the extension in editors/vscode: every
// language it declares is one the server knows, its grammar's patterns
// are valid JSON with the scope the manifest names, and the .vsix that
// CI packages (npm run package) holds the compiled client, the grammar
// and the language client library.
func TestVSCodeExtension(t *testing.T) {
	dir := filepath.Join(e2etest.Root(), "editors", "vscode")
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Main        string `json:"main"`
		Contributes struct {
			Languages []struct {
				ID string `json:"id"`
			} `json:"languages"`
			Grammars []struct {
				Language  string `json:"language"`
				ScopeName string `json:"scopeName"`
				Path      string `json:"path"`
			} `json:"grammars"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Contributes.Languages) == 0 || len(manifest.Contributes.Grammars) == 0 {
		t.Fatalf("no languages or grammars: %s", b)
	}
	for _, l := range manifest.Contributes.Languages {
		if lsp.DetectKind("untitled", l.ID, "", lsp.Unknown) == lsp.Unknown {
			t.Errorf("language %q is unknown to the server", l.ID)
		}
	}
	for _, g := range manifest.Contributes.Grammars {
		gb, err := os.ReadFile(filepath.Join(dir, g.Path))
		if err != nil {
			t.Fatal(err)
		}
		var grammar struct {
			ScopeName string `json:"scopeName"`
			Patterns  []struct {
				Match string `json:"match"`
			} `json:"patterns"`
		}
		if err := json.Unmarshal(gb, &grammar); err != nil {
			t.Fatalf("%s: %v", g.Path, err)
		}
		if grammar.ScopeName != g.ScopeName || len(grammar.Patterns) < 5 {
			t.Errorf("%s: scope %q (manifest %q), %d patterns", g.Path, grammar.ScopeName, g.ScopeName, len(grammar.Patterns))
		}
		// The grammar colours the namespaces of the one stdlib table:
		// a namespace added there must be added here.
		var nsPattern string
		for _, p := range grammar.Patterns {
			if strings.Contains(p.Match, "math|") {
				nsPattern = p.Match
			}
		}
		for _, svc := range []string{check.Firestore, check.Storage} {
			for _, ns := range check.Environment(svc).Namespaces() {
				if !regexp.MustCompile(`\b` + ns + `\b`).MatchString(nsPattern) {
					t.Errorf("%s: the namespace pattern %q lacks %s", g.Path, nsPattern, ns)
				}
			}
		}
	}
	vsix := filepath.Join(dir, "pyric-rules.vsix")
	zr, err := zip.OpenReader(vsix)
	if err != nil {
		e2etest.Missing(t, "the .vsix is not built (cd editors/vscode && npm ci && npm run package): %v", err)
		return
	}
	defer zr.Close()
	want := map[string]bool{
		"extension/" + filepath.Clean(manifest.Main):                false,
		"extension/syntaxes/rules.tmLanguage.json":                  false,
		"extension/node_modules/vscode-languageclient/package.json": false,
		"extension/package.json":                                    false,
	}
	for _, f := range zr.File {
		if _, ok := want[f.Name]; ok {
			want[f.Name] = true
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := io.Copy(io.Discard, rc); n == 0 {
				t.Errorf("%s is empty", f.Name)
			}
			rc.Close()
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("the .vsix lacks %s", name)
		}
	}
}
