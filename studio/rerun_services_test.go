package studio_test

import (
	"strings"
	"testing"

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
// rules it is allowed; as unauthenticated it is denied on request.auth. A
// Realtime Database event is refused with the reason.
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

	db, _ := sandbox.Lookup[*database.Database](e.b.Sandbox)
	db.Set(alice, database.DefaultNamespace(e.b.Project), "/public/x", 42, database.WriteOptions{})
	var refused struct{ Error string }
	if c := e.do(t, "POST", "/api/events/"+lastRequest(t, e.b.Sandbox, "database", "set")+"/rerun", map[string]any{}, &refused); c != 400 ||
		!strings.Contains(refused.Error, "re-run is available for Firestore and Storage requests") {
		t.Fatalf("database rerun: %d %+v", c, refused)
	}
}
