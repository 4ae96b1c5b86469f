package auth_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
	"github.com/pyric/pyric/server/auth/authtest"
)

var (
	dAdmin  = auth.Call{Caller: identity.AdminIdentity(), Project: "p"}
	dClient = auth.Call{Caller: identity.Anonymous(), Project: "p"}
)

func sp(s string) *string { return &s }

func state(t *testing.T, e *auth.Engine) string {
	t.Helper()
	b, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDiskMatchesMemory runs every kind of mutation on a durable engine and,
// after each, opens a second engine on the same log: its state must equal
// the live engine's.
func TestDiskMatchesMemory(t *testing.T) {
	b := authtest.TempLog(t)
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	e, err := auth.Open(auth.Options{Log: b, IDs: rand.NewChaCha8([32]byte{7}), Clock: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range everyMutation(e) {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		f, err := auth.Open(auth.Options{Log: b})
		if err != nil {
			t.Fatalf("%s: reopen: %v", s.name, err)
		}
		if got, want := state(t, f), state(t, e); got != want {
			t.Fatalf("after %s the log holds\n%s\nbut memory is\n%s", s.name, got, want)
		}
	}
}

// mutationStep is one step of everyMutation.
type mutationStep struct {
	name string
	run  func() error
}

// everyMutation is a run of every kind of mutation on e, one step each,
// for the tests that check what each leaves (in the log, in a capture).
func everyMutation(e *auth.Engine) []mutationStep {
	var tenantID, aliceToken, aliceRefresh string
	tc := func() auth.Call { c := dAdmin; c.Tenant = tenantID; return c }
	return []mutationStep{
		{"anonymous sign-up", func() error { _, err := e.SignUp(dClient, auth.SignUpRequest{}); return err }},
		{"password sign-up", func() error {
			r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("alice@example.com"), Password: "secret123"})
			if err == nil {
				aliceToken, aliceRefresh = r.IDToken, r.RefreshToken
			}
			return err
		}},
		{"sign-in", func() error {
			_, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("alice@example.com"), Password: "secret123"})
			return err
		}},
		{"refresh", func() error {
			_, err := e.GrantToken(dClient, auth.GrantTokenRequest{GrantType: "refresh_token", RefreshToken: aliceRefresh})
			return err
		}},
		{"profile update", func() error {
			_, err := e.Update(dClient, auth.UpdateRequest{IDToken: aliceToken, DisplayName: sp("Alice")})
			return err
		}},
		{"admin create", func() error {
			_, err := e.SignUp(dAdmin, auth.SignUpRequest{LocalID: "bob", Email: sp("bob@example.com"), PhoneNumber: "+15550001"})
			return err
		}},
		{"claims", func() error {
			_, err := e.Update(dAdmin, auth.UpdateRequest{LocalID: "bob", CustomAttributes: sp(`{"admin":true}`)})
			return err
		}},
		{"custom token", func() error {
			_, err := e.SignInWithCustomToken(dClient, auth.SignInWithCustomTokenRequest{Token: `{"uid":"carol"}`})
			return err
		}},
		{"idp", func() error {
			_, err := e.SignInWithIdp(dClient, auth.SignInWithIdpRequest{RequestURI: "http://localhost",
				PostBody: `providerId=google.com&id_token={"sub":"g1","email":"g@example.com"}`})
			return err
		}},
		{"reset code", func() error {
			_, err := e.SendOOBCode(dClient, auth.SendOOBCodeRequest{RequestType: "PASSWORD_RESET", Email: "alice@example.com"})
			return err
		}},
		{"second code", func() error {
			_, err := e.SendOOBCode(dClient, auth.SendOOBCodeRequest{RequestType: "EMAIL_SIGNIN", Email: "dave@example.com"})
			return err
		}},
		{"use reset code", func() error {
			codes, err := e.ListOOBCodes(dAdmin)
			if err != nil {
				return err
			}
			_, err = e.ResetPassword(dClient, auth.ResetPasswordRequest{OOBCode: codes.OOBCodes[0].OOBCode, NewPassword: "another1"})
			return err
		}},
		{"config", func() error {
			_, err := e.UpdateEmulatorConfig(dAdmin, auth.EmulatorConfig{SignIn: &auth.SignInConfigPatch{AllowDuplicateEmails: auth.Ptr(true)}})
			return err
		}},
		{"tenant create", func() error {
			tn, err := e.CreateTenant(dAdmin, auth.TenantRequest{DisplayName: sp("T"), AllowPasswordSignup: auth.Ptr(true)})
			if err == nil {
				tenantID = tn.TenantID
			}
			return err
		}},
		{"tenant patch", func() error {
			_, err := e.UpdateTenant(tc(), auth.TenantRequest{DisplayName: sp("T2")}, "displayName")
			return err
		}},
		{"tenant user", func() error {
			_, err := e.SignUp(tc(), auth.SignUpRequest{LocalID: "tu", Email: sp("t@example.com")})
			return err
		}},
		{"import", func() error {
			_, err := e.BatchCreate(dAdmin, auth.BatchCreateRequest{Users: []auth.ImportUser{{LocalID: "i1", Email: "i1@example.com"}, {LocalID: "i2"}}})
			return err
		}},
		{"batch delete", func() error {
			_, err := e.BatchDelete(dAdmin, auth.BatchDeleteRequest{LocalIDs: []string{"i1"}, Force: true})
			return err
		}},
		{"delete", func() error { _, err := e.Delete(dAdmin, auth.DeleteRequest{LocalID: "bob"}); return err }},
		{"phone code", func() error {
			_, err := e.SendVerificationCode(dClient, auth.SendVerificationCodeRequest{PhoneNumber: "+15550009"})
			return err
		}},
		{"phone sign-in", func() error {
			codes, err := e.ListVerificationCodes(dAdmin)
			if err != nil {
				return err
			}
			c := codes.VerificationCodes[0]
			_, err = e.SignInWithPhoneNumber(dClient, auth.SignInWithPhoneNumberRequest{SessionInfo: c.SessionInfo, Code: c.Code})
			return err
		}},
		{"mfa user", func() error {
			_, err := e.SignUp(dAdmin, auth.SignUpRequest{LocalID: "mfa", Email: sp("m@example.com"), Password: "secret123", EmailVerified: true,
				MFAInfo: []auth.MFAEnrollment{{PhoneInfo: "+15550077", DisplayName: "p"}}})
			return err
		}},
		{"totp start", func() error {
			c := dClient
			if _, err := e.UpdateConfig(dAdmin, auth.ConfigPatch{MFA: &auth.ProjectMFAConfig{ProviderConfigs: []auth.MFAProviderConfig{
				{State: "ENABLED", TOTPProviderConfig: &auth.TOTPProviderConfig{AdjacentIntervals: 1}}}}}, "mfa"); err != nil {
				return err
			}
			r, err := e.SignUp(c, auth.SignUpRequest{Email: sp("totp@example.com"), Password: "secret123"})
			if err != nil {
				return err
			}
			if _, err := e.Update(dAdmin, auth.UpdateRequest{LocalID: r.LocalID, EmailVerified: auth.Ptr(true)}); err != nil {
				return err
			}
			si, err := e.SignInWithPassword(c, auth.SignInWithPasswordRequest{Email: sp("totp@example.com"), Password: "secret123"})
			if err != nil {
				return err
			}
			_, err = e.MFAEnrollmentStart(c, auth.MFAEnrollmentStartRequest{IDToken: si.IDToken, TOTPEnrollmentInfo: &struct{}{}})
			return err
		}},
		{"oidc config", func() error {
			_, err := e.CreateIdpConfig(dAdmin, auth.OAuthIdp, "oidc.x", map[string]any{"clientId": "c", "enabled": true})
			return err
		}},
		{"saml config patch", func() error {
			if _, err := e.CreateIdpConfig(dAdmin, auth.SAMLIdp, "saml.y", map[string]any{"idpConfig": map[string]any{"idpEntityId": "e"}}); err != nil {
				return err
			}
			_, err := e.UpdateIdpConfig(dAdmin, auth.SAMLIdp, "saml.y", map[string]any{"idpConfig": map[string]any{"ssoUrl": "https://s"}}, "idpConfig.ssoUrl")
			return err
		}},
		{"oidc delete", func() error { return e.DeleteIdpConfig(dAdmin, auth.OAuthIdp, "oidc.x") }},
		{"auto tenant", func() error { c := dAdmin; c.Tenant = "auto"; _, err := e.GetTenant(c); return err }},
		{"sign-in after configs", func() error {
			_, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("alice@example.com"), Password: "another1"})
			return err
		}},
		{"clear tenant accounts", func() error { return e.ClearAccounts(tc()) }},
		{"tenant delete", func() error { return e.DeleteTenant(tc()) }},
		{"clear accounts", func() error { return e.ClearAccounts(dAdmin) }},
	}
}

