package prefault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Slice changes nothing a slice holds, whatever its size and alignment.
func TestSliceKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, 100, minBytes - 1, minBytes, 3*minBytes + 7} {
		b := make([]byte, n, n+5)
		for i := range b {
			b[i] = byte(i*7 + 1)
		}
		Slice(b[min(1, n):]) // unaligned start
		Slice(b)
		for i := range b {
			if b[i] != byte(i*7+1) {
				t.Fatalf("len %d: byte %d changed to %d", n, i, b[i])
			}
		}
	}
	Slice([]struct{}(nil))
	Slice(make([]struct{}, 10))
}

// TestReadFile: ReadFile and MapFile read what os.ReadFile reads: empty, small and large
// files, and a name that is not there.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 1 << 20} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i * 7)
		}
		name := filepath.Join(dir, fmt.Sprint(n))
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d, %v", n, len(got), err)
		}
		mapped, release, err := MapFile(name)
		if err != nil || !bytes.Equal(mapped, want) {
			t.Errorf("%d bytes: mapped %d, %v", n, len(mapped), err)
		}
		if release != nil {
			release()
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, _, err := MapFile(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file mapped: %v", err)
	}
}
