package auth

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type recorder struct{ events []event.Event }

func (r *recorder) Emit(e event.Event) { r.events = append(r.events, e) }

func (r *recorder) ops() string {
	var s []string
	for _, e := range r.events {
		s = append(s, e.Op)
	}
	return strings.Join(s, ",")
}

func newTestEngine() (*Engine, *recorder) {
	rec := &recorder{}
	now := t0
	return New(Options{Clock: func() time.Time { return now }, IDs: rand.NewChaCha8([32]byte{1}), Events: rec}), rec
}

var (
	client = Call{Caller: identity.Anonymous(), Project: "p"}
	admin  = Call{Caller: identity.AdminIdentity(), Project: "p"}
)

func s(v string) *string { return &v }

func TestSignUpAndSignInErrors(t *testing.T) {
	e, _ := newTestEngine()
	if _, err := e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"duplicate email", func() error {
			_, err := e.SignUp(client, SignUpRequest{Email: s("A@EXAMPLE.com"), Password: "secret123"})
			return err
		}, ErrEmailExists},
		{"weak password", func() error {
			_, err := e.SignUp(client, SignUpRequest{Email: s("b@example.com"), Password: "12345"})
			return err
		}, ErrWeakPassword},
		{"invalid email", func() error {
			_, err := e.SignUp(client, SignUpRequest{Email: s("b@"), Password: "secret123"})
			return err
		}, ErrInvalidEmail},
		{"empty email on anonymous sign-up", func() error {
			_, err := e.SignUp(client, SignUpRequest{Email: s("")})
			return err
		}, ErrInvalidEmail},
		{"missing password", func() error {
			_, err := e.SignUp(client, SignUpRequest{Email: s("b@example.com")})
			return err
		}, ErrMissingPassword},
		{"client sets uid", func() error {
			_, err := e.SignUp(client, SignUpRequest{LocalID: "x"})
			return err
		}, badRequest("UNEXPECTED_PARAMETER : User ID")},
		{"unknown email", func() error {
			_, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("z@example.com"), Password: "secret123"})
			return err
		}, ErrEmailNotFound},
		{"wrong password", func() error {
			_, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("a@example.com"), Password: "nope12"})
			return err
		}, ErrInvalidPassword},
		{"no email", func() error {
			_, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Password: "x"})
			return err
		}, ErrMissingEmail},
		{"no password", func() error {
			_, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("a@example.com")})
			return err
		}, ErrMissingPassword},
		{"no project", func() error {
			_, err := e.SignUp(Call{}, SignUpRequest{})
			return err
		}, badRequest("MISSING_PROJECT_ID")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestImprovedEmailPrivacy(t *testing.T) {
	e, _ := newTestEngine()
	_, _ = e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"})
	on := true
	if _, err := e.UpdateEmulatorConfig(admin, EmulatorConfig{EmailPrivacyConfig: &EmailPrivacyConfigPatch{EnableImprovedEmailPrivacy: &on}}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []SignInWithPasswordRequest{{Email: s("z@example.com"), Password: "x"}, {Email: s("a@example.com"), Password: "wrong!"}} {
		if _, err := e.SignInWithPassword(client, req); !errors.Is(err, ErrInvalidLoginCredentials) {
			t.Errorf("%v: err = %v", *req.Email, err)
		}
	}
}

func TestIDTokenShapeAndIdentity(t *testing.T) {
	e, _ := newTestEngine()
	if _, err := e.SignUp(admin, SignUpRequest{LocalID: "u1", Email: s("u1@example.com"), Password: "secret123", DisplayName: "U"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(admin, UpdateRequest{LocalID: "u1", CustomAttributes: s(`{"admin":true,"email":"spoof"}`)}); err != nil {
		t.Fatal(err)
	}
	r, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("u1@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := DecodeJWT(r.IDToken)
	if err != nil {
		t.Fatal(err)
	}
	if j.Header["alg"] != "none" || !strings.HasSuffix(r.IDToken, ".") {
		t.Errorf("header %v / token %s", j.Header, r.IDToken)
	}
	p := j.Payload
	want := map[string]any{"iss": "https://securetoken.google.com/p", "aud": "p", "sub": "u1", "user_id": "u1",
		"email": "u1@example.com", "email_verified": false, "admin": true, "name": "U"}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("claim %s = %v, want %v", k, p[k], v)
		}
	}
	iat, _ := num(p["iat"])
	exp, _ := num(p["exp"])
	if int64(iat) != t0.Unix() || exp-iat != 3600 {
		t.Errorf("iat %v exp %v", iat, exp)
	}
	fb := p["firebase"].(map[string]any)
	if fb["sign_in_provider"] != "password" {
		t.Errorf("firebase = %v", fb)
	}
	id, err := identity.FromAuthorization("Bearer " + r.IDToken)
	if err != nil || id.UID != "u1" || id.Token["admin"] != true {
		t.Errorf("identity = %+v, %v", id, err)
	}
}

func TestRevocationAndRefresh(t *testing.T) {
	now := t0
	e := New(Options{Clock: func() time.Time { return now }})
	r, _ := e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"})
	now = now.Add(2 * time.Second)
	if _, err := e.Update(admin, UpdateRequest{LocalID: r.LocalID, ValidSince: s(itoa(now.Unix()))}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Lookup(client, LookupRequest{IDToken: r.IDToken}); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("revoked token: %v", err)
	}
	// Production: the revoked refresh token mints nothing.
	if _, err := e.GrantToken(client, GrantTokenRequest{GrantType: "refresh_token", RefreshToken: r.RefreshToken}); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("revoked refresh token: %v", err)
	}
	si, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("a@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.GrantToken(client, GrantTokenRequest{GrantType: "refresh_token", RefreshToken: si.RefreshToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Lookup(client, LookupRequest{IDToken: g.IDToken}); err != nil {
		t.Errorf("refreshed token: %v", err)
	}
	r.RefreshToken = si.RefreshToken
	if _, err := e.Update(admin, UpdateRequest{LocalID: r.LocalID, DisableUser: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GrantToken(client, GrantTokenRequest{GrantType: "refresh_token", RefreshToken: r.RefreshToken}); !errors.Is(err, ErrUserDisabled) {
		t.Errorf("disabled refresh: %v", err)
	}
	other := Call{Caller: identity.Anonymous(), Project: "q"}
	if _, err := e.GrantToken(other, GrantTokenRequest{GrantType: "refresh_token", RefreshToken: r.RefreshToken}); !errors.Is(err, ErrInvalidRefreshToken) {
		t.Errorf("refresh in another project: %v", err)
	}
}

func TestEventsAndRedaction(t *testing.T) {
	e, rec := newTestEngine()
	r, _ := e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"})
	_, _ = e.Update(client, UpdateRequest{IDToken: r.IDToken, DisplayName: s("A")})
	_, _ = e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("a@example.com"), Password: "secret123"})
	e.SignOut(client, r.LocalID)
	_, _ = e.Delete(admin, DeleteRequest{LocalID: r.LocalID})
	_ = e.ClearAccounts(admin)
	if got := rec.ops(); got != "user_create,sign_in,user_update,sign_in,sign_out,user_delete,users_clear" {
		t.Errorf("ops = %s", got)
	}
	for _, ev := range rec.events {
		if ev.Kind != event.KindMutation || ev.Service != "auth" || ev.Mutation == nil || ev.Project == "" {
			t.Errorf("event %+v", ev)
		}
		b, _ := json.Marshal(ev)
		if strings.Contains(string(b), "fakeHash") || strings.Contains(string(b), "secret123") {
			t.Errorf("event leaks the password hash: %s", b)
		}
	}
	if rec.events[0].Path != r.LocalID || rec.events[6].Path != "*" {
		t.Errorf("paths %q %q", rec.events[0].Path, rec.events[6].Path)
	}
}

func TestSnapshotRestore(t *testing.T) {
	e, _ := newTestEngine()
	_, _ = e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"})
	_, _ = e.SendOOBCode(client, SendOOBCodeRequest{RequestType: "PASSWORD_RESET", Email: "a@example.com"})
	tn, _ := e.CreateTenant(admin, TenantRequest{DisplayName: s("T"), AllowPasswordSignup: ptr(true)})
	tc := admin
	tc.Tenant = tn.TenantID
	_, _ = e.SignUp(tc, SignUpRequest{LocalID: "tu", Email: s("t@example.com")})
	b, err := e.MarshalSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := newTestEngine()
	if err := f.UnmarshalSnapshot(b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("a@example.com"), Password: "secret123"}); err != nil {
		t.Errorf("sign-in after restore: %v", err)
	}
	codes, _ := f.ListOOBCodes(admin)
	if len(codes.OOBCodes) != 1 {
		t.Errorf("outbox after restore = %v", codes.OOBCodes)
	}
	if u := f.Users("p", tn.TenantID); len(u) != 1 || u[0].LocalID != "tu" {
		t.Errorf("tenant users after restore = %v", u)
	}
	b2, _ := f.MarshalSnapshot()
	if string(b) != string(b2) {
		t.Errorf("snapshot not stable:\n%s\n%s", b, b2)
	}
	if err := f.UnmarshalSnapshot([]byte(`{"projects":{"p":{"users":[{"localId":""}]}}}`)); err == nil {
		t.Error("restored a user without id")
	}
	if len(f.Users("p", "")) != 1 {
		t.Error("a failed restore changed the state")
	}
}

// conformance: auth.oob.verify-email, auth.oob.password-reset, auth.oob.endpoint, auth.signin.email-link
func TestOOBFlows(t *testing.T) {
	e, _ := newTestEngine()
	r, _ := e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"})
	if _, err := e.SendOOBCode(client, SendOOBCodeRequest{RequestType: "VERIFY_AND_CHANGE_EMAIL", IDToken: r.IDToken, NewEmail: "b@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendOOBCode(client, SendOOBCodeRequest{RequestType: "PASSWORD_RESET", Email: "a@example.com", ReturnOOBLink: true}); !errors.Is(err, ErrInsufficientPermission) {
		t.Errorf("client returnOobLink: %v", err)
	}
	codes, _ := e.ListOOBCodes(admin)
	o := codes.OOBCodes[0]
	if !strings.HasPrefix(o.OOBLink, "http://127.0.0.1:9099/emulator/action?mode=verifyAndChangeEmail&lang=en&oobCode=") {
		t.Errorf("link = %s", o.OOBLink)
	}
	up, err := e.Update(client, UpdateRequest{OOBCode: o.OOBCode})
	if err != nil || up.Email != "b@example.com" || !*up.EmailVerified {
		t.Fatalf("apply change: %+v %v", up, err)
	}
	if _, err := e.Update(client, UpdateRequest{OOBCode: o.OOBCode}); !errors.Is(err, ErrInvalidOOBCode) {
		t.Errorf("reuse: %v", err)
	}
}

func TestCustomTokenParsing(t *testing.T) {
	tests := []struct {
		tok, tenant, uid string
		err              string
	}{
		{`{"uid":"a","claims":{"x":1}}`, "", "a", ""},
		{`{"uid":5}`, "", "5", ""},
		{`{"user_id":"b"}`, "", "b", ""},
		{`{}`, "", "", "MISSING_IDENTIFIER"},
		{`{bad`, "", "", "INVALID_CUSTOM_TOKEN"},
		{`{"uid":"a","claims":[]}`, "", "", "INVALID_CLAIMS"},
		{`{"uid":"a","claims":{"aud":1}}`, "", "", "FORBIDDEN_CLAIM"},
		{"garbage", "", "", "INVALID_CUSTOM_TOKEN"},
		{EncodeUnsignedJWT(map[string]any{"uid": "c", "aud": CustomTokenAudience}), "", "c", ""},
		{EncodeUnsignedJWT(map[string]any{"uid": "c", "aud": "other"}), "", "", "INVALID_CUSTOM_TOKEN"},
		{EncodeUnsignedJWT(map[string]any{"uid": "c", "aud": CustomTokenAudience}), "t1", "", "TENANT_ID_MISMATCH"},
		{EncodeUnsignedJWT(map[string]any{"uid": "c", "aud": CustomTokenAudience, "tenant_id": "t1"}), "t1", "c", ""},
		{"", "", "", "MISSING_CUSTOM_TOKEN"},
	}
	for _, tt := range tests {
		ct, err := ParseCustomToken(tt.tok, tt.tenant)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want %s", tt.tok, err, tt.err)
			}
			continue
		}
		if err != nil || ct.UID != tt.uid {
			t.Errorf("%q: %+v, %v", tt.tok, ct, err)
		}
	}
}

