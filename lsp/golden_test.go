package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/pyric/pyric/internal/cli"
	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/lsp"
	"github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/storage"
)

// cliDiag is one diagnostic of `pyric <service> rules lint --format json`.
type cliDiag struct {
	Code      string `json:"code"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Fix       string `json:"fix"`
}

func (d cliDiag) String() string {
	msg := d.Message
	if d.Fix != "" {
		msg += "\nfix: " + d.Fix
	}
	return fmt.Sprintf("%d:%d-%d:%d %s %s %q", d.Line, d.Column, d.EndLine, d.EndColumn, d.Severity, d.Code, msg)
}

// runeColumn converts a protocol position to source's 1-based character
// column.
func runeColumn(text string, p lsp.Position) (line, col int) {
	lines := strings.Split(text, "\n")
	if p.Line >= len(lines) {
		return p.Line + 1, 1
	}
	units := utf16.Encode([]rune(lines[p.Line]))
	if p.Character > len(units) {
		p.Character = len(units)
	}
	return p.Line + 1, len(utf16.Decode(units[:p.Character])) + 1
}

var severityNames = map[int]string{lsp.SeverityError: "error", lsp.SeverityWarning: "warning", lsp.SeverityInformation: "info"}

func fromLSP(text string, d lsp.Diagnostic) string {
	l, c := runeColumn(text, d.Range.Start)
	el, ec := runeColumn(text, d.Range.End)
	return fmt.Sprintf("%d:%d-%d:%d %s %s %q", l, c, el, ec, severityNames[d.Severity], d.Code, d.Message)
}

// TestDiagnosticsEqualCLI opens every ruleset of the conformance corpus
// (Firestore, Storage and Realtime Database) in the server and requires
// its diagnostics to be exactly what `pyric <service> rules lint --format
// json` prints for the same file — codes, severities, messages, fixes and
// positions — and to include every compile diagnostic `pyric <service>
// rules validate` reports.
// conformance: lsp.diagnostics
func TestDiagnosticsEqualCLI(t *testing.T) {
	t.Parallel()
	type file struct {
		service, name, text string
		compile             func(*source.File) source.Diagnostics
	}
	var files []file
	for _, svc := range []string{"firestore", "storage", "rtdb"} {
		scs, err := conformance.Load(svc)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scs {
			switch svc {
			case "firestore":
				files = append(files, file{"firestore", "firestore.rules", sc.Rules, func(f *source.File) source.Diagnostics { _, d := firestore.Compile(f); return d }})
			case "storage":
				files = append(files, file{"storage", "storage.rules", sc.Rules, func(f *source.File) source.Diagnostics { _, d := storage.Compile(f); return d }})
			case "rtdb":
				id, _ := json.Marshal(sc.ID)
				files = append(files, file{"database", "database.rules.json", `{"rules": {` + string(id) + `: ` + sc.Rules + `}}`, func(f *source.File) source.Diagnostics { _, d := rtdb.Compile(f); return d }})
			}
		}
	}
	if len(files) < 30 {
		t.Fatalf("only %d rulesets in the conformance corpus", len(files))
	}
	// Every file also with a known error appended, so error positions
	// are compared too, not only clean files.
	n := len(files)
	for _, f := range files[:n] {
		if f.service != "database" {
			files = append(files, file{f.service, f.name, f.text + "\nfunction broken() { return request.auth.uid == ; }\n", f.compile})
		}
	}
	dir := t.TempDir()
	c := start(t, lsp.Options{Debounce: -1}, "")
	paths := make([]string, len(files))
	for i, f := range files {
		sub := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		paths[i] = filepath.Join(sub, f.name)
		if err := os.WriteFile(paths[i], []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
		c.open(fileURI(paths[i]), "", f.text)
	}
	compared, errs := 0, 0
	for i, f := range files {
		got := c.waitDiags(fileURI(paths[i]), 1)
		var out, errb bytes.Buffer
		cli.Run(context.Background(), []string{f.service, "rules", "lint", paths[i], "--format", "json"}, cli.Stdio{Out: &out, Err: &errb})
		var res struct {
			Diagnostics []cliDiag `json:"diagnostics"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%s: lint output %q (%s): %v", paths[i], out.String(), errb.String(), err)
		}
		var want, have []string
		for _, d := range res.Diagnostics {
			want = append(want, d.String())
		}
		for _, d := range got {
			have = append(have, fromLSP(f.text, d))
			compared++
			if d.Severity == lsp.SeverityError {
				errs++
			}
		}
		if strings.Join(want, "\n") != strings.Join(have, "\n") {
			t.Errorf("file %d (%s):\nCLI:\n%s\nLSP:\n%s\nsource:\n%s", i, f.name, strings.Join(want, "\n"), strings.Join(have, "\n"), f.text)
			continue
		}
		// validate's compile diagnostics are among them.
		src := source.NewFile(paths[i], f.text)
		haveSet := map[string]bool{}
		for _, d := range got {
			l, col := runeColumn(f.text, d.Range.Start)
			haveSet[fmt.Sprintf("%d:%d %s %s", l, col, d.Code, strings.SplitN(d.Message, "\nfix: ", 2)[0])] = true
		}
		for _, d := range f.compile(src) {
			key := fmt.Sprintf("%d:%d %s %s", d.Span.Start.Line, d.Span.Start.Column, d.Code, d.Message)
			if !haveSet[key] {
				t.Errorf("file %d: validate's %q is not among the LSP diagnostics", i, key)
			}
		}
	}
	t.Logf("%d files, %d diagnostics (%d errors) equal to the CLI's", len(files), compared, errs)
	if compared == 0 || errs < n/2 {
		t.Fatalf("the corpus produced %d diagnostics, %d errors: the comparison proves nothing", compared, errs)
	}
}
