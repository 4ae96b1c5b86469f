package auth_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
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
// after each, opens a second engine on the same bucket: its state must equal
// the live engine's.
func TestDiskMatchesMemory(t *testing.T) {
	b := authtest.TempBolt(t)
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	e, err := auth.Open(auth.Options{Bucket: b, IDs: rand.NewChaCha8([32]byte{7}), Clock: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	var tenantID, aliceToken, aliceRefresh string
	tc := func() auth.Call { c := dAdmin; c.Tenant = tenantID; return c }
	steps := []struct {
		name string
		run  func() error
	}{
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
		{"clear tenant accounts", func() error { return e.ClearAccounts(tc()) }},
		{"tenant delete", func() error { return e.DeleteTenant(tc()) }},
		{"clear accounts", func() error { return e.ClearAccounts(dAdmin) }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		f, err := auth.Open(auth.Options{Bucket: b})
		if err != nil {
			t.Fatalf("%s: reopen: %v", s.name, err)
		}
		if got, want := state(t, f), state(t, e); got != want {
			t.Fatalf("after %s the bucket holds\n%s\nbut memory is\n%s", s.name, got, want)
		}
	}
}

// countingBucket counts the records each Update writes.
type countingBucket struct {
	service.Bucket
	mu     sync.Mutex
	writes []int
}

func (c *countingBucket) Update(fn func(service.Tx) error) error {
	n := 0
	err := c.Bucket.Update(func(tx service.Tx) error { return fn(countingTx{tx, &n}) })
	c.mu.Lock()
	c.writes = append(c.writes, n)
	c.mu.Unlock()
	return err
}

type countingTx struct {
	service.Tx
	n *int
}

func (t countingTx) Put(k, v []byte) error { *t.n++; return t.Tx.Put(k, v) }
func (t countingTx) Delete(k []byte) error { *t.n++; return t.Tx.Delete(k) }

// TestSignUpWritesOnlyItsAccount: a sign-up is one Update with the new
// account's record, however many accounts exist.
func TestSignUpWritesOnlyItsAccount(t *testing.T) {
	cb := &countingBucket{Bucket: authtest.TempBolt(t)}
	e, err := auth.Open(auth.Options{Bucket: cb})
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
		t.Fatalf("sign-up among 1000 accounts wrote %v (updates × records); want one update of its own record", cb.writes)
	}
	cb.writes = nil
	if _, err := e.Lookup(dAdmin, auth.LookupRequest{LocalID: []string{"u0001"}}); err != nil {
		t.Fatal(err)
	}
	if len(cb.writes) != 0 {
		t.Fatalf("a lookup wrote %v", cb.writes)
	}
}

// failingBucket fails every Update once armed.
type failingBucket struct {
	service.Bucket
	fail bool
}

var errDiskFull = errors.New("disk full")

func (f *failingBucket) Update(fn func(service.Tx) error) error {
	if f.fail {
		return errDiskFull
	}
	return f.Bucket.Update(fn)
}

type events struct {
	mu sync.Mutex
	n  int
}

func (r *events) Emit(event.Event) { r.mu.Lock(); r.n++; r.mu.Unlock() }

// TestWriteFailureChangesNothing: when the bucket refuses a write the call
// fails with INTERNAL, memory is as before, and no event is published.
func TestWriteFailureChangesNothing(t *testing.T) {
	fb := &failingBucket{Bucket: authtest.TempBolt(t)}
	rec := &events{}
	e, err := auth.Open(auth.Options{Bucket: fb, Events: rec})
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
			t.Errorf("%s with a failing bucket: err = %v, want INTERNAL wrapping ErrPersist", name, err)
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
		t.Errorf("after the bucket recovered: %v", err)
	}
}

// TestConcurrentSignUpsAllDurable: sign-ups from many goroutines all reach
// the bucket.
func TestConcurrentSignUpsAllDurable(t *testing.T) {
	b := authtest.TempBolt(t)
	e, err := auth.Open(auth.Options{Bucket: b})
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
	f, err := auth.Open(auth.Options{Bucket: b})
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

// TestRestorePersists: Restore replaces the bucket's content too.
func TestRestorePersists(t *testing.T) {
	b := authtest.TempBolt(t)
	e, _ := auth.Open(auth.Options{Bucket: b})
	if _, err := e.SignUp(dAdmin, auth.SignUpRequest{LocalID: "old"}); err != nil {
		t.Fatal(err)
	}
	snap := []byte(`{"version":1,"projects":{"q":{"config":{"signIn":{"allowDuplicateEmails":true}},"users":[{"localId":"new","email":"n@example.com"}],
		"oobCodes":[{"email":"n@example.com","requestType":"PASSWORD_RESET","oobCode":"c1","oobLink":"x"}],"tenants":{"t1":{"config":{"tenantId":"t1"},"users":[{"localId":"tu"}]}}}}}`)
	if err := e.Restore(snap); err != nil {
		t.Fatal(err)
	}
	f, err := auth.Open(auth.Options{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := state(t, f), state(t, e); got != want {
		t.Fatalf("after restore the bucket holds\n%s\nwant\n%s", got, want)
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
	b := authtest.TempBolt(t)
	n := 0
	env := service.Env{Project: "p", Now: time.Now, NewID: func() string { n++; return fmt.Sprintf("%020d", n) }, Events: event.Discard, Bucket: b}
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
