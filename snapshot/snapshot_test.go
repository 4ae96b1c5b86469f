package snapshot

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

func TestOfflineRoundTripAndSeed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if !IsNew(dir) {
		t.Fatal("new dir not new")
	}
	seed := []byte(`{"users/alice": {"name": "Alice", "n": 9007199254740993}, "users/alice/posts/p1": {"t": {"__type": "timestamp", "seconds": 5, "nanos": 0}}}`)
	seedFile := t.TempDir() + "/seed.json"
	if err := writeFile(seedFile, seed); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(ctx, dir, "", seedFile, false, allServices); err != nil {
		t.Fatal(err)
	}
	snap, err := SaveDir(dir, allServices)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(snap, []byte(`9007199254740993`)) || !bytes.Contains(snap, []byte(`users/alice/posts/p1`)) {
		t.Fatalf("seed not applied:\n%s", snap)
	}
	// A second Prepare with another seed leaves existing state alone.
	writeFile(seedFile, []byte(`{"x/y": {}}`))
	if err := Prepare(ctx, dir, "", seedFile, false, allServices); err != nil {
		t.Fatal(err)
	}
	again, _ := SaveDir(dir, allServices)
	if bytes.Contains(again, []byte(`"x/y"`)) {
		t.Fatal("seed applied over existing state")
	}
	// Load into a fresh dir gives the same state.
	other := t.TempDir()
	if err := LoadDir(other, snap, allServices); err != nil {
		t.Fatal(err)
	}
	got, _ := SaveDir(other, allServices)
	if stripSaved(got) != stripSaved(snap) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", got, snap)
	}
	// --fresh discards.
	if err := Prepare(ctx, dir, "", "", true, allServices); err != nil {
		t.Fatal(err)
	}
	if !IsNew(dir) {
		t.Fatal("--fresh kept the state")
	}
	// A bad snapshot leaves the state alone.
	if err := LoadDir(other, []byte(`{"version": 3, "services": {"firestore": {"documents": {"bad": {}}}}}`), allServices); err == nil {
		t.Fatal("bad snapshot loaded")
	}
	if after, _ := SaveDir(other, allServices); stripSaved(after) != stripSaved(snap) {
		t.Fatal("state changed by a failed load")
	}
}

func TestSeedErrors(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for in, want := range map[string]string{
		`[]`:            "must be a JSON object",
		`{"users": {}}`: `"users" is not a document path`,
		`{"a/b": 3}`:    "fields must be a JSON object",
		`{"a/b": {"x": {"__type": "timestamp"}}}`: `"a/b"`,
	} {
		if err := Seed(context.Background(), sb, []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Seed(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestHandler(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	testfs.Of(sb).Admin().SetDocument(context.Background(), "a/b", map[string]any{"x": 1})
	srv := httptest.NewServer(Handler(sb))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(snap, []byte(`"a/b"`)) {
		t.Fatalf("GET %d %s", resp.StatusCode, snap)
	}
	testfs.Of(sb).Admin().DeleteDocument(context.Background(), "a/b")
	put := func(body string) int {
		req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := put(string(snap)); c != 200 {
		t.Fatalf("PUT = %d", c)
	}
	if d, _ := testfs.Of(sb).Admin().GetDocument(context.Background(), "a/b"); d == nil {
		t.Fatal("PUT did not restore")
	}
	if c := put(`{"version": 99}`); c != 400 {
		t.Fatalf("bad PUT = %d, want 400", c)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Fatalf("DELETE = %d", resp.StatusCode)
	}
}

func FuzzSeed(f *testing.F) {
	f.Add([]byte(`{"a/b": {"x": 1}}`))
	f.Add([]byte(`{"version": 3, "services": {"firestore": {"documents": {"a/b": {}}}}}`))
	f.Add([]byte(`{"version": 1, "firestore": {"a/b": {"t": {"__type": "timestamp", "seconds": 1, "nanos": 0}}}}`))
	sb, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		sb.Reset()
		_ = Seed(context.Background(), sb, data) // must not panic
	})
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// stripSaved drops the savedAt line, which differs between saves.
func stripSaved(b []byte) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"savedAt"`) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestExportHandlerAndDataDir(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	testfs.Of(sb).Admin().SetDocument(ctx, "a/b", map[string]any{"x": 1})
	srv := httptest.NewServer(ExportHandler(sb))
	defer srv.Close()
	out := t.TempDir()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"dir":"`+out+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export = %d", resp.StatusCode)
	}
	for body, want := range map[string]int{`{"dir":"relative"}`: 400, `nope`: 400} {
		resp, _ := http.Post(srv.URL, "application/json", strings.NewReader(body))
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("POST %s = %d, want %d", body, resp.StatusCode, want)
		}
	}
	// Offline: import into a data dir, export it again, same documents.
	dataDir := t.TempDir()
	if err := ImportDataDir(dataDir, out, allServices); err != nil {
		t.Fatal(err)
	}
	snap, err := SaveDir(dataDir, allServices)
	if err != nil || !bytes.Contains(snap, []byte(`"a/b"`)) {
		t.Fatalf("import into data dir: %v\n%s", err, snap)
	}
	again := t.TempDir()
	if err := ExportDataDir(dataDir, again, allServices); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(filepath.Join(out, "firestore_export/all_namespaces/all_kinds/output-0"))
	y, _ := os.ReadFile(filepath.Join(again, "firestore_export/all_namespaces/all_kinds/output-0"))
	if !bytes.Equal(x, y) {
		t.Fatal("export → import → export changed the data file")
	}
	if err := ImportDataDir(t.TempDir(), t.TempDir(), allServices); err == nil {
		t.Fatal("importing an empty directory succeeded")
	}
}

func TestAuthExportImport(t *testing.T) {
	src, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{}), Project: "demo-x"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := auth.Call{Caller: identity.AdminIdentity(), Project: "demo-x"}
	if _, err := authOf(t, src).BatchCreate(c, auth.BatchCreateRequest{Users: []auth.ImportUser{
		{LocalID: "alice", Email: "alice@example.com", DisplayName: "Alice", CustomAttributes: `{"admin":true}`},
		{LocalID: "bob", Email: "bob@example.com", Disabled: true},
	}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ExportDir(src, dir); err != nil {
		t.Fatal(err)
	}
	dst, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{}), Project: "demo-x"})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := ImportDir(dst, dir); err != nil {
		t.Fatal(err)
	}
	again := t.TempDir()
	if err := ExportDir(dst, again); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "auth_export", "accounts.json"))
	b, _ := os.ReadFile(filepath.Join(again, "auth_export", "accounts.json"))
	if !bytes.Contains(a, []byte(`"alice@example.com"`)) || !bytes.Contains(a, []byte(`identitytoolkit#DownloadAccountResponse`)) {
		t.Fatalf("accounts.json:\n%s", a)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("auth round trip differs:\n%s\n---\n%s", a, b)
	}
}

// allServices are the backend's registrations, what the command line
// opens a data directory with.
var allServices = backend.Services(&backend.Options{})