func TestRefreshTokenRoundTrip(t *testing.T) {
	r := RefreshToken{LocalID: "u", Provider: "password", ProjectID: "p", TenantID: "t"}
	got, err := DecodeRefreshToken(r.Encode())
	if err != nil || got.LocalID != "u" || got.ProjectID != "p" || got.TenantID != "t" || got.Marker != "DO NOT MODIFY" {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"", "abc", "e30=", "bnVsbA=="} {
		if _, err := DecodeRefreshToken(bad); !errors.Is(err, ErrInvalidRefreshToken) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzDecodeJWT(f *testing.F) {
	f.Add(EncodeUnsignedJWT(map[string]any{"sub": "a"}))
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoieCJ9.")
	f.Fuzz(func(t *testing.T, s string) {
		j, err := DecodeJWT(s)
		if err == nil && j.Header == nil {
			t.Fatal("decoded without header")
		}
	})
}

func FuzzParseCustomToken(f *testing.F) {
	f.Add(`{"uid":"a","claims":{"x":1}}`, "")
	f.Add(EncodeUnsignedJWT(map[string]any{"uid": "c", "aud": CustomTokenAudience, "tenant_id": "t"}), "t")
	f.Fuzz(func(t *testing.T, tok, tenant string) {
		ct, err := ParseCustomToken(tok, tenant)
		if err == nil && ct.UID == "" {
			t.Fatal("token without uid accepted")
		}
	})
}

func FuzzDecodeRefreshToken(f *testing.F) {
	f.Add(RefreshToken{LocalID: "u", ProjectID: "p"}.Encode())
	f.Add("eyJfQXV0aEVtdWxhdG9yUmVmcmVzaFRva2VuIjp0cnVlfQ")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := DecodeRefreshToken(s)
		if err == nil && r.Marker == "" && r.LocalID == "" && r.ProjectID == "" {
			_ = r // a truthy marker that is not a string is accepted, as by the emulator
		}
	})
}

