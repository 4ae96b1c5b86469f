package studio_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
	"github.com/pyric/pyric/studio"
)

const covStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /u/{uid}/{file} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
`

const covDatabaseRules = `{"rules": {"users": {"$uid": {
  ".read": "auth != null && auth.uid === $uid",
  ".write": "auth != null && auth.uid === $uid"}}}}`

type counted struct {
	Service  string
	Loaded   bool
	Coverage []struct {
		Line                        int
		Text                        string
		True, False, Error, Skipped int
	}
}

func (c counted) of(t *testing.T, text string) (tr, fa int) {
	t.Helper()
	for _, x := range c.Coverage {
		if x.Text == text {
			return x.True, x.False
		}
	}
	t.Fatalf("%s coverage lacks %q: %+v", c.Service, text, c.Coverage)
	return 0, 0
}

// TestCoverageCountsAllowedRequests: the Rules page's coverage counts the
// expressions of allowed requests (decided untraced) as well as denied
// ones, for Firestore, Storage and the Realtime Database.
func TestCoverageCountsAllowedRequests(t *testing.T) {
	ports := map[string]int{}
	for _, s := range backend.Catalog() {
		if s.Service != backend.Firestore && s.Service != backend.Storage && s.Service != backend.Database {
			ports[s.Service] = backend.Disabled
		}
	}
	b, err := backend.Start(backend.Options{Ports: ports, Firestore: backend.FirestoreOptions{Rules: testRules},
		StorageRules: covStorageRules, DatabaseRules: covDatabaseRules})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	srv := httptest.NewServer(studio.New(studio.Options{Sandbox: b.Sandbox}))
	t.Cleanup(srv.Close)
	e := &env{b: b, srv: srv}

	// Firestore: two allowed creates, one denied, through the app lens.
	for i, title := range []string{"short", "also short", strings.Repeat("t", 27)} {
		e.do(t, "PUT", "/api/firestore/document?path=posts/p"+string(rune('0'+i))+"&as=alice", map[string]any{"data": map[string]any{"title": title}}, nil)
	}
	var fs counted
	e.do(t, "GET", "/api/rules", nil, &fs)
	if tr, fa := fs.of(t, "request.resource.data.title.size() < 20"); tr != 2 || fa != 1 {
		t.Errorf("firestore: size() < 20 true %d false %d, want 2 and 1", tr, fa)
	}

	// Storage: alice writes her own file (allowed) and bob's (denied).
	st, _ := sandbox.Lookup[*storage.Engine](b.Sandbox)
	alice := identity.NewUser("alice", map[string]any{"sub": "alice"})
	for _, owner := range []string{"alice", "alice", "bob"} {
		st.Put(alice, storage.PutRequest{Bucket: st.DefaultBuckets()[0], Name: "u/" + owner + "/f.txt", Body: strings.NewReader("x")})
	}
	var sc counted
	if c := e.do(t, "GET", "/api/rules?service=storage", nil, &sc); c != 200 || !sc.Loaded {
		t.Fatalf("storage rules: %d %+v", c, sc)
	}
	if tr, fa := sc.of(t, "request.auth.uid == uid"); tr != 2 || fa != 1 {
		t.Errorf("storage: uid == uid true %d false %d, want 2 and 1", tr, fa)
	}

	// RTDB: alice writes her node (allowed twice) and bob's (denied).
	db, _ := sandbox.Lookup[*database.Database](b.Sandbox)
	ns := database.DefaultNamespace(b.Project)
	for _, owner := range []string{"alice", "alice", "bob"} {
		db.Set(alice, ns, "/users/"+owner, "x", database.WriteOptions{})
	}
	var dc counted
	if c := e.do(t, "GET", "/api/rules?service=database", nil, &dc); c != 200 || !dc.Loaded {
		t.Fatalf("database rules: %d %+v", c, dc)
	}
	var wrote bool
	for _, x := range dc.Coverage {
		if x.Text == "auth.uid === $uid" && x.Line == 3 {
			wrote = x.True == 2 && x.False == 1
		}
	}
	if !wrote {
		t.Errorf("database: .write auth.uid === $uid is not true 2, false 1: %+v", dc.Coverage)
	}
	if c := e.do(t, "GET", "/api/rules?service=nope", nil, nil); c != 404 {
		t.Errorf("unknown service: %d", c)
	}
}