// countingLog counts the records each Append writes.
type countingLog struct {
	service.Log
	mu     sync.Mutex
	writes []int
}

func (c *countingLog) Append(space string, changes []service.LogChange) error {
	c.mu.Lock()
	c.writes = append(c.writes, len(changes))
	c.mu.Unlock()
	return c.Log.Append(space, changes)
}

// TestSignUpWritesOnlyItsAccount: a sign-up is one Append with the new
// account's record, however many accounts exist, and a sign-in (which
// stamps the account twice) writes its record once.
func TestSignUpWritesOnlyItsAccount(t *testing.T) {
	cb := &countingLog{Log: authtest.TempLog(t)}
	e, err := auth.Open(auth.Options{Log: cb})
	if err != nil {
		t.Fatal(err)
	}
	users := make([]auth.ImportUser, 1000)
	for i := range users {
		users[i] = auth.ImportUser{LocalID: fmt.Sprintf("u%04d", i), Email: fmt.Sprintf("u%d@example.com", i)}
	}
	if _, err := e.BatchCreate(dAdmin, auth.BatchCreateRequest{Users: users}); err != nil {
		t.Fatal(err)
	}
	cb.writes = nil
	if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("new@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	if len(cb.writes) != 1 || cb.writes[0] > 2 {
		t.Fatalf("sign-up among 1000 accounts wrote %v (appends × records); want one append of its own record", cb.writes)
	}
	cb.writes = nil
	if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("new@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	if len(cb.writes) != 1 || cb.writes[0] != 1 {
		t.Fatalf("a sign-in wrote %v (appends × records); want one append of its account", cb.writes)
	}
	cb.writes = nil
	if _, err := e.Lookup(dAdmin, auth.LookupRequest{LocalID: []string{"u0001"}}); err != nil {
		t.Fatal(err)
	}
	if len(cb.writes) != 0 {
		t.Fatalf("a lookup wrote %v", cb.writes)
	}
}

