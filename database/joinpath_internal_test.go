package database

import (
	"strings"
	"testing"
)

// TestJoinPath: joinPath is "/" and the keys joined by "/", built in
// one allocation.
func TestJoinPath(t *testing.T) {
	for _, keys := range [][]string{nil, {}, {""}, {"a"}, {"a", "b"}, {"a", ""}, {"", "b"}, {"ü", "x y", ".priority"}} {
		if got, want := joinPath(keys), "/"+strings.Join(keys, "/"); got != want {
			t.Errorf("joinPath(%q) = %q, want %q", keys, got, want)
		}
	}
	keys := []string{"rest", "r1", "n"}
	if n := testing.AllocsPerRun(100, func() { _ = joinPath(keys) }); n != 1 {
		t.Errorf("joinPath allocates %v times, want 1", n)
	}
}
