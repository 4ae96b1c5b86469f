package databaseserver_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
)

const aclRules = `{
  "rules": {
    "acl": {".read": true, ".write": true},
    "docs": {"$d": {".read": "root.child('acl').child($d).child(auth.uid).val() === true", ".write": true}},
    "open": {".read": "auth != null", ".write": true},
    "capped": {".read": "query.orderByKey && query.limitToFirst <= 2", ".write": true},
    "owned": {".read": "auth != null && query.orderByChild === 'owner' && query.equalTo === auth.uid", ".write": true,
      ".indexOn": ["owner"]}
  }
}`

// tokenFor is a mock ID token for uid expiring at exp (epoch seconds).
func tokenFor(uid string, exp int64) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return strings.TrimRight(base64URL(b), "=")
	}
	return enc(map[string]any{"alg": "none", "type": "JWT"}) + "." + enc(map[string]any{"sub": uid, "iat": time.Now().Unix(), "exp": exp}) + "."
}

// TestRevokeOnDataChange: a listen whose read rule reads other data is
// revoked with production's push when that data changes, and only then.
func TestRevokeOnDataChange(t *testing.T) {
	srv, _ := start(t, aclRules)
	ns := "demo-default-rtdb"
	a := dial(t, srv.URL, ns)
	a.ok("auth", map[string]any{"cred": mockToken("alice")})
	a.ok("p", map[string]any{"p": "/acl/d1/alice", "d": true})
	a.ok("p", map[string]any{"p": "/docs/d1", "d": map[string]any{"title": "x"}})
	if got := a.ok("q", map[string]any{"p": "/docs/d1", "h": ""}); len(got) != 1 {
		t.Fatalf("listen pushes %v", got)
	}
	// A write the rule does not read leaves the listen alone.
	if got := a.ok("p", map[string]any{"p": "/acl/d2/alice", "d": true}); len(got) != 0 {
		t.Fatalf("unrelated write pushed %v", got)
	}
	// Revoking the grant revokes the listen, before the write's reply.
	got := a.ok("p", map[string]any{"p": "/acl/d1/alice", "d": nil})
	if len(got) != 1 || got[0] != `{"a":"c","b":{"p":"/docs/d1","s":"permission_denied"}}` {
		t.Fatalf("revocation %v", got)
	}
	// The listen is gone: later writes to the doc push nothing.
	if got := a.ok("p", map[string]any{"p": "/docs/d1/title", "d": "y"}); len(got) != 0 {
		t.Fatalf("revoked listen still pushed %v", got)
	}
	// A tagged query listen is revoked with its query object.
	a.ok("p", map[string]any{"p": "/acl/d1/alice", "d": true})
	q := map[string]any{"l": 1, "vf": "l", "i": ".key"}
	a.ok("q", map[string]any{"p": "/docs/d1", "q": q, "t": 5, "h": ""})
	got = a.ok("p", map[string]any{"p": "/acl/d1", "d": "nobody"})
	if len(got) != 1 || got[0] != `{"a":"c","b":{"p":"/docs/d1","q":[{"i":".key","l":1,"vf":"l"}],"s":"permission_denied"}}` {
		t.Fatalf("query revocation %v", got)
	}
}