// failingLog fails every Append once armed.
type failingLog struct {
	service.Log
	fail bool
}

var errDiskFull = errors.New("disk full")

func (f *failingLog) Append(space string, changes []service.LogChange) error {
	if f.fail {
		return errDiskFull
	}
	return f.Log.Append(space, changes)
}

type events struct {
	mu sync.Mutex
	n  int
}

func (r *events) Emit(event.Event) { r.mu.Lock(); r.n++; r.mu.Unlock() }

// TestWriteFailureChangesNothing: when the log refuses a write the call
// fails with INTERNAL, memory is as before, and no event is published.
func TestWriteFailureChangesNothing(t *testing.T) {
	fb := &failingLog{Log: authtest.TempLog(t)}
	rec := &events{}
	e, err := auth.Open(auth.Options{Log: fb, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("a@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	tn, err := e.CreateTenant(dAdmin, auth.TenantRequest{DisplayName: sp("T")})
	if err != nil {
		t.Fatal(err)
	}
	before, evBefore := state(t, e), rec.n
	fb.fail = true
	tcall := dAdmin
	tcall.Tenant = tn.TenantID
	ops := map[string]func() error{
		"sign-up": func() error {
			_, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("b@example.com"), Password: "secret123"})
			return err
		},
		"sign-in": func() error {
			_, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("a@example.com"), Password: "secret123"})
			return err
		},
		"oob": func() error {
			_, err := e.SendOOBCode(dClient, auth.SendOOBCodeRequest{RequestType: "PASSWORD_RESET", Email: "a@example.com"})
			return err
		},
		"tenant patch": func() error {
			_, err := e.UpdateTenant(tcall, auth.TenantRequest{DisplayName: sp("X"), MFAConfig: &auth.MFAConfig{State: "ENABLED"}}, "")
			return err
		},
		"tenant delete": func() error { return e.DeleteTenant(tcall) },
		"clear":         func() error { return e.ClearAccounts(dAdmin) },
		"config": func() error {
			_, err := e.UpdateConfig(dAdmin, auth.ConfigPatch{}, "")
			return err
		},
	}
	for name, op := range ops {
		err := op()
		var ae *auth.Error
		if !errors.As(err, &ae) || ae.HTTP != 500 || !errors.Is(err, auth.ErrPersist) {
			t.Errorf("%s with a failing log: err = %v, want INTERNAL wrapping ErrPersist", name, err)
		}
		if got := state(t, e); got != before {
			t.Errorf("%s: memory changed although the write failed:\n%s\nwas\n%s", name, got, before)
		}
	}
	if rec.n != evBefore {
		t.Errorf("%d events published for failed writes", rec.n-evBefore)
	}
	fb.fail = false
	if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("a@example.com"), Password: "secret123"}); err != nil {
		t.Errorf("after the log recovered: %v", err)
	}
}

