package sandbox

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// openAuth opens a sandbox with Auth registered.
func openAuth(opts Options) (*Sandbox, error) {
	opts.Services = append([]service.Registration{auth.Registration}, opts.Services...)
	return Open(opts)
}

// authOf is the sandbox's Auth engine.
func authOf(t *testing.T, sb *Sandbox) *auth.Engine {
	t.Helper()
	e, ok := Lookup[*auth.Engine](sb)
	if !ok {
		t.Fatal("no auth service")
	}
	return e
}

func signUp(t *testing.T, sb *Sandbox, email string) string {
	t.Helper()
	r, err := authOf(t, sb).SignUp(auth.Call{Caller: identity.AdminIdentity(), Project: "demo-pyric"},
		auth.SignUpRequest{Email: &email, Password: "secret1"})
	if err != nil {
		t.Fatal(err)
	}
	return r.LocalID
}

func TestAuthUsersSurviveReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sb, err := openAuth(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	uid := signUp(t, sb, "ada@example.com")
	sb.Close()

	sb2, err := openAuth(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer sb2.Close()
	users := authOf(t, sb2).Users("demo-pyric", "")
	if len(users) != 1 || users[0].LocalID != uid || users[0].Email != "ada@example.com" {
		t.Fatalf("users after reopen: %+v", users)
	}
	// Password sign-in still works: the hash was persisted.
	if _, err := authOf(t, sb2).SignInWithPassword(auth.Call{Caller: identity.Anonymous(), Project: "demo-pyric"},
		auth.SignInWithPasswordRequest{Email: ptr("ada@example.com"), Password: "secret1"}); err != nil {
		t.Errorf("sign-in after reopen: %v", err)
	}
	// Reset forgets them on disk too.
	if err := sb2.Reset(); err != nil {
		t.Fatal(err)
	}
	sb2.Close()
	sb3, err := openAuth(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer sb3.Close()
	if users := authOf(t, sb3).Users("demo-pyric", ""); len(users) != 0 {
		t.Errorf("users after reset and reopen: %d", len(users))
	}
}

func TestSnapshotCarriesAuthUsers(t *testing.T) {
	t.Parallel()
	sb, err := openAuth(Options{})
	if err != nil {
		t.Fatal(err)
	}
	uid := signUp(t, sb, "grace@example.com")
	snap, err := sb.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(snap, &raw); err != nil || !strings.Contains(string(raw.Services["auth"]), uid) {
		t.Fatalf("snapshot services: %s (%v)", snap, err)
	}

	dir := t.TempDir()
	sb2, err := openAuth(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb2.LoadSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	sb2.Close()
	sb3, err := openAuth(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer sb3.Close()
	if users := authOf(t, sb3).Users("demo-pyric", ""); len(users) != 1 || users[0].LocalID != uid {
		t.Errorf("users after snapshot load and reopen: %+v", users)
	}

	// A bad auth section is rejected before anything is reset.
	bad := strings.Replace(string(snap), `"localId": "`+uid+`"`, `"localId": ""`, 1)
	if err := sb3.LoadSnapshot([]byte(bad)); err == nil {
		t.Error("snapshot with a user without localId accepted")
	}
	if users := authOf(t, sb3).Users("demo-pyric", ""); len(users) != 1 {
		t.Errorf("failed load changed state: %d users", len(users))
	}
}

func ptr(s string) *string { return &s }

// TestLegacyAuthStateMigrates: a data dir written before the service
// contract (the whole Auth state as one blob) opens with its users, now
// stored record by record.
func TestLegacyAuthStateMigrates(t *testing.T) {
	t.Parallel()
	old := auth.New(auth.Options{})
	email := "old@example.com"
	r, err := old.SignUp(auth.Call{Caller: identity.AdminIdentity(), Project: "demo-pyric"}, auth.SignUpRequest{Email: &email, Password: "secret1"})
	if err != nil {
		t.Fatal(err)
	}
	blob, err := old.MarshalSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Bucket("auth").Update(func(tx service.Tx) error { return tx.Put([]byte("state"), blob) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for range 2 { // migrated once, then read from the records
		sb, err := openAuth(Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		users := authOf(t, sb).Users("demo-pyric", "")
		sb.Close()
		if len(users) != 1 || users[0].LocalID != r.LocalID {
			t.Fatalf("users = %+v", users)
		}
	}
}
