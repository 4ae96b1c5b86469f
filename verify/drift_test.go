package verify_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/verify"
)

const driftFirestoreRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read: if request.auth != null && resource.data.owner == request.auth.uid;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid
        && request.resource.data.text.size() < 10;
      allow update, delete: if request.auth != null && resource.data.owner == request.auth.uid;
    }
  }
}
`

const driftDatabaseRules = `{"rules": {
  "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid",
    "age": {".validate": "newData.isNumber() && newData.val() < 150"}}},
  "public": {".read": true, ".write": "auth != null"}
}}`

const driftStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file} {
      allow read, delete: if request.auth != null && request.auth.uid == uid;
      allow write: if request.auth != null && request.auth.uid == uid && request.resource.size < 16;
    }
  }
}
`

// TestReplayMatchesLiveVerdicts records a session through the real wire
// adapters (Firestore REST, the Realtime Database REST API, the Firebase
// Storage API), allowed and denied requests of each, then decides every
// recorded request again on the one replay path: verify's replay, with
// the rules the session had, must find every verdict as it was live (no
// divergence, every client request checked), and each service's
// Rerunner, the Studio's re-run, must give each request's recorded
// verdict. A service whose replay rebuilt a request differently from the
// live one would fail here.
func TestReplayMatchesLiveVerdicts(t *testing.T) {
	b, err := backend.Start(backend.Options{Firestore: backend.FirestoreOptions{Rules: driftFirestoreRules},
		DatabaseRules: driftDatabaseRules, StorageRules: driftStorageRules})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	alice, bob := driftToken("alice"), driftToken("bob")
	project := b.Project
	fs := "http://" + b.Addr("firestore") + "/v1/projects/" + project + "/databases/(default)/documents"
	db := "http://" + b.Addr("database")
	ns := "?ns=" + project + "-default-rtdb"
	st := "http://" + b.Addr("storage") + "/v0/b/" + project + ".appspot.com/o"
	steps := []struct {
		name, method, url, body, auth string
		status                        int
	}{
		{"fs create", "POST", fs + "/notes?documentId=n1", `{"fields":{"owner":{"stringValue":"alice"},"text":{"stringValue":"hi"}}}`, "Bearer " + alice, 200},
		{"fs create too long", "POST", fs + "/notes?documentId=n2", `{"fields":{"owner":{"stringValue":"alice"},"text":{"stringValue":"far too long"}}}`, "Bearer " + alice, 403},
		{"fs create as other", "POST", fs + "/notes?documentId=n3", `{"fields":{"owner":{"stringValue":"alice"},"text":{"stringValue":"x"}}}`, "Bearer " + bob, 403},
		{"fs get own", "GET", fs + "/notes/n1", "", "Bearer " + alice, 200},
		{"fs get other", "GET", fs + "/notes/n1", "", "Bearer " + bob, 403},
		{"fs update own", "PATCH", fs + "/notes/n1", `{"fields":{"owner":{"stringValue":"alice"},"text":{"stringValue":"hello"}}}`, "Bearer " + alice, 200},
		{"fs delete other", "DELETE", fs + "/notes/n1", "", "Bearer " + bob, 403},
		{"db write own", "PUT", db + "/users/alice.json" + ns, `{"name":"Alice","age":30}`, "Bearer " + alice, 200},
		{"db write invalid", "PUT", db + "/users/alice/age.json" + ns, `200`, "Bearer " + alice, 401},
		{"db write other", "PUT", db + "/users/alice/name.json" + ns, `"Bob"`, "Bearer " + bob, 401},
		{"db read own", "GET", db + "/users/alice.json" + ns, "", "Bearer " + alice, 200},
		{"db read other", "GET", db + "/users/alice.json" + ns, "", "Bearer " + bob, 401},
		{"db update public", "PATCH", db + "/public.json" + ns, `{"a":1,"b/c":2}`, "Bearer " + bob, 200},
		{"db write public anonymous", "PUT", db + "/public/x.json" + ns, `1`, "", 401},
		{"st upload own", "POST", st + "?name=users%2Falice%2Fa.txt", "small", "Firebase " + alice, 200},
		{"st upload too big", "POST", st + "?name=users%2Falice%2Fb.txt", strings.Repeat("x", 40), "Firebase " + alice, 403},
		{"st upload other", "POST", st + "?name=users%2Falice%2Fc.txt", "x", "Firebase " + bob, 403},
		{"st read own", "GET", st + "/users%2Falice%2Fa.txt", "", "Firebase " + alice, 200},
		{"st read other", "GET", st + "/users%2Falice%2Fa.txt", "", "Firebase " + bob, 403},
		{"st delete own", "DELETE", st + "/users%2Falice%2Fa.txt", "", "Firebase " + alice, 204},
	}
	for _, s := range steps {
		req, err := http.NewRequest(s.method, s.url, strings.NewReader(s.body))
		if err != nil {
			t.Fatal(err)
		}
		if s.auth != "" {
			req.Header.Set("Authorization", s.auth)
		}
		if strings.Contains(s.url, "/v0/b/") && s.method == "POST" {
			req.Header.Set("X-Goog-Upload-Protocol", "raw")
			req.Header.Set("Content-Type", "text/plain")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.status {
			t.Fatalf("%s: status %d, want %d: %s", s.name, resp.StatusCode, s.status, body)
		}
	}

	history := b.Sandbox.Events().History()
	f, err := capture.FromSandbox(b.Sandbox, history)
	if err != nil {
		t.Fatal(err)
	}
	data, err := capture.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if f, err = capture.DecodeWith(data, regs()); err != nil {
		t.Fatal(err)
	}

	// Every client request the services judged, by service, and each
	// verdict, as recorded live.
	judged := map[string]int{}
	verdicts := map[string]map[event.Verdict]int{}
	for _, e := range history {
		if e.Kind != event.KindRequest || service.Bypassed(&e) || (e.Verdict != event.Allow && e.Verdict != event.Deny) {
			continue
		}
		judged[e.Service]++
		if verdicts[e.Service] == nil {
			verdicts[e.Service] = map[event.Verdict]int{}
		}
		verdicts[e.Service][e.Verdict]++
	}
	for _, svc := range []string{"firestore", "database", "storage"} {
		if verdicts[svc][event.Allow] == 0 || verdicts[svc][event.Deny] == 0 {
			t.Fatalf("%s: the session must have allowed and denied requests: %v", svc, verdicts[svc])
		}
	}

	res, err := verify.Run(f, verify.Options{Registrations: regs()})
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"firestore", "database", "storage"} {
		sr := res.Services[svc]
		if sr == nil {
			t.Fatalf("%s was not replayed: %v", svc, res.Services)
		}
		for _, d := range sr.Divergences {
			if d.Kind != verify.ExpectedDrift {
				t.Errorf("%s: replay drifted from the live verdicts: %+v", svc, d)
			}
		}
		if sr.CheckedEvents != judged[svc] {
			t.Errorf("%s: replay checked %d requests, the session judged %d", svc, sr.CheckedEvents, judged[svc])
		}
	}
	if !res.OK {
		out, _ := json.MarshalIndent(res, "", "  ")
		t.Fatalf("replay with the session's own rules is not OK:\n%s", out)
	}

	// The Studio's re-run: each service's Rerunner, live rules, the
	// request's own identity.
	for i, e := range history {
		if e.Kind != event.KindRequest || service.Bypassed(&e) || (e.Verdict != event.Allow && e.Verdict != event.Deny) {
			continue
		}
		rr, ok := b.Sandbox.Service(e.Service).(service.Rerunner)
		if !ok {
			t.Fatalf("%s is no service.Rerunner", e.Service)
		}
		x, err := rr.Rerun(context.Background(), service.RerunRequest{Event: e, Later: history[i+1:], As: e.Identity})
		if err != nil {
			t.Fatalf("re-run of %s %s %s: %v", e.Service, e.Method, e.Path, err)
		}
		if x.Verdict != e.Verdict {
			t.Errorf("re-run of %s %s %s as %s: %s, live %s (%s)", e.Service, e.Method, e.Path, e.Identity.UID, x.Verdict, e.Verdict, x.Reason)
		}
	}
}

// driftToken is an unsigned ID token for uid, as the emulators accept.
func driftToken(uid string) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "none", "typ": "JWT"}) + "." +
		enc(map[string]any{"sub": uid, "user_id": uid, "iat": 0, "exp": 4102444800, "firebase": map[string]any{"sign_in_provider": "custom"}}) + "."
}
