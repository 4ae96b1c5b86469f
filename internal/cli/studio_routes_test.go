package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/sandbox"
)

// TestStudioHostingRoute: the Studio of a backend serving Hosting sites
// has the Hosting page in its route table (Hosting is served beside the
// sandbox, so serve hands its engine to the Studio); without sites it
// has none.
func TestStudioHostingRoute(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dist"), 0o755)
	sites, err := hosting.ParseConfig(json.RawMessage(`{"public": "dist"}`), dir, "demo-x")
	if err != nil {
		t.Fatal(err)
	}
	routes := func(ho backend.HostingOptions) map[string]string {
		b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-x"}, Hosting: ho})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Shutdown(context.Background())
		srv := httptest.NewServer(newStudio(b, nil, nil, nil))
		defer srv.Close()
		r, err := http.Get(srv.URL + "/api/services")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var got struct {
			Routes []struct{ Path, Service, Page string }
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, rt := range got.Routes {
			out[rt.Path] = rt.Service + " " + rt.Page
		}
		return out
	}
	if got := routes(backend.HostingOptions{Sites: sites}); got["/hosting"] != "hosting hosting" || got["/firestore"] != "firestore firestore" {
		t.Errorf("with sites: %v", got)
	}
	if got := routes(backend.HostingOptions{}); got["/hosting"] != "" || got["/firestore"] == "" {
		t.Errorf("without sites: %v", got)
	}
}
