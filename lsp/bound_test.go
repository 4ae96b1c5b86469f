package lsp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/lsp"
	"github.com/pyric/pyric/rules/source"
)

// raceEnabled is set by race_test.go under -race.
var raceEnabled bool

// bigRules is a Firestore ruleset of at least n bytes: many collections,
// each with a helper call and a validated write.
func bigRules(n int) string {
	var b strings.Builder
	b.WriteString("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    function signedIn() { return request.auth != null; }\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "    match /c%d/{id} {\n      allow read: if signedIn() && resource.data.owner == request.auth.uid;\n      allow create: if signedIn() && request.resource.data.keys().hasOnly(['owner', 'n']) && request.resource.data.n is int;\n    }\n", i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// TestBigFileRediagnosis edits a 1 MB rules file and measures the time
// from the change to its diagnostics (no debounce), and a hover on the
// new version. It reports the times; it asserts only that the
// diagnostics arrive and are of the edited version (no timing asserts:
// see BenchmarkDiagnose).
func TestBigFileRediagnosis(t *testing.T) {
	if raceEnabled {
		t.Skip("a measurement: meaningless under the race detector, which slows lint tenfold (run without -race)")
	}
	text := bigRules(1 << 20)
	c := start(t, lsp.Options{Debounce: -1}, "")
	uri := "file:///big/firestore.rules"
	t0 := time.Now()
	c.open(uri, "firestore-rules", text)
	first := c.waitDiags(uri, 1)
	openTook := time.Since(t0)
	p := at(t, text, "request.auth.uid;", 0, 0)
	t0 = time.Now()
	c.notify("textDocument/didChange", lsp.DidChangeTextDocumentParams{
		TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: uri, Version: 2},
		ContentChanges: []lsp.TextDocumentContentChangeEvent{{Range: &lsp.Range{Start: p, End: p}, Text: "== "}},
	})
	d := c.waitDiags(uri, 2)
	editTook := time.Since(t0)
	if len(d) == 0 || d[0].Code != "PARSE_ERROR" && len(d) == len(first) {
		t.Fatalf("after the edit: %d diagnostics, first %+v", len(d), d[:min(len(d), 1)])
	}
	t0 = time.Now()
	var h lsp.Hover
	c.call("textDocument/hover", pos(uri, at(t, text, "signedIn()", 1, 1)), &h)
	hoverTook := time.Since(t0)
	// The machine is shared: CPU time says what one re-diagnosis costs
	// better than the wall clock.
	f := source.NewFile("firestore.rules", text)
	cpu0 := benchkit.SelfCPU()
	lsp.Diagnose(lsp.Firestore, f)
	diagCPU := benchkit.SelfCPU() - cpu0
	t.Logf("%d bytes: open → diagnostics %v (%d), edit → diagnostics %v (%d), hover after the edit %v; one Diagnose %v of CPU",
		len(text), openTook, len(first), editTook, len(d), hoverTook, diagCPU)
}

// BenchmarkDiagnose is the lint of a 1 MB rules file, what one
// re-diagnosis costs.
func BenchmarkDiagnose(b *testing.B) {
	f := source.NewFile("firestore.rules", bigRules(1<<20))
	for b.Loop() {
		lsp.Diagnose(lsp.Firestore, f)
	}
}
