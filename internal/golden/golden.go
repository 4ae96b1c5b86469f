// Package golden compares what a test renders with a file kept beside it
// in testdata/: a test builds its output as JSON lines, one per case, so a
// difference names the first case that changed; with the test's update
// flag set, the file is rewritten from the output instead.
package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Lines is a golden file's content, one JSON value per line.
type Lines struct {
	buf bytes.Buffer
}

// Add appends v, encoded as one line of JSON.
func (l *Lines) Add(t testing.TB, v any) {
	t.Helper()
	line, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	l.buf.Write(line)
	l.buf.WriteByte('\n')
}

// Check fails t unless the lines are the file at path byte for byte,
// naming the first line that differs; with update it first writes them
// there.
func (l *Lines) Check(t testing.TB, path string, update bool) {
	t.Helper()
	got := l.buf.Bytes()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range g {
		if i >= len(w) || g[i] != w[i] {
			t.Fatalf("%s differs at line %d (rerun with the update flag only if the change is intended):\n got %s", path, i+1, g[i])
		}
	}
	t.Fatalf("%s has %d lines more than the test renders", path, len(w)-len(g))
}