// TestConcurrentSignUpsAllDurable: sign-ups from many goroutines all reach
// the log.
func TestConcurrentSignUpsAllDurable(t *testing.T) {
	b := authtest.TempLog(t)
	e, err := auth.Open(auth.Options{Log: b})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	uids := make(chan string, 8*20)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp(fmt.Sprintf("w%d-%d@example.com", w, i)), Password: "secret123"})
				if err != nil {
					t.Error(err)
					return
				}
				uids <- r.LocalID
			}
		}()
	}
	wg.Wait()
	close(uids)
	f, err := auth.Open(auth.Options{Log: b})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, u := range f.Users("p", "") {
		have[u.LocalID] = true
	}
	n := 0
	for uid := range uids {
		n++
		if !have[uid] {
			t.Errorf("acknowledged user %s missing after reopen", uid)
		}
	}
	if n != 160 || len(have) != 160 {
		t.Errorf("acknowledged %d, stored %d", n, len(have))
	}
}

// TestRestorePersists: Restore replaces the log's content too.
func TestRestorePersists(t *testing.T) {
	b := authtest.TempLog(t)
	e, _ := auth.Open(auth.Options{Log: b})
	if _, err := e.SignUp(dAdmin, auth.SignUpRequest{LocalID: "old"}); err != nil {
		t.Fatal(err)
	}
	snap := []byte(`{"version":1,"projects":{"q":{"config":{"signIn":{"allowDuplicateEmails":true}},"users":[{"localId":"new","email":"n@example.com"}],
		"oobCodes":[{"email":"n@example.com","requestType":"PASSWORD_RESET","oobCode":"c1","oobLink":"x"}],"tenants":{"t1":{"config":{"tenantId":"t1"},"users":[{"localId":"tu"}]}}}}}`)
	if err := e.Restore(snap); err != nil {
		t.Fatal(err)
	}
	f, err := auth.Open(auth.Options{Log: b})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := state(t, f), state(t, e); got != want {
		t.Fatalf("after restore the log holds\n%s\nwant\n%s", got, want)
	}
	if !bytes.Contains([]byte(state(t, f)), []byte(`"localId":"tu"`)) || len(f.Users("p", "")) != 0 {
		t.Fatalf("restored state wrong: %s", state(t, f))
	}
	var bad json.RawMessage = []byte(`{"projects":{"q":{"users":[{"localId":""}]}}}`)
	if err := e.Restore(bad); err == nil {
		t.Fatal("restored an invalid snapshot")
	}
}

// TestRegistrationFactory: the sandbox's Factory builds a durable engine from
// an Env and reloads it.
func TestRegistrationFactory(t *testing.T) {
	b := authtest.TempLog(t)
	n := 0
	env := service.Env{Project: "p", Now: time.Now, NewID: func() string { n++; return fmt.Sprintf("%020d", n) }, Events: event.Discard,
		Bucket: b.Store.Bucket("auth"), Log: b}
	svc, err := auth.Registration.New(env)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Name() != "auth" {
		t.Fatalf("name %q", svc.Name())
	}
	e := svc.(service.Wrapper).Unwrap().(*auth.Engine)
	if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("a@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	n = 0
	svc2, err := auth.Registration.New(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc2.(service.Wrapper).Unwrap().(*auth.Engine).SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("a@example.com"), Password: "secret123"}); err != nil {
		t.Fatalf("sign-in after reopen: %v", err)
	}
	if err := svc2.Reset(); err != nil || len(svc2.(service.Wrapper).Unwrap().(*auth.Engine).Users("p", "")) != 0 {
		t.Fatalf("reset: %v", err)
	}
}

