package studio_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

// lastRequest is the id of the newest client request event of a service.
func lastRequest(t *testing.T, sb *sandbox.Sandbox, service, method string) string {
	t.Helper()
	h := sb.Events().History()
	for i := len(h) - 1; i >= 0; i-- {
		if ev := h[i]; ev.Kind == event.KindRequest && ev.Service == service && ev.Method == method && ev.Actor.Kind != event.ActorStudio {
			return ev.ID
		}
	}
	t.Fatalf("no %s %s request event", service, method)
	return ""
}

// TestRerunStorage: a denied upload re-run with the live rules is denied
// again with the same explanation and no notes (exact); against edited
// rules it is allowed; as unauthenticated it is denied on request.auth.
func TestRerunStorage(t *testing.T) {
	e := startAll(t)
	st, _ := sandbox.Lookup[*storage.Engine](e.b.Sandbox)
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	if _, err := st.Put(alice, storage.PutRequest{Bucket: st.DefaultBuckets()[0], Name: "public/big.bin", Body: strings.NewReader(strings.Repeat("x", 200))}); err == nil {
		t.Fatal("a 200-byte upload was allowed by size < 100")
	}
	id := lastRequest(t, e.b.Sandbox, "storage", "create")
	type result struct {
		Verdict     string
		Reason      string
		Explanation []string
		Notes       []string
		Rule        *struct{ Line int }
	}
	var live result
	if c := e.do(t, "POST", "/api/events/"+id+"/rerun", map[string]any{}, &live); c != 200 {
		t.Fatalf("rerun: %d", c)
	}
	if live.Verdict != "deny" || len(live.Notes) != 0 || !strings.Contains(strings.Join(live.Explanation, "\n"), "200 < 100 is false") {
		t.Fatalf("live rerun %+v", live)
	}
	var edited result
	e.do(t, "POST", "/api/events/"+id+"/rerun", map[string]any{"source": strings.Replace(testStorageRules, "size < 100", "size < 1000", 1)}, &edited)
	if edited.Verdict != "allow" || edited.Rule == nil || edited.Rule.Line != 6 {
		t.Fatalf("edited rerun %+v", edited)
	}
	var anon result
	e.do(t, "POST", "/api/events/"+id+"/rerun", map[string]any{"as": map[string]any{"anonymous": true}, "source": strings.Replace(testStorageRules, "size < 100", "size < 1000", 1)}, &anon)
	if anon.Verdict != "deny" || !strings.Contains(strings.Join(anon.Explanation, "\n"), "request.auth != null") {
		t.Fatalf("anonymous rerun %+v", anon)
	}
	var bad struct {
		Rules struct {
			Compiles    bool
			Diagnostics []struct{ Where string }
		}
	}
	if c := e.do(t, "POST", "/api/events/"+id+"/rerun", map[string]any{"source": "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o { allow read: if ; }\n}\n"}, &bad); c != 422 ||
		bad.Rules.Compiles || len(bad.Rules.Diagnostics) == 0 || !strings.HasPrefix(bad.Rules.Diagnostics[0].Where, "storage.rules:3:") {
		t.Fatalf("edited rules that do not compile: %d %+v", c, bad)
	}

	// The check endpoint compiles each service's rules.
	var chk struct {
		Compiles    bool
		Diagnostics []struct{ Where string }
	}
	e.do(t, "POST", "/api/rules/check", map[string]any{"service": "database", "source": "{\"rules\": {\".read\": \"auth !=\"}}"}, &chk)
	if chk.Compiles || len(chk.Diagnostics) == 0 || !strings.HasPrefix(chk.Diagnostics[0].Where, "database.rules.json:1:") {
		t.Fatalf("database rules check: %+v", chk)
	}
	if c := e.do(t, "POST", "/api/rules/check", map[string]any{"service": "nope", "source": ""}, nil); c != 400 {
		t.Fatalf("unknown service check: %d", c)
	}

}

// TestRerunDatabase: a Realtime Database write re-run sees the tree as the
// request found it (the later writes undone), so a counter rule that only
// allows the next value reproduces each recorded verdict; edited rules flip
// a denial, another identity is judged as itself, rules that don't compile
// are 422 with their position, and nothing live changes.
func TestRerunDatabase(t *testing.T) {
	const counter = `{"rules": {"n": {".read": "auth != null", ".write": "auth != null && newData.val() == (data.exists() ? data.val() + 1 : 1)"}}}`
	e := startWith(t, backend.Options{DatabaseRules: counter}, backend.Firestore, backend.Auth, backend.Database)
	db, _ := sandbox.Lookup[*database.Database](e.b.Sandbox)
	ns := database.DefaultNamespace(e.b.Project)
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	var ids []string
	for _, v := range []int{1, 2, 5, 3} {
		_, err := db.Set(alice, ns, "/n", v, database.WriteOptions{})
		if (v == 5) != (err != nil) {
			t.Fatalf("set %d: %v", v, err)
		}
		ids = append(ids, lastRequest(t, e.b.Sandbox, "database", "set"))
	}
	if _, err := db.Get(alice, ns, "/n", nil, false); err != nil {
		t.Fatal(err)
	}
	read := lastRequest(t, e.b.Sandbox, "database", "get")
	type result struct {
		Verdict     string
		Explanation []string
		Notes       []string
		Rule        *struct{ Line int }
	}
	rerun := func(id string, body map[string]any) result {
		t.Helper()
		var r result
		if c := e.do(t, "POST", "/api/events/"+id+"/rerun", body, &r); c != 200 {
			t.Fatalf("rerun %s: %d", id, c)
		}
		return r
	}
	// With the live rules each write gets its recorded verdict: the
	// second (2 after 1) is allowed although the tree now holds 3.
	for i, want := range []string{"allow", "allow", "deny", "allow"} {
		if r := rerun(ids[i], map[string]any{}); r.Verdict != want || len(r.Notes) != 0 {
			t.Fatalf("write %d with the live rules: %+v, want %s", i, r, want)
		}
	}
	if r := rerun(ids[2], map[string]any{}); len(r.Explanation) == 0 || !strings.Contains(r.Explanation[0], "5 == (3) is false") {
		t.Fatalf("denial explanation: %+v", r.Explanation)
	}
	if r := rerun(read, map[string]any{}); r.Verdict != "allow" {
		t.Fatalf("read: %+v", r)
	}
	// Edited rules allow any value; unauthenticated is denied.
	if r := rerun(ids[2], map[string]any{"source": `{"rules": {"n": {".write": "auth != null"}}}`}); r.Verdict != "allow" {
		t.Fatalf("edited rules: %+v", r)
	}
	if r := rerun(ids[1], map[string]any{"as": map[string]any{"anonymous": true}}); r.Verdict != "deny" {
		t.Fatalf("as unauthenticated: %+v", r)
	}
	var bad struct {
		Rules struct {
			Diagnostics []struct{ Where string }
		}
	}
	if c := e.do(t, "POST", "/api/events/"+ids[0]+"/rerun", map[string]any{"source": `{"rules": {".read": "auth !="}}`}, &bad); c != 422 ||
		len(bad.Rules.Diagnostics) == 0 || !strings.HasPrefix(bad.Rules.Diagnostics[0].Where, "database.rules.json:1:") {
		t.Fatalf("rules that don't compile: %d %+v", c, bad)
	}
	got, err := db.Get(identity.AdminIdentity(), ns, "/n", nil, false)
	if err != nil || fmt.Sprint(got.Value) != "3" {
		t.Fatalf("live tree changed: %v %v", got, err)
	}
}
