package studio_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
)

// sourcesHash is build.mjs's hash of the UI's inputs.
func sourcesHash(t *testing.T) string {
	t.Helper()
	names, err := os.ReadDir("web/src")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"build.mjs", "package-lock.json"}
	var src []string
	for _, n := range names {
		src = append(src, "src/"+n.Name())
	}
	sort.Strings(src)
	files = append(files, src...)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("web", f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(f + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestBundleFresh fails when studio/dist was not rebuilt after a change
// to studio/web (run `npm run build` in studio/web). It needs no Node:
// the build records a hash of its inputs.
func TestBundleFresh(t *testing.T) {
	got, err := os.ReadFile("dist/sources.sha256")
	if err != nil {
		t.Fatal(err)
	}
	if want := sourcesHash(t); strings.TrimSpace(string(got)) != want {
		t.Fatalf("studio/dist is stale: built from sources %s, the sources are now %s; run `npm ci && npm run build` in studio/web and commit studio/dist",
			strings.TrimSpace(string(got)), want)
	}
}

// TestBundleReproducible rebuilds the bundle and compares it with the
// committed one byte for byte.
func TestBundleReproducible(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		e2etest.Missing(t, "node is not on PATH")
	}
	if _, err := os.Stat("web/node_modules/esbuild"); err != nil {
		e2etest.Missing(t, "studio/web/node_modules is absent (run `npm ci` in studio/web)")
	}
	out := t.TempDir()
	cmd := exec.Command("node", "build.mjs")
	cmd.Dir = "web"
	cmd.Env = append(os.Environ(), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	for _, f := range []string{"app.js", "index.html", "style.css", "sources.sha256"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join("dist", f))
		if !bytes.Equal(a, b) {
			t.Errorf("dist/%s differs from a fresh build: run `npm run build` in studio/web and commit studio/dist", f)
		}
	}
}
