package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseServeHosting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"hosting": {"public": "dist", "cleanUrls": true}, "emulators": {"hosting": {"port": 5055}}}`), 0o644)
	o, ok := parseServe(nil, Stdio{Err: io.Discard}, func(string) string { return "" }, dir)
	if !ok || o.hosting == nil || len(o.hosting.Sites) != 1 {
		t.Fatalf("hosting not read: %+v", o)
	}
	s := o.hosting.Sites[0]
	if s.Public != filepath.Join(dir, "dist") || !s.CleanURLs || s.Name != "demo-pyric" || o.ports["hosting"] != 5055 {
		t.Errorf("site %+v, port %d", s, o.ports["hosting"])
	}
	if o2, _ := parseServe([]string{"--hosting-port", "0"}, Stdio{Err: io.Discard}, func(string) string { return "" }, dir); o2.ports["hosting"] != 0 {
		t.Errorf("--hosting-port 0: %d", o2.ports["hosting"])
	}

	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "firebase.json"), []byte(`{"hosting": {"public": "dist", "redirects": [{"source": "/a"}]}}`), 0o644)
	var errb bytes.Buffer
	if _, ok := parseServe(nil, Stdio{Err: &errb}, func(string) string { return "" }, bad); ok || !strings.Contains(errb.String(), `hosting.redirects[0]: "destination" is required`) {
		t.Errorf("a bad hosting section: ok=%v %q", ok, errb.String())
	}
}
