package backend_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/internal/freeport"
	"github.com/pyric/pyric/sandbox"
)

func hostingSites(t *testing.T, cfg string) []*hosting.SiteConfig {
	t.Helper()
	dir := t.TempDir()
	for _, site := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, site), 0o755)
		os.WriteFile(filepath.Join(dir, site, "index.html"), []byte("site "+site), 0o644)
	}
	sites, err := hosting.ParseConfig(json.RawMessage(cfg), dir, "demo-h")
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// TestHostingSites: every site on its own port, the Auth emulator's
// address in init.js, and Hosting left off without sites.
func TestHostingSites(t *testing.T) {
	t.Parallel()
	sites := hostingSites(t, `[{"site": "a", "public": "a"}, {"site": "b", "public": "b"}]`)
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-h"}, Hosting: backend.HostingOptions{Sites: sites}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	he := b.Hosting()
	if he == nil || len(he.Sites) != 2 || b.Addr(backend.Hosting) != he.Sites[0].Addr {
		t.Fatalf("hosting endpoint: %+v", he)
	}
	for i, name := range []string{"a", "b"} {
		if st, body := get(t, "http://"+he.Sites[i].Addr+"/"); st != 200 || body != "site "+name || he.Sites[i].Name != name {
			t.Errorf("site %s at %s: %d %q", name, he.Sites[i].Addr, st, body)
		}
	}
	_, js := get(t, "http://"+he.Sites[0].Addr+"/__/firebase/init.js?useEmulator=true")
	if !strings.Contains(js, `"hostAndPort": "`+b.Addr(backend.Auth)+`"`) || !strings.Contains(js, `"projectId": "demo-h"`) {
		t.Errorf("init.js does not point at this backend's Auth (%s):\n%s", b.Addr(backend.Auth), js)
	}

	off, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-h"}})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Shutdown(context.Background())
	if off.Hosting() != nil || off.Addr(backend.Hosting) != "" {
		t.Errorf("Hosting runs without sites")
	}
}

// TestHostingPortNumbering: with a fixed port the next sites take port+5,
// port+6, ... as the emulator numbers them, skipping ports in use.
func TestHostingPortNumbering(t *testing.T) {
	t.Parallel()
	base, err := freeport.Run(8)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+5))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	sites := hostingSites(t, `[{"site": "a", "public": "a"}, {"site": "b", "public": "b"}, {"site": "c", "public": "a"}]`)
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-h"}, Hosting: backend.HostingOptions{Sites: sites},
		Ports: map[string]int{backend.Hosting: base}})
	if err != nil {
		t.Fatalf("hosting on port %d: %v", base, err)
	}
	defer b.Shutdown(context.Background())
	var ports []int
	for _, s := range b.Hosting().Sites {
		_, p, _ := net.SplitHostPort(s.Addr)
		n, _ := strconv.Atoi(p)
		ports = append(ports, n)
	}
	// base+5 is busy; another process may hold one of the next ones.
	if len(ports) != 3 || ports[0] != base || ports[1] < base+6 || ports[2] <= ports[1] || ports[2] > base+30 {
		t.Errorf("sites on ports %v, want %d, then from %d upward", ports, base, base+6)
	}
}
