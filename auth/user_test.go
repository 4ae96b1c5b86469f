package auth_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/server/auth/authtest"
)

// TestUserJSONMatchesReflection: User's JSON, written directly, is the
// bytes encoding/json writes for its fields (providerUserInfo last,
// present when not nil), over accounts with every field empty and set,
// HTML characters, non-ASCII text and invalid UTF-8.
func TestUserJSONMatchesReflection(t *testing.T) {
	type plain auth.User
	reflected := func(u auth.User) string {
		var p any
		if u.ProviderUserInfo != nil {
			p = u.ProviderUserInfo
		}
		b, err := json.Marshal(struct {
			plain
			ProviderUserInfo any `json:"providerUserInfo,omitempty"`
		}{plain(u), p})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	yes, no := true, false
	users := []auth.User{
		{},
		{LocalID: "a"},
		{LocalID: "a", ProviderUserInfo: []auth.ProviderUserInfo{}},
		{LocalID: "u<1>&\"q\"\\", Email: "é@example.com", EmailVerified: &no, DisplayName: "Ann <b>", PhotoURL: "http://x/?a=1&b=2",
			PhoneNumber: "+1555", ScreenName: "s\x01", PasswordHash: "fakeHash:salt=x:password=p", Salt: "x", PasswordUpdatedAt: 1796083200000,
			ValidSince: "1796083200", Disabled: &yes, CreatedAt: "1", LastLoginAt: "2", LastRefreshAt: "2026-12-01T00:00:00.000Z",
			CustomAttributes: `{"admin":true}`, CustomAuth: true, EmailLinkSignin: true, InitialEmail: "i@example.com", TenantID: "t-1",
			ProviderUserInfo: []auth.ProviderUserInfo{{ProviderID: "password", Email: "é@example.com", FederatedID: "f", RawID: "r"},
				{ProviderID: "google.com", DisplayName: "D", PhotoURL: "p", ScreenName: "sn", PhoneNumber: "+1"}},
			MFAInfo: []auth.MFAEnrollment{{MFAEnrollmentID: "m", PhoneInfo: "+1555", TOTPInfo: &auth.TOTPInfo{}}}},
		{LocalID: "bad\xffutf8\u2028", DisplayName: "\x7f\u00e9\U0001F600", PasswordUpdatedAt: -5},
	}
	for _, u := range users {
		got, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if want := reflected(u); string(got) != want {
			t.Errorf("User JSON\n got %s\nwant %s", got, want)
		}
		if app := string(u.AppendJSON([]byte("x"))); app != "x"+string(got) {
			t.Errorf("AppendJSON %s, MarshalJSON %s", app, got)
		}
	}
}

// frozenEvents keeps each event's accounts with their JSON when emitted.
type frozenEvents struct {
	mu      sync.Mutex
	users   []*auth.User
	encoded []string
	names   []string
}

func (f *frozenEvents) Emit(ev event.Event) {
	if ev.Mutation == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range []any{ev.Mutation.Previous, ev.Mutation.Current} {
		if u, ok := v.(*auth.User); ok && u != nil {
			b, _ := json.Marshal(u)
			f.users, f.encoded, f.names = append(f.users, u), append(f.encoded, string(b)), append(f.names, ev.Method)
		}
	}
}

// TestEventAccountsStayAsEmitted: the accounts an event carries share
// their lists with the stored account (User.Redacted), so no mutation may
// change a stored account in place: after every kind of mutation, each
// event's accounts still encode as they did when it was emitted, without
// a password hash.
func TestEventAccountsStayAsEmitted(t *testing.T) {
	rec := &frozenEvents{}
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	e, err := auth.Open(auth.Options{Log: authtest.TempLog(t), IDs: rand.NewChaCha8([32]byte{7}), Clock: func() time.Time { return clock }, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range everyMutation(e) {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		clock = clock.Add(time.Second)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.users) < 10 {
		t.Fatalf("only %d accounts in events", len(rec.users))
	}
	for i, u := range rec.users {
		b, _ := json.Marshal(u)
		if string(b) != rec.encoded[i] {
			t.Errorf("a %s event's account changed after it was emitted:\n%s\nwas\n%s", rec.names[i], b, rec.encoded[i])
		}
		if u.PasswordHash != "" || u.Salt != "" {
			t.Errorf("a %s event carries a password hash", rec.names[i])
		}
	}
}

// TestLookupAnswerIsTheCallers: the accounts Lookup returns are the
// caller's to change (fields set, lists replaced or appended to; their
// elements are shared, read-only): the account stays as stored.
func TestLookupAnswerIsTheCallers(t *testing.T) {
	e, err := auth.Open(auth.Options{Log: authtest.TempLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("a@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	lookup := func() *auth.User {
		res, err := e.Lookup(dAdmin, auth.LookupRequest{LocalID: []string{r.LocalID}})
		if err != nil || len(res.Users) != 1 {
			t.Fatalf("lookup: %v, %v", res, err)
		}
		return res.Users[0]
	}
	before, _ := json.Marshal(lookup())
	u := lookup()
	u.DisplayName, u.PasswordHash = "changed", ""
	u.ProviderUserInfo = append(u.ProviderUserInfo, auth.ProviderUserInfo{ProviderID: "phone"})
	u.MFAInfo = nil
	if after, _ := json.Marshal(lookup()); string(after) != string(before) {
		t.Errorf("changing a lookup's answer changed the account:\n%s\nwas\n%s", after, before)
	}
}

// TestLookupAnswersEachAccountOnce: a lookup answers the accounts it
// names once each, in order, the first in the answer's own allocation:
// each answer is its own (one changed, or its list appended to, leaves
// the next answer and the stored account as they were).
func TestLookupAnswersEachAccountOnce(t *testing.T) {
	e, err := auth.Open(auth.Options{Log: authtest.TempLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("a@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("b@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(r *auth.LookupResponse) (out []string) {
		for _, u := range r.Users {
			out = append(out, u.LocalID+" "+u.Email)
		}
		return out
	}
	want := []string{a.LocalID + " a@example.com", b.LocalID + " b@example.com"}
	for range 2 {
		r, err := e.Lookup(dAdmin, auth.LookupRequest{LocalID: []string{a.LocalID, b.LocalID, a.LocalID, "nobody"}, Email: []string{"b@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(r); !slices.Equal(got, want) {
			t.Fatalf("lookup answered %q, want %q", got, want)
		}
		r.Users[0].Email = "changed@example.com"
		r.Users = append(r.Users, &auth.User{LocalID: "extra"})
		r.Users[1].Email = "changed too"
	}
	r, err := e.Lookup(dClient, auth.LookupRequest{IDToken: a.IDToken})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("lookup by ID token answered %q", got)
	}
}