// TestListenHash: a listen whose hash matches the server's data gets no
// data, only its ok; a stale hash gets the data.
func TestListenHash(t *testing.T) {
	srv, db := start(t, testRules)
	ns := "demo-default-rtdb"
	val := map[string]any{"a": map[string]any{"n": 1.5, ".priority": 2.0}, "b": "s", "c": true, "1": map[string]any{".value": 3.0, ".priority": "p"}}
	if _, err := db.Set(adminID, ns, "/public/h", val, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, _ := db.Get(adminID, ns, "/public/h", nil, false)
	a := dial(t, srv.URL, ns)
	if got := a.ok("q", map[string]any{"p": "/public/h", "h": database.Hash(r.Value)}); len(got) != 0 {
		t.Fatalf("matching hash: pushes %v", got)
	}
	if got := a.ok("q", map[string]any{"p": "/public/h/a", "h": "stale"}); len(got) != 1 || !strings.Contains(got[0], `"p":"public/h/a"`) {
		t.Fatalf("stale hash: pushes %v", got)
	}
	// A query's hash is its window's.
	q := map[string]any{"l": 1, "vf": "l", "i": ".key"}
	win, _ := db.Get(adminID, ns, "/public/h", &database.Query{Index: database.IndexKey, Limit: 1}, false)
	if got := a.ok("q", map[string]any{"p": "/public/h", "q": q, "t": 2, "h": database.Hash(win.Value)}); len(got) != 0 {
		t.Fatalf("matching window hash: pushes %v", got)
	}
	// The listen is live: a change pushes.
	if got := a.ok("p", map[string]any{"p": "/public/h/b", "d": "t"}); len(got) != 1 {
		t.Fatalf("after a hash-matched listen, a write pushed %v", got)
	}
}

// TestAuthExpiry: a token that expires while a websocket uses it gets
// production's "ac" push and the connection is signed out; a REST stream
// authenticated by it ends with auth_revoked.
func TestAuthExpiry(t *testing.T) {
	srv, _ := start(t, aclRules)
	ns := "demo-default-rtdb"
	a := dial(t, srv.URL, ns)
	a.ok("auth", map[string]any{"cred": tokenFor("alice", time.Now().Add(time.Second).Unix()+1)})
	a.ok("q", map[string]any{"p": "/open", "h": ""})
	if p := a.push(); p != `{"a":"ac","b":{"d":"Auth token is expired.","s":"expired_token"}}` {
		t.Fatalf("push %s", p)
	}
	// Signed out: the read is denied now.
	if _, res := a.call("g", map[string]any{"p": "/open", "q": map[string]any{}}); res["s"] != "permission_denied" {
		t.Fatalf("read after expiry: %v", res)
	}

	req, _ := http.NewRequest("GET", srv.URL+"/open.json?ns="+ns+"&auth="+url.QueryEscape(tokenFor("bob", time.Now().Add(time.Second).Unix()+1)), nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	var events []string
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, e)
		}
	}
	if strings.Join(events, ",") != "put,auth_revoked" {
		t.Fatalf("stream events %v", events)
	}
}

// TestQueryRules: query.* in .read rules judge REST queries and listens.
func TestQueryRules(t *testing.T) {
	srv, _ := start(t, aclRules)
	ns := "demo-default-rtdb"
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/capped.json?orderBy=%22$key%22&limitToFirst=2", 200},
		{"/capped.json?orderBy=%22$key%22&limitToFirst=3", 401},
		{"/capped.json", 401},
		{"/owned.json?orderBy=%22owner%22&equalTo=%22alice%22&auth=" + mockToken("alice"), 200},
		{"/owned.json?orderBy=%22owner%22&equalTo=%22bob%22&auth=" + mockToken("alice"), 401},
	} {
		sep := "&"
		if !strings.Contains(c.path, "?") {
			sep = "?"
		}
		if r := do(t, srv, "GET", c.path+sep+"ns="+ns, ""); r.status != c.status {
			t.Errorf("GET %s: %d %s, want %d", c.path, r.status, r.body, c.status)
		}
	}
	a := dial(t, srv.URL, ns)
	if _, res := a.call("q", map[string]any{"p": "/capped", "q": map[string]any{"i": ".key", "l": 2, "vf": "l"}, "t": 1, "h": ""}); res["s"] != "ok" {
		t.Fatalf("capped listen: %v", res)
	}
	if _, res := a.call("q", map[string]any{"p": "/capped", "q": map[string]any{"i": ".key", "l": 5, "vf": "l"}, "t": 2, "h": ""}); res["s"] != "permission_denied" {
		t.Fatalf("over-cap listen: %v", res)
	}
	a.ok("auth", map[string]any{"cred": mockToken("alice")})
	eq := map[string]any{"i": "owner", "sp": "alice", "sin": true, "ep": "alice", "ein": true}
	if _, res := a.call("q", map[string]any{"p": "/owned", "q": eq, "t": 3, "h": ""}); res["s"] != "ok" {
		t.Fatalf("equalTo own uid: %v", res)
	}
	eq["sp"], eq["ep"] = "bob", "bob"
	if _, res := a.call("q", map[string]any{"p": "/owned", "q": eq, "t": 4, "h": ""}); res["s"] != "permission_denied" {
		t.Fatalf("equalTo other uid: %v", res)
	}
}

// TestStreamCancelOnDataChange: a REST event stream whose read rule reads
// other data ends with cancel when that data stops allowing it.
func TestStreamCancelOnDataChange(t *testing.T) {
	srv, db := start(t, aclRules)
	ns := "demo-default-rtdb"
	if _, err := db.Set(adminID, ns, "/acl/d1/alice", true, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/docs/d1.json?ns="+ns+"&auth="+url.QueryEscape(mockToken("alice")), nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	var events []string
	for sc.Scan() {
		e, ok := strings.CutPrefix(sc.Text(), "event: ")
		if !ok {
			continue
		}
		events = append(events, e)
		if len(events) == 1 { // the initial put: now revoke the grant
			if _, err := db.Set(adminID, ns, "/acl/d1/alice", nil, database.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(events, ",") != "put,cancel" {
		t.Fatalf("stream events %v", events)
	}
}
