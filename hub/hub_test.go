package hub

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// conformance: app.hub.emulators
func TestEmulators(t *testing.T) {
	h := New(Options{Version: "v", Project: "demo-x", Emulators: func() []Emulator {
		fs, _ := FromAddr("firestore", "127.0.0.1:8080")
		hub, _ := FromAddr("hub", "0.0.0.0:4400")
		v6, _ := FromAddr("auth", "[::1]:9099")
		return []Emulator{fs, hub, v6}
	}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var got map[string]struct {
		Name   string
		Host   string
		Port   int
		Listen []struct {
			Address, Family string
			Port            int
		}
	}
	get(t, srv.URL+"/emulators", &got)
	fs := got["firestore"]
	if fs.Host != "127.0.0.1" || fs.Port != 8080 || fs.Name != "firestore" || len(fs.Listen) != 1 || fs.Listen[0].Family != "IPv4" {
		t.Fatalf("firestore = %+v", fs)
	}
	if got["hub"].Host != "127.0.0.1" || got["hub"].Listen[0].Address != "0.0.0.0" {
		t.Fatalf("hub = %+v", got["hub"])
	}
	if got["auth"].Host != "::1" || got["auth"].Listen[0].Family != "IPv6" {
		t.Fatalf("auth = %+v", got["auth"])
	}
	var loc map[string]any
	get(t, srv.URL+"/", &loc)
	if loc["port"] != float64(4400) || loc["project"] != "demo-x" {
		t.Fatalf("locator %v", loc)
	}
	if r, _ := http.Get(srv.URL + "/nothing"); r.StatusCode != 404 {
		t.Fatalf("unknown path: %d", r.StatusCode)
	}
	if _, ok := FromAddr("x", "nonsense"); ok {
		t.Fatal("FromAddr accepted nonsense")
	}
}

func get(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
