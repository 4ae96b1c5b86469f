package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/sandbox"
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

func TestHostingStudioRoute(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dist"), 0o755)
	os.WriteFile(filepath.Join(dir, "dist", "index.html"), []byte("app"), 0o644)
	sites, err := hosting.ParseConfig(json.RawMessage(`{"site": "web", "public": "dist", "rewrites": [{"source": "**", "destination": "/index.html"}]}`), dir, "demo-x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-x"}, Hosting: backend.HostingOptions{Sites: sites}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	site := "http://" + b.Addr(backend.Hosting)
	if r, err := http.Get(site + "/deep/link"); err != nil || r.StatusCode != 200 {
		t.Fatalf("GET /deep/link: %v %v", r, err)
	}
	srv := httptest.NewServer(hostingHandler(b.Hosting()))
	defer srv.Close()
	r, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var got struct {
		Sites    []struct{ Name, URL, Public string }
		Requests []struct {
			Site, Path, Rule, File string
			Status                 int
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.Sites) != 1 || got.Sites[0].Name != "web" || got.Sites[0].URL != site || got.Sites[0].Public != filepath.Join(dir, "dist") {
		t.Errorf("sites: %+v", got.Sites)
	}
	if len(got.Requests) != 1 || got.Requests[0].Path != "/deep/link" || got.Requests[0].Rule != "rewrites[0]" || got.Requests[0].File != "/index.html" || got.Requests[0].Status != 200 {
		t.Errorf("requests: %+v", got.Requests)
	}
}
