package studio_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

// The rules of the every-service browser test: Database reads need a
// signed-in user; Storage writes read request.time (a re-run says it is
// not recorded) and one rule reads request.resource.data, which Storage
// does not have (a lint finding).
const (
	browserDatabaseRules = `{"rules": {
  "public": {
    ".read": "auth != null",
    "$k": {".write": "auth != null && newData.isString()"}
  }
}}`
	browserStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /public/{name} {
      allow read: if true;
      allow write: if request.auth != null && request.resource.size < 100 && request.time != null;
      allow delete: if request.resource.data.owner == request.auth.uid;
    }
  }
}
`
	brokenStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o { allow read: if ; }
}
`
)

// startRulesFiles serves every service with rules, the live rules as
// above and rules files on disk: firestore.rules and database.rules.json
// as live, storage.rules one that does not compile (line 3).
func startRulesFiles(t *testing.T) *env {
	dir := t.TempDir()
	files := map[string]string{}
	for svc, f := range map[string][2]string{
		"firestore": {"firestore.rules", testRules},
		"storage":   {"storage.rules", brokenStorageRules},
		"database":  {"database.rules.json", browserDatabaseRules},
	} {
		files[svc] = filepath.Join(dir, f[0])
		if err := os.WriteFile(files[svc], []byte(f[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return startFiles(t, files, backend.Options{DatabaseRules: browserDatabaseRules, StorageRules: browserStorageRules},
		backend.Firestore, backend.Auth, backend.Database, backend.Storage)
}

// TestBrowserHomeRulesStatus: Home shows the rules status of Firestore,
// Storage and the Realtime Database; the storage.rules on disk that does
// not compile is shown with its file:line:col and source line.
func TestBrowserHomeRulesStatus(t *testing.T) {
	e := startRulesFiles(t)
	ctx := browser(t)
	path := e.storageRulesPath(t)
	run(t, ctx, "home", chromedp.Navigate(e.srv.URL+"/"),
		waitText(ctx, `[data-rules-status="firestore"]`, "Live: firestore.rules"),
		waitText(ctx, `[data-rules-status="database"]`, "Realtime Database rules"),
		waitText(ctx, `[data-rules-status="database"]`, "Live: database.rules.json"),
		waitText(ctx, `[data-rules-status="storage"]`, "The rules file does not compile; the last good rules stay live."),
		waitText(ctx, `[data-rules-status="storage"] [data-rules-error]`, path+":3:"),
		waitText(ctx, `[data-rules-status="storage"] [data-rules-error] pre`, "match /b/{bucket}/o { allow read: if ; }"))
	screenshot(t, ctx, "home-rules")

	// Fix the file: Home follows (it reads the file as it is now).
	if err := os.WriteFile(path, []byte(browserStorageRules), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "fixed", waitText(ctx, `[data-rules-status="storage"]`, "Live: storage.rules"))
}

// storageRulesPath is the storage.rules file the Studio was given.
func (e *env) storageRulesPath(t *testing.T) string {
	var svc struct {
		Rules []struct{ Service, Path string }
	}
	e.do(t, "GET", "/api/services", nil, &svc)
	for _, r := range svc.Rules {
		if r.Service == "storage" && r.Path != "" {
			return r.Path
		}
	}
	t.Fatalf("no storage rules file in %+v", svc.Rules)
	return ""
}

// TestBrowserRulesPageServices: the Rules page switches between
// Firestore, Storage and the Realtime Database; after an allowed RTDB
// read, the Database source and expression counts show it; Storage shows
// its lint finding on the line and its file's compile error.
func TestBrowserRulesPageServices(t *testing.T) {
	e := startRulesFiles(t)
	ctx := browser(t)
	db, _ := sandbox.Lookup[*database.Database](e.b.Sandbox)
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	if _, err := db.Get(alice, database.DefaultNamespace(e.b.Project), "/public", nil, false); err != nil {
		t.Fatalf("alice's read of /public: %v", err)
	}
	run(t, ctx, "firestore", chromedp.Navigate(e.srv.URL+"/rules"), waitText(ctx, "main h1", "Firestore rules"),
		waitText(ctx, ".src", "allow create"), waitText(ctx, "main h2", "since the rules were loaded"))
	run(t, ctx, "database", clickJS(`[data-rules-service="database"]`), waitText(ctx, "main h1", "Realtime Database rules"),
		waitText(ctx, ".src", `".read": "auth != null"`),
		// line 3 is .read: one true, nothing false
		waitText(ctx, `.src [data-line="3"] .cov`, "✓1 ✗0"),
		waitJS(`[...document.querySelectorAll('table[aria-label="expression counts"] tr[data-expr="auth != null"]')].some(r => r.cells[0].textContent === 'L3:15' && r.cells[2].textContent === '1' && r.cells[3].textContent === '0')`))
	screenshot(t, ctx, "rules-database")
	run(t, ctx, "storage", clickJS(`[data-rules-service="storage"]`), waitText(ctx, "main h1", "Storage rules"),
		waitText(ctx, ".src", "request.resource.size < 100"),
		waitText(ctx, `table[aria-label="lint"] tr[data-lint="WRONG_CONTEXT_PATH"]`, "storage.rules:7:"),
		waitJS(`document.querySelector('.src [data-line="7"]').classList.contains('lint') && document.querySelector('.src [data-line="7"]').title.includes('WRONG_CONTEXT_PATH')`),
		waitText(ctx, "main [data-rules-error]", "storage.rules:3:"))
	screenshot(t, ctx, "rules-storage")
	var loc string
	run(t, ctx, "url", chromedp.Evaluate(`location.pathname + location.search`, &loc))
	if loc != "/rules?service=storage" {
		t.Fatalf("the Rules page's address is %q, want /rules?service=storage", loc)
	}
	// A Storage upload by alice: the write rule's counts move.
	st, _ := sandbox.Lookup[*storage.Engine](e.b.Sandbox)
	if _, err := st.Put(alice, storage.PutRequest{Bucket: st.DefaultBuckets()[0], Name: "public/a.txt", Body: strings.NewReader("hi")}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "storage counts", waitText(ctx, `.src [data-line="6"] .cov`, "✓"))
}

// TestBrowserInspectorRerunServices: a denied Storage upload re-runs from
// the inspector with Storage's rules, and the re-run lists what it could
// not reproduce (request.time); a denied Realtime Database write re-runs
// exactly (the tree as the request found it) and is denied again.
func TestBrowserInspectorRerunServices(t *testing.T) {
	e := startRulesFiles(t)
	ctx := browser(t)
	st, _ := sandbox.Lookup[*storage.Engine](e.b.Sandbox)
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	if _, err := st.Put(alice, storage.PutRequest{Bucket: st.DefaultBuckets()[0], Name: "public/big.bin", Body: strings.NewReader(strings.Repeat("x", 200))}); err == nil {
		t.Fatal("a 200-byte upload was allowed")
	}
	id := lastRequest(t, e.b.Sandbox, "storage", "create")
	run(t, ctx, "storage event", chromedp.Navigate(e.srv.URL+"/traffic/"+id), waitText(ctx, "main h1", "deny"),
		waitText(ctx, ".src", "request.resource.size < 100"), waitText(ctx, "main", "Re-run (state untouched)"),
		clickButton("Re-run with live rules"), waitText(ctx, `[data-rerun="deny"]`, "200 < 100 is false"),
		waitText(ctx, `[data-rerun-notes]`, "request.time is the event's time"))
	screenshot(t, ctx, "inspector-storage-rerun")

	db, _ := sandbox.Lookup[*database.Database](e.b.Sandbox)
	if _, err := db.Set(identity.Anonymous(), database.DefaultNamespace(e.b.Project), "/public/x", "v", database.WriteOptions{}); err == nil {
		t.Fatal("an unauthenticated RTDB write was allowed")
	}
	id = lastRequest(t, e.b.Sandbox, "database", "set")
	run(t, ctx, "database event", chromedp.Navigate(e.srv.URL+"/traffic/"+id), waitText(ctx, "main h1", "deny"),
		waitText(ctx, "main", "Re-run (state untouched)"),
		clickButton("Re-run with live rules"), waitText(ctx, `[data-rerun="deny"]`, "auth != null"),
		waitText(ctx, `[data-rerun-exact]`, "Exact"))
	screenshot(t, ctx, "inspector-database-rerun")
}
