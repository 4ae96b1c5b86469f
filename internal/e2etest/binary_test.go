package e2etest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeepBinaryShares: two builds of the same bytes end as one file in
// the shared directory (the temporary copies gone), a different build
// gets a directory of its own, and a directory past the age limit is
// pruned while a fresh one stays.
func TestKeepBinaryShares(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bins")
	build := func(content string) string {
		p := filepath.Join(t.TempDir(), "pyric")
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a1, a2 := build("code A"), build("code A")
	p1, err := keepBinary(root, a1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := keepBinary(root, a2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Fatalf("the same build kept twice: %s and %s", p1, p2)
	}
	if b, err := os.ReadFile(p1); err != nil || string(b) != "code A" {
		t.Fatalf("kept binary reads %q, %v", b, err)
	}
	if _, err := os.Stat(a1); !os.IsNotExist(err) {
		t.Fatalf("the first build's file was not moved: %v", err)
	}
	old := filepath.Dir(p1)
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	pb, err := keepBinary(root, build("code B"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(pb) == old {
		t.Fatal("a different build shares the old directory")
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the stale directory was not pruned: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Fatalf("root holds %d directories, want 1", len(entries))
	}
}
