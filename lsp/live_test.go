package lsp_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/lsp"
)

func portOf(t *testing.T, url string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestLiveSessionThroughHub runs a hub (GET /emulators naming the ui
// address) and a UI serving the captured session at /__pyric/capture, as
// pyric serve does, on the port firebase.json's emulators.hub.port names;
// with no session file and no configuration of the server, the lenses
// count the live session's requests.
func TestLiveSessionThroughHub(t *testing.T) {
	t.Parallel()
	block := "/databases/{database}/documents/users/{userId}"
	req := func(seq uint64, verdict event.Verdict) event.Event {
		return event.Event{Seq: seq, ID: fmt.Sprintf("evt-%d", seq), At: time.Unix(1700000000+int64(seq), 0).UTC(), Kind: event.KindRequest, Service: "firestore",
			Method: "get", Path: "users/alice", Identity: event.Identity{Lens: "user", UID: "alice"},
			Request: &event.Request{Verdict: verdict, Rule: &event.Rule{Index: 0, MatchPath: block, Operations: []string{"get"}}}}
	}
	fx := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}, Events: []event.Event{req(1, event.Allow), req(2, event.Allow), req(3, event.Allow)}}
	b, err := capture.Encode(fx)
	if err != nil {
		t.Fatal(err)
	}
	ui := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/__pyric/capture" {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(ui.Close)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/emulators" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"ui": {"name": "ui", "host": "127.0.0.1", "port": %s}}`, portOf(t, ui.URL))
	}))
	t.Cleanup(hub.Close)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("firebase.json", `{"firestore": {"rules": "firestore.rules"}, "emulators": {"hub": {"port": `+portOf(t, hub.URL)+`}}}`)
	write("firestore.rules", sample)
	c := start(t, lsp.Options{Debounce: -1}, dir)
	uri := fileURI(filepath.Join(dir, "firestore.rules"))
	c.open(uri, "firestore-rules", sample)
	c.waitDiags(uri, 1)
	var lenses []lsp.CodeLens
	if !await.Poll(20*time.Second, func() bool {
		lenses = nil
		c.call("textDocument/codeLens", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}}, &lenses)
		for _, l := range lenses {
			if l.Command.Title == "session: 3 allowed, 0 denied" {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no lens from the live session: %+v", lenses)
	}
}

// TestLiveSessionNeverBlocks gives the server a hub that never answers:
// Session returns at once (the fetch runs in the background, with no
// timeout of its own here), and the editor's requests are answered.
func TestLiveSessionNeverBlocks(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hub.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"emulators": {"hub": {"port": `+portOf(t, hub.URL)+`}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "firestore.rules")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	live := &lsp.LiveSessions{Client: &http.Client{}, Fallback: noSession{}}
	done := make(chan *lsp.Session, 1)
	go func() { done <- live.Session(path) }()
	select {
	case s := <-done:
		if s != nil {
			t.Fatalf("a session from a hub that never answered: %+v", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Session waited on the hung hub")
	}
	c := start(t, lsp.Options{Debounce: -1, Sessions: live}, dir)
	uri := fileURI(path)
	c.open(uri, "firestore-rules", sample)
	c.waitDiags(uri, 1)
	var lenses []lsp.CodeLens
	c.call("textDocument/codeLens", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}}, &lenses)
	var h lsp.Hover
	c.call("textDocument/hover", pos(uri, at(t, sample, "isOwner(userId)", 0, 1)), &h)
	if h.Contents.Value == "" {
		t.Fatal("no hover while the hub hangs")
	}
}

type noSession struct{}

func (noSession) Session(string) *lsp.Session { return nil }
