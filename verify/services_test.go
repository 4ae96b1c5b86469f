package verify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/storage"
	"github.com/pyric/pyric/verify"
)

// servicesSession runs a Realtime Database and Storage session on an
// in-process backend and returns its fixture.
func servicesSession(t testing.TB, n int) *capture.Fixture {
	t.Helper()
	b, err := backend.Start(backend.Options{DatabaseRules: sessionDBRules, StorageRules: storageTeamRules})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	db := b.Sandbox.Service("database").(*database.Database)
	st := b.Sandbox.Service(storage.Service).(*storage.Engine)
	ns := database.DefaultNamespace(b.Project)
	alice, bob := identity.NewUser("alice", nil), identity.NewUser("bob", nil)
	admin := identity.AdminIdentity()
	ctx := context.Background()
	if err := testfs.Of(b.Sandbox).Admin().SetDocument(ctx, "teams/t1", map[string]any{"members": []any{"alice"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Set(admin, ns, "/config", map[string]any{"v": 1, ".priority": 5.0, "at": map[string]any{".sv": "timestamp"}}, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := db.Set(alice, ns, "/users/alice", map[string]any{"name": "Alice", "i": i, "at": map[string]any{".sv": "timestamp"}}, database.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := db.Update(bob, ns, "/users/bob", map[string]any{"name": "Bob", "tags/x": true}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Set(bob, ns, "/users/alice/name", "hacked", database.WriteOptions{}); err == nil {
			t.Fatal("bob wrote alice's name")
		}
		if _, err := db.Get(bob, ns, "/users/alice", nil, false); err == nil {
			t.Fatal("bob read alice")
		}
		if _, err := db.Push(bob, ns, "/posts", map[string]any{"by": "bob"}); err != nil {
			t.Fatal(err)
		}
		put := func(who identity.Identity, name, body string) error {
			_, err := st.Put(who, storage.PutRequest{Bucket: b.Project + ".appspot.com", Name: name, Body: strings.NewReader(body)})
			return err
		}
		if err := put(alice, "teams/t1/f.txt", fmt.Sprint("alice ", i)); err != nil {
			t.Fatal(err)
		}
		if err := put(bob, "teams/t1/g.txt", "bob"); err == nil {
			t.Fatal("bob wrote to team t1")
		}
		if err := put(bob, "users/bob/b.txt", "bob"); err != nil {
			t.Fatal(err)
		}
	}
	// Through the file form, as verify reads it.
	f, err := capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History())
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
	return f
}

// storageTeamRules reads Firestore: a team's members may write its files.
const storageTeamRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /teams/{team}/{file} {
      allow read, write: if request.auth != null
        && request.auth.uid in firestore.get(/databases/(default)/documents/teams/$(team)).data.members;
    }
  }
}
`

func TestReplayDatabaseAndStorage(t *testing.T) {
	f := servicesSession(t, 2)
	same, err := verify.Run(f, verify.Options{Registrations: regs()})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range same.Services {
		if !s.OK {
			t.Errorf("%s: the captured rules diverge: %+v", name, s.Divergences)
		}
	}
	if n := same.Services["database"].CheckedEvents; n != 10 {
		t.Errorf("database: %d requests re-decided, want 10", n)
	}
	if n := same.Services["storage"].CheckedEvents; n != 6 {
		t.Errorf("storage: %d requests re-decided, want 6", n)
	}

	// Candidates: bob may write his own data no more; nobody may write
	// team files.
	res, err := verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": source.NewFile("c.json", noBobDBRules), "storage": source.NewFile("c.rules", strings.Replace(storageTeamRules, "allow read, write: if request.auth != null\n", "allow read: if true;\n      allow write: if false\n", 1))}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := func(svc string) map[string]int {
		out := map[string]int{}
		for _, d := range res.Services[svc].Divergences {
			out[d.Kind+" "+d.Method+" "+d.UID]++
		}
		return out
	}
	if got, want := kinds("database"), map[string]int{"now-denied update bob": 2, "now-denied push bob": 2, "state-drift  ": 4}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("database divergences %v, want %v", got, want)
	}
	if got, want := kinds("storage"), map[string]int{"now-denied create alice": 1, "now-denied update alice": 1, "state-drift  ": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("storage divergences %v, want %v: %+v", got, want, res.Services["storage"].Divergences)
	}

	// The session as Storage simulator cases: the team writes read
	// teams/t1 through firestore.get(), so they carry its mock; every
	// case passes with the captured rules.
	v, _, _, err := verify.DeriveService(f, "storage", verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"storage": source.NewFile("storage.rules", storageTeamRules)}})
	if err != nil {
		t.Fatal(err)
	}
	cases := v.(*verify.Cases[srules.Case])
	mocked := 0
	for _, c := range cases.TestCases {
		if len(c.FunctionMocks) > 0 {
			mocked++
			if m := c.FunctionMocks[0]; m.Function != "firestore.get" || m.Path != "teams/t1" || !strings.Contains(string(m.Result), `"alice"`) {
				t.Errorf("mock %+v", m)
			}
		}
	}
	if len(cases.TestCases) != 6 || mocked != 4 || len(cases.Unsupported) != 0 {
		t.Errorf("storage cases: %d (%d mocked), unsupported %v", len(cases.TestCases), mocked, cases.Unsupported)
	}
	rs, _ := srules.Compile(source.NewFile("storage.rules", storageTeamRules))
	rep, err := rs.Simulate(cases.TestCases, time.Now())
	if err != nil || rep.Failed != 0 || rep.Passed != len(cases.TestCases) {
		t.Errorf("simulating the derived Storage cases: %v %+v", err, rep)
	}
	dv, _, _, err := verify.DeriveService(f, "database", verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": source.NewFile("database.rules.json", sessionDBRules)}})
	if err != nil {
		t.Fatal(err)
	}
	dcases := dv.(*verify.Cases[database.SimulateCase])
	// bob's two-path updates have no case form.
	if len(dcases.TestCases) != 8 || len(dcases.Unsupported) != 2 {
		t.Errorf("database cases: %d, unsupported %v", len(dcases.TestCases), dcases.Unsupported)
	}
	in, _ := json.Marshal(dcases)
	parsed, err := rtdb.ParseInput(in)
	if err != nil {
		t.Fatal(err)
	}
	drs, _ := rtdb.Compile(source.NewFile("database.rules.json", sessionDBRules))
	if rep := drs.Simulate(parsed.TestCases); rep.Failed != 0 || rep.Passed != len(parsed.TestCases) {
		t.Errorf("simulating the derived database cases: %+v", rep)
	}

	// A candidate that does not compile is bad input, with positions.
	_, err = verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": source.NewFile("bad.json", `{"rules": {".read": "auth.uid ==="}}`)}})
	var re *verify.RulesError
	if !asRulesError(err, &re) || !strings.Contains(err.Error(), "bad.json:") {
		t.Errorf("bad database rules: %v", err)
	}
	_, err = verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"storage": source.NewFile("bad.rules", "service firebase.storage { match /b/{x}/o { allow read: if ; } }")}})
	if !asRulesError(err, &re) || !strings.Contains(err.Error(), "bad.rules:1:") {
		t.Errorf("bad storage rules: %v", err)
	}
}

func asRulesError(err error, re **verify.RulesError) bool {
	e, ok := err.(*verify.RulesError)
	*re = e
	return ok
}

// BenchmarkReplayDatabaseAndStorage replays a session of ~10k Realtime
// Database and Storage events.
func BenchmarkReplayDatabaseAndStorage(b *testing.B) {
	f := servicesSession(b, 700)
	b.Logf("%d events", len(f.Events))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := verify.Run(f, verify.Options{Registrations: regs()})
		if err != nil || !res.OK {
			b.Fatal(err, res)
		}
	}
}

// TestReplayDatabaseAcrossReset: a session cut by a sandbox reset replays
// with the same rules without a divergence, and a candidate that denies
// the writes after the reset reports exactly those.
func TestReplayDatabaseAcrossReset(t *testing.T) {
	b, err := backend.Start(backend.Options{DatabaseRules: sessionDBRules})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	rec, err := capture.Start(context.Background(), b.Sandbox, t.TempDir()+"/s.json", capture.Options{Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	db := b.Sandbox.Service("database").(*database.Database)
	ns := database.DefaultNamespace(b.Project)
	alice, bob := identity.NewUser("alice", nil), identity.NewUser("bob", nil)
	if _, err := db.Set(alice, ns, "/users/alice", map[string]any{"v": 1}, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Sandbox.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Set(bob, ns, "/users/bob", map[string]any{"v": 2}, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(alice, ns, "/users/alice", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := rec.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	same, err := verify.Run(f, verify.Options{Registrations: regs(), Services: []string{"database"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := same.Services["database"]; !s.OK || s.CheckedEvents != 3 {
		t.Fatalf("same rules across a reset: %+v", s)
	}
	res, err := verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": source.NewFile("c.json", noBobDBRules)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Services["database"].Divergences {
		got = append(got, d.Kind+" "+d.Path)
	}
	if want := []string{"now-denied /users/bob", "state-drift /users/bob/v"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("divergences %q, want %q", got, want)
	}
}

// TestReplayDatabaseQueryRules: a read's query is captured as the rules
// saw it, so rules on query.* decide the replayed reads (and derived
// cases) as they decided the session's.
func TestReplayDatabaseQueryRules(t *testing.T) {
	const rules = `{"rules": {"posts": {".read": "auth != null && query.orderByKey && query.limitToFirst <= 10"}}}`
	b, err := backend.Start(backend.Options{DatabaseRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	db := b.Sandbox.Service("database").(*database.Database)
	ns := database.DefaultNamespace(b.Project)
	alice := identity.NewUser("alice", nil)
	q, _, err := database.ParseRESTQuery(url.Values{"orderBy": {`"$key"`}, "limitToFirst": {"5"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(alice, ns, "/posts", &q, false); err != nil {
		t.Fatalf("the limited read: %v", err)
	}
	if _, err := db.Get(alice, ns, "/posts", nil, false); err == nil {
		t.Fatal("a read without a query was allowed")
	}
	f, err := capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := capture.Encode(f)
	if f, err = capture.DecodeWith(data, regs()); err != nil {
		t.Fatal(err)
	}
	same, err := verify.Run(f, verify.Options{Registrations: regs(), Services: []string{"database"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := same.Services["database"]; !s.OK || s.CheckedEvents != 2 {
		t.Fatalf("same rules: %+v", s)
	}
	res, err := verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": source.NewFile("c.json", strings.Replace(rules, "<= 10", "<= 3", 1))}})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Services["database"].Divergences; len(d) != 1 || d[0].Kind != verify.NowDenied || !strings.Contains(d[0].Explanation, "limitToFirst") {
		t.Fatalf("a smaller limit: %+v", d)
	}
	cases, _, _, err := verify.DeriveService(f, "database", verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": source.NewFile("database.rules.json", rules)}})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(cases)
	parsed, err := rtdb.ParseInput(in)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := rtdb.Compile(source.NewFile("database.rules.json", rules))
	if rep := rs.Simulate(parsed.TestCases); rep.Passed != 2 || rep.Failed != 0 {
		t.Errorf("the derived cases with their queries: %+v", rep)
	}
}
