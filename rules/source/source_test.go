package source

import "testing"

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