// TestRegistrationMovesBucketRecords: a data dir of a version that kept
// the records in the bucket opens with them, moved to the log: the bucket
// is left empty and the accounts survive the next start.
func TestRegistrationMovesBucketRecords(t *testing.T) {
	b := authtest.TempLog(t)
	bucket := b.Store.Bucket("auth")
	part := func(k []byte, s string) []byte { return append(binary.AppendUvarint(k, uint64(len(s))), s...) }
	userKey := part(part(part(part([]byte{'s'}, "p"), ""), "u"), "old1")
	user := `{"localId":"old1","email":"old@example.com","passwordHash":"fakeHash:salt=s1:password=secret123","salt":"s1",` +
		`"providerUserInfo":[{"providerId":"password","email":"old@example.com","federatedId":"old@example.com","rawId":"old@example.com"}]}`
	if err := bucket.Update(func(tx service.Tx) error {
		if err := tx.Put(part([]byte{'c'}, "p"), []byte(`{"signIn":{"allowDuplicateEmails":false}}`)); err != nil {
			return err
		}
		return tx.Put(userKey, []byte(user))
	}); err != nil {
		t.Fatal(err)
	}
	env := service.Env{Project: "p", Now: time.Now, Events: event.Discard, Bucket: bucket, Log: b}
	for start := range 2 {
		svc, err := auth.Registration.New(env)
		if err != nil {
			t.Fatal(err)
		}
		e := svc.(service.Wrapper).Unwrap().(*auth.Engine)
		if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("old@example.com"), Password: "secret123"}); err != nil {
			t.Fatalf("start %d: sign-in with the moved account: %v", start, err)
		}
		left := 0
		if err := bucket.View(func(tx service.Tx) error {
			return tx.ForEach(nil, func(k, v []byte) error { left++; return nil })
		}); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Fatalf("start %d: %d records left in the bucket", start, left)
		}
	}
}

// TestLoadDecodesInsideLoad opens an engine on a log whose values are
// valid only while Load's callback runs (servicetest.Log overwrites them
// afterwards, as the store's mapped bytes are): every record must be
// decoded there, so the reopened engine's state equals the first one's.
func TestLoadDecodesInsideLoad(t *testing.T) {
	l := servicetest.NewLog()
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	e, err := auth.Open(auth.Options{Log: l, IDs: rand.NewChaCha8([32]byte{9}), Clock: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("erin@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendOOBCode(dClient, auth.SendOOBCodeRequest{RequestType: "PASSWORD_RESET", Email: "erin@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateTenant(dAdmin, auth.TenantRequest{DisplayName: sp("T"), AllowPasswordSignup: auth.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	want := state(t, e)
	again, err := auth.Open(auth.Options{Log: l, IDs: rand.NewChaCha8([32]byte{9}), Clock: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	if got := state(t, again); got != want {
		t.Fatalf("reopened state differs:\n got %s\nwant %s", got, want)
	}
}

// keptLog keeps a copy of each Append's changes.
type keptLog struct {
	service.Log
	appends [][]service.LogChange
}

func (k *keptLog) Append(space string, changes []service.LogChange) error {
	own := make([]service.LogChange, len(changes))
	for i, c := range changes {
		own[i] = c
		own[i].Value = append([]byte(nil), c.Value...)
	}
	k.appends = append(k.appends, own)
	return k.Log.Append(space, changes)
}

// TestAppendsCarryOnlyTheirRecords: the journal reuses its slice of log
// changes from one mutation to the next; each append still carries its
// own records only, with their values, none of an earlier mutation's.
func TestAppendsCarryOnlyTheirRecords(t *testing.T) {
	kl := &keptLog{Log: authtest.TempLog(t)}
	e, err := auth.Open(auth.Options{Log: kl})
	if err != nil {
		t.Fatal(err)
	}
	users := make([]auth.ImportUser, 5)
	for i := range users {
		users[i] = auth.ImportUser{LocalID: fmt.Sprintf("u%d", i), Email: fmt.Sprintf("u%d@example.com", i)}
	}
	if _, err := e.BatchCreate(dAdmin, auth.BatchCreateRequest{Users: users}); err != nil {
		t.Fatal(err)
	}
	r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("new@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("new@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range kl.appends[1:] {
		if len(a) != 1 || !strings.HasSuffix(a[0].Key, r.LocalID) || !strings.Contains(string(a[0].Value), `"email":"new@example.com"`) {
			t.Errorf("an append after the batch carried %d changes: %+v", len(a), a)
		}
	}
}
