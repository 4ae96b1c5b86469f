package database

import (
	"maps"
	"slices"
	"testing"
)

// pathsTree records the leaves putTree writes.
type pathsTree struct{ puts map[string]any }

func (p *pathsTree) put(path string, v any) error { p.puts[path] = v; return nil }
func (p *pathsTree) clear(string) error           { return nil }

// TestPutTreeLeafPaths: putTree writes every leaf (priorities included)
// at its own path, each path the node's path and the keys down to it —
// built one allocation per node rather than per child, so every path
// must still be exactly its own.
func TestPutTreeLeafPaths(t *testing.T) {
	v := map[string]any{
		"a":         1.0,
		"bb":        map[string]any{"c": "x", "dd": map[string]any{"e": true}, ".priority": 2.0},
		"ccc":       "y",
		".priority": "p",
	}
	w := &pathsTree{puts: map[string]any{}}
	if err := putTree(w, "/root/x", v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"/root/x/a": 1.0, "/root/x/bb/c": "x", "/root/x/bb/dd/e": true, "/root/x/bb/.priority": 2.0,
		"/root/x/ccc": "y", "/root/x/.priority": "p",
	}
	if len(w.puts) != len(want) {
		t.Fatalf("puts %v, want %v", w.puts, want)
	}
	for p, x := range want {
		if got, ok := w.puts[p]; !ok || got != x {
			t.Errorf("%s = %v (%v), want %v", p, got, ok, x)
		}
	}
	flat := map[string]any{"n": 1.0, "s": "x", "t": false}
	w = &pathsTree{puts: make(map[string]any, 8)}
	if n := testing.AllocsPerRun(100, func() { _ = putTree(w, "/rest/r1", flat) }); n != 1 {
		t.Errorf("putTree of a node of 3 leaves allocates %v times, want 1", n)
	}
	keys := slices.Sorted(maps.Keys(w.puts))
	if !slices.Equal(keys, []string{"/rest/r1/n", "/rest/r1/s", "/rest/r1/t"}) {
		t.Errorf("paths %q", keys)
	}
}
