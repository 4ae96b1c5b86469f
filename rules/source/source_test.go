package source

import (
	"fmt"
	"strings"
	"testing"
)

func TestFilePos(t *testing.T) {
	f := NewFile("x.rules", "ab\ncdé\n\nf")
	tests := []struct {
		off       int
		line, col int
	}{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {7, 2, 4}, {8, 3, 1}, {9, 4, 1}, {10, 4, 2}, {99, 4, 2},
	}
	for _, tt := range tests {
		p := f.Pos(tt.off)
		if p.Line != tt.line || p.Column != tt.col {
			t.Errorf("Pos(%d) = %d:%d, want %d:%d", tt.off, p.Line, p.Column, tt.line, tt.col)
		}
	}
	if got := f.Line(2); got != "cdé" {
		t.Errorf("Line(2) = %q", got)
	}
	if got := f.Line(5); got != "" {
		t.Errorf("Line(5) = %q", got)
	}
}

func TestRender(t *testing.T) {
	f := NewFile("firestore.rules", "allow read: if request.uid == 1;\n")
	d := Diagnostic{Severity: Error, Code: "WRONG_CONTEXT_PATH", Message: "request.uid does not exist",
		Span: f.Span(15, 26), Fix: "did you mean `request.auth.uid`?"}
	want := "firestore.rules:1:16: error: request.uid does not exist [WRONG_CONTEXT_PATH]\n" +
		"    allow read: if request.uid == 1;\n" +
		"                   ^^^^^^^^^^^\n" +
		"    fix: did you mean `request.auth.uid`?\n"
	if got := Render(f, d); got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
}

func TestRenderClipsLongLinesAroundTheCaret(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("a", 5000) + "BAD" + strings.Repeat("b", 5000)
	f := NewFile("long.rules", line+"\n")
	d := Diagnostic{Severity: Error, Message: strings.Repeat("m", 2000), Span: f.Span(5000, 5003)}
	out := Render(f, d)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header, excerpt and caret:\n%s", out)
	}
	if len(lines[0]) > MaxMessageBytes+100 || !strings.Contains(lines[0], "…") {
		t.Errorf("message not clipped: %d bytes", len(lines[0]))
	}
	excerpt, caret := []rune(lines[1]), []rune(lines[2])
	if len(excerpt) > MaxLineWidth+10 || !strings.HasPrefix(lines[1], "    …") || !strings.HasSuffix(lines[1], "…") {
		t.Errorf("excerpt not clipped on both sides (%d chars): %q", len(excerpt), lines[1])
	}
	at := strings.Index(string(caret), "^^^")
	if at < 0 || string(excerpt[at:at+3]) != "BAD" {
		t.Errorf("caret does not sit under the span:\n%s\n%s", lines[1], lines[2])
	}
}

func TestWriteTextCapsDiagnosticsErrorsFirst(t *testing.T) {
	t.Parallel()
	f := NewFile("x.rules", "x\n")
	var ds Diagnostics
	for i := 0; i < 3*MaxTextDiagnostics; i++ {
		ds = append(ds, Diagnostic{Severity: Warning, Code: "W", Message: "w", Span: f.Span(0, 1)})
	}
	ds = append(ds, Diagnostic{Severity: Error, Code: "E", Message: "the error", Span: f.Span(1, 1)})
	var b strings.Builder
	if err := WriteText(&b, f, ds); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "the error") {
		t.Error("the error was hidden behind warnings")
	}
	if got := strings.Count(out, "[W]") + strings.Count(out, "[E]"); got != MaxTextDiagnostics {
		t.Errorf("printed %d diagnostics, want %d", got, MaxTextDiagnostics)
	}
	if !strings.Contains(out, "… and 101 more (0 errors, 101 warnings or notes)") {
		t.Errorf("no summary of the rest:\n%s", out[len(out)-200:])
	}
	var j strings.Builder
	many := append(Diagnostics(nil), ds...)
	for len(many) <= MaxMachineDiagnostics {
		many = append(many, ds...)
	}
	if err := WriteJSON(&j, many, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), fmt.Sprintf(`"omitted": %d`, len(many)-MaxMachineDiagnostics)) {
		t.Error("JSON does not count the omitted diagnostics")
	}
}
