package lsp

import (
	"fmt"
	"strings"
	"testing"
)

func bigText(n int) string {
	var b strings.Builder
	b.WriteString("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    function signedIn() { return request.auth != null; }\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "    match /c%d/{id} {\n      allow read: if signedIn() && resource.data.owner == request.auth.uid;\n    }\n", i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// BenchmarkAnalyze is the parse and name resolution of a 1 MB file that
// hover, completion and navigation read (once per version).
func BenchmarkAnalyze(b *testing.B) {
	d := newDocument("file:///big/firestore.rules", "", 1, bigText(1<<20))
	for b.Loop() {
		analyze(d, Firestore)
	}
}

// BenchmarkIncrementalChange is applying one edit to a 1 MB document.
func BenchmarkIncrementalChange(b *testing.B) {
	d := newDocument("file:///big/firestore.rules", "", 1, bigText(1<<20))
	p := Position{Line: 1000, Character: 4}
	for b.Loop() {
		d.apply(TextDocumentContentChangeEvent{Range: &Range{Start: p, End: p}, Text: " "})
		d.apply(TextDocumentContentChangeEvent{Range: &Range{Start: p, End: Position{Line: 1000, Character: 5}}, Text: ""})
	}
}

// BenchmarkFormat is formatting a 1 MB file.
func BenchmarkFormat(b *testing.B) {
	text := bigText(1 << 20)
	for b.Loop() {
		Format(text)
	}
}