// FuzzEngine runs random operation sequences; no input may panic.
func FuzzEngine(f *testing.F) {
	f.Add("a@example.com", "secret123", "A", `{"x":1}`, "PASSWORD_RESET")
	f.Fuzz(func(t *testing.T, email, password, name, claims, reqType string) {
		e, _ := newTestEngine()
		r, err := e.SignUp(client, SignUpRequest{Email: &email, Password: password, DisplayName: name})
		tok := ""
		if err == nil {
			tok = r.IDToken
		}
		_, _ = e.SignUp(admin, SignUpRequest{LocalID: name, Email: &email, Password: password})
		_, _ = e.Update(admin, UpdateRequest{LocalID: name, CustomAttributes: &claims, Email: email})
		_, _ = e.Update(client, UpdateRequest{IDToken: tok, DisplayName: &name, Password: password})
		_, _ = e.SendOOBCode(client, SendOOBCodeRequest{RequestType: reqType, Email: email, IDToken: tok, NewEmail: name})
		_, _ = e.SignInWithCustomToken(client, SignInWithCustomTokenRequest{Token: claims})
		_, _ = e.SignInWithIdp(client, SignInWithIdpRequest{RequestURI: "http://localhost", PostBody: "providerId=" + reqType + "&id_token=" + claims, IDToken: tok})
		_, _ = e.GrantToken(client, GrantTokenRequest{GrantType: "refresh_token", RefreshToken: claims})
		_, _ = e.CreateSessionCookie(admin, CreateSessionCookieRequest{IDToken: tok, ValidDuration: password})
		if _, err := e.MarshalSnapshot(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPrefixedRandomIsConcatenation: a salt written with its prefix in
// one allocation is the prefix and the random string the same source
// gives, byte for byte (seeded ids and salts stay what they were).
func TestPrefixedRandomIsConcatenation(t *testing.T) {
	a := New(Options{IDs: rand.NewChaCha8([32]byte{3})})
	b := New(Options{IDs: rand.NewChaCha8([32]byte{3})})
	for range 50 {
		if got, want := a.newSalt(), "fakeSalt"+b.randomString(20, alnum); got != want {
			t.Fatalf("salt %q, want %q", got, want)
		}
		if got, want := a.randomString(28, alnum), b.randomString(28, alnum); got != want {
			t.Fatalf("id %q, want %q", got, want)
		}
	}
}
