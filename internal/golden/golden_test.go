package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps its failure instead of stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r)
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("fatal") }

func check(t *testing.T, l *Lines, path string, update bool) (failed string) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	l.Check(r, path, update)
	return ""
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden.json")
	var l Lines
	l.Add(t, map[string]int{"a": 1})
	l.Add(t, []string{"b"})
	if f := check(t, &l, path, true); f != "" {
		t.Fatalf("update failed: %s", f)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"a\":1}\n[\"b\"]\n" {
		t.Fatalf("written %q", b)
	}
	if f := check(t, &l, path, false); f != "" {
		t.Fatalf("same lines failed: %s", f)
	}
	var changed Lines
	changed.Add(t, map[string]int{"a": 1})
	changed.Add(t, []string{"c"})
	if f := check(t, &changed, path, false); !strings.Contains(f, "differs at line") {
		t.Errorf("a changed line: failure %q", f)
	}
	var shorter Lines
	shorter.Add(t, map[string]int{"a": 1})
	if f := check(t, &shorter, path, false); !strings.Contains(f, "differs at line") && !strings.Contains(f, "lines more") {
		t.Errorf("a missing line: failure %q", f)
	}
}
