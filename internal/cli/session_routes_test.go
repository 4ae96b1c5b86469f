package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
)

const sessionRoutesRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /posts/{id} {
      allow read: if true;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
    }
  }
}
`

// TestServeSessionRoutes: the admin routes on a real serve's Studio port
// that the Studio's Rules page uses — the indexes the session's queries
// need, keeping the session as a named fixture beside .pyric — and the
// branch routes, through an official client's session.
func TestServeSessionRoutes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rules := filepath.Join(dir, "firestore.rules")
	os.WriteFile(rules, []byte(sessionRoutesRules), 0o644)
	s := startServe(t, "--project", "demo-routes", "--data-dir", filepath.Join(dir, ".pyric"), "--rules", rules)
	ctx := context.Background()
	alice := goClient(t, s.Firestore, "demo-routes", authPost(t, s.Auth, "signUp", map[string]any{"email": "a@example.com", "password": "secret1", "returnSecureToken": true})["idToken"].(string))
	var uid string
	{
		in := authPost(t, s.Auth, "signInWithPassword", map[string]any{"email": "a@example.com", "password": "secret1", "returnSecureToken": true})
		uid = in["localId"].(string)
	}
	if _, err := alice.Doc("posts/a1").Set(ctx, map[string]any{"owner": uid, "title": "t"}); err != nil {
		t.Fatal(err)
	}
	it := alice.Collection("posts").Where("owner", "==", uid).OrderBy("title", firestore.Desc).Snapshots(ctx)
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	it.Stop()

	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, s.Studio+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %d, not JSON: %s", method, path, resp.StatusCode, b)
		}
		return resp.StatusCode, out
	}
	code, ix := call("GET", "/__pyric/indexes", "")
	js, _ := json.Marshal(ix)
	if code != 200 || !strings.Contains(string(js), `"collectionGroup":"posts"`) || !strings.Contains(string(js), `"fieldPath":"title","order":"DESCENDING"`) {
		t.Fatalf("indexes: %d %s", code, js)
	}

	code, saved := call("POST", "/__pyric/capture/save", `{"name": "alice-posts", "description": "alice writes and listens"}`)
	want := filepath.Join(dir, "fixtures", "alice-posts.json")
	if code != 200 || saved["path"] != want {
		t.Fatalf("save: %d %v, want %s", code, saved, want)
	}
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	f, err := capture.DecodeWith(data, backend.Services(&backend.Options{}))
	if err != nil || f.Description != "alice writes and listens" || len(f.Events) == 0 || f.Services["firestore"].Rules.Source != sessionRoutesRules {
		t.Fatalf("saved fixture: %v %+v", err, f)
	}
	for _, bad := range []string{`{"name": "../x"}`, `{"name": ""}`, `{"name": ".hidden"}`, `nope`} {
		if code, e := call("POST", "/__pyric/capture/save", bad); code != 400 || e["error"] == "" {
			t.Errorf("save %s: %d %v", bad, code, e)
		}
	}
	if code, _ := call("GET", "/__pyric/capture/save", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET save: %d", code)
	}
	if code, e := call("POST", "/__pyric/capture", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("POST capture: %d %v", code, e)
	}

	// A branch re-running the session with rules that forbid every
	// create: alice's post is now denied and missing from the branch;
	// discarding leaves live as it was.
	closed := strings.Replace(sessionRoutesRules, "allow create: if", "allow create: if false &&", 1)
	body, _ := json.Marshal(map[string]any{"rules": closed})
	code, br := call("POST", "/__pyric/branch", string(body))
	if code != 201 {
		t.Fatalf("branch: %d %v", code, br)
	}
	bj, _ := json.Marshal(br)
	if !strings.Contains(string(bj), `"kind":"now-denied"`) || !strings.Contains(string(bj), `"path":"posts/a1"`) {
		t.Fatalf("branch: %s", bj)
	}
	if code, d := call("DELETE", "/__pyric/branch/"+br["id"].(string), ""); code != 200 || d["discarded"] != true {
		t.Fatalf("discard: %d %v", code, d)
	}
	if snap, err := alice.Doc("posts/a1").Get(ctx); err != nil || !snap.Exists() {
		t.Fatalf("live lost posts/a1: %v", err)
	}
	var buf bytes.Buffer
	code = Run(ctx, []string{"capture", "save", "via-url", "--url", s.Studio + "/__pyric/capture", "--dir", filepath.Join(dir, "fixtures")}, Stdio{Out: &buf, Err: &buf})
	if code != 0 {
		t.Fatalf("capture save --url: %d %s", code, buf.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "fixtures", "via-url.json")); err != nil {
		t.Fatal(err)
	}
}
