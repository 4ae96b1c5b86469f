package auth

import (
	"errors"
	"testing"
	"time"
)

func phoneSignIn(t *testing.T, e *Engine, c Call, phone, idToken string) *SignInWithPhoneNumberResponse {
	t.Helper()
	s, err := e.SendVerificationCode(c, SendVerificationCodeRequest{PhoneNumber: phone})
	if err != nil {
		t.Fatal(err)
	}
	codes, _ := e.ListVerificationCodes(admin)
	var code string
	for _, vc := range codes.VerificationCodes {
		if vc.SessionInfo == s.SessionInfo {
			code = vc.Code
		}
	}
	r, err := e.SignInWithPhoneNumber(c, SignInWithPhoneNumberRequest{SessionInfo: s.SessionInfo, Code: code, IDToken: idToken})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPhoneLinkTakenGivesTemporaryProof(t *testing.T) {
	e, _ := newTestEngine()
	first := phoneSignIn(t, e, client, "+15550100", "")
	if first.IsNewUser == nil || !*first.IsNewUser || first.IDToken == "" {
		t.Fatalf("first = %+v", first)
	}
	other, _ := e.SignUp(client, SignUpRequest{Email: s("o@example.com"), Password: "secret123"})
	r := phoneSignIn(t, e, client, "+15550100", other.IDToken)
	if r.TemporaryProof == "" || r.IDToken != "" {
		t.Fatalf("link to a taken number = %+v", r)
	}
	p, err := e.SignInWithPhoneNumber(client, SignInWithPhoneNumberRequest{TemporaryProof: r.TemporaryProof, PhoneNumber: "+15550100"})
	if err != nil || p.LocalID != first.LocalID {
		t.Fatalf("sign-in with the proof = %+v, %v", p, err)
	}
}

// FuzzParsePending: any pending credential is an error or a user, never a panic.
func FuzzParsePending(f *testing.F) {
	f.Add("eyJfQXV0aEVtdWxhdG9yTWZhUGVuZGluZ0NyZWRlbnRpYWwiOiJETyBOT1QgTU9ESUZZIiwibG9jYWxJZCI6InUiLCJwcm9qZWN0SWQiOiJwIn0=")
	f.Add("not base64")
	f.Add("e30=")
	e, _ := newTestEngine()
	_, _ = e.SignUp(admin, SignUpRequest{LocalID: "u"})
	f.Fuzz(func(t *testing.T, cred string) {
		_, _ = e.MFASignInStart(client, MFASignInStartRequest{MFAPendingCredential: cred, MFAEnrollmentID: "x"})
		_, _ = e.MFASignInFinalize(client, MFASignInFinalizeRequest{MFAPendingCredential: cred, TOTPVerificationInfo: &TOTPVerificationInfo{VerificationCode: cred}})
	})
}

// FuzzSplitKey: bucket keys decode or fail cleanly, and encoding round-trips.
func FuzzSplitKey(f *testing.F) {
	f.Add([]byte{'s', 1, 'p', 0, 1, 'u', 2, 'a', 'b'}, "p", "t", "id")
	f.Add([]byte{'s', 0xff}, "", "", "")
	f.Fuzz(func(t *testing.T, k []byte, p, tn, id string) {
		_, _, _ = splitKey(k)
		kind, parts, err := splitKey(userKey(p, tn, id))
		if err != nil || kind != 's' || len(parts) != 4 || parts[0] != p || parts[1] != tn || parts[2] != kindUser || parts[3] != id {
			t.Fatalf("round trip %q %q %q: %c %q %v", p, tn, id, kind, parts, err)
		}
	})
}

func TestTOTPCodeRFC6238(t *testing.T) {
	// RFC 6238 appendix B, SHA-1, secret "12345678901234567890", 8 digits
	// truncated to 6: T=59 -> 94287082 -> 287082.
	secret := "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	if got := totpCode(secret, time.Unix(59, 0)); got != "287082" {
		t.Errorf("totp(59) = %s", got)
	}
	if got := totpCode(secret, time.Unix(1111111109, 0)); got != "081804" {
		t.Errorf("totp(1111111109) = %s", got)
	}
}

func TestSignInMethodSwitches(t *testing.T) {
	e, _ := newTestEngine()
	off := SignInConfigPatch{Email: &EmailSignIn{Enabled: false}, Anonymous: &Toggle{Enabled: false},
		PhoneNumber: &PhoneSignIn{Enabled: true, TestPhoneNumbers: map[string]string{"+15550123": "424242"}}}
	if _, err := e.UpdateConfig(admin, ConfigPatch{SignIn: &off}, "signIn"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SignUp(client, SignUpRequest{}); err == nil || err.Error() != "ADMIN_ONLY_OPERATION" {
		t.Errorf("anonymous sign-up with anonymous off: %v", err)
	}
	if _, err := e.SignUp(client, SignUpRequest{Email: s("a@example.com"), Password: "secret123"}); !errors.Is(err, ErrOperationNotAllowed) {
		t.Errorf("password sign-up with email off: %v", err)
	}
	if _, err := e.SignInWithPassword(client, SignInWithPasswordRequest{Email: s("a@example.com"), Password: "secret123"}); err == nil || err.Error() != "PASSWORD_LOGIN_DISABLED" {
		t.Errorf("password sign-in with email off: %v", err)
	}
	sv, err := e.SendVerificationCode(client, SendVerificationCodeRequest{PhoneNumber: "+15550123"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SignInWithPhoneNumber(client, SignInWithPhoneNumberRequest{SessionInfo: sv.SessionInfo, Code: "424242"}); err != nil {
		t.Errorf("test number with its fixed code: %v", err)
	}
	if _, err := e.UpdateConfig(admin, ConfigPatch{SignIn: &SignInConfigPatch{PhoneNumber: &PhoneSignIn{}}}, "signIn.phoneNumber.enabled"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendVerificationCode(client, SendVerificationCodeRequest{PhoneNumber: "+15550123"}); !errors.Is(err, ErrOperationNotAllowed) {
		t.Errorf("phone with phone off: %v", err)
	}
	cfg, _ := e.Config(admin)
	if cfg.SignIn.Email == nil || cfg.SignIn.Email.Enabled || cfg.SignIn.Anonymous == nil || cfg.SignIn.PhoneNumber == nil || cfg.SignIn.PhoneNumber.Enabled {
		t.Errorf("config = %+v", cfg.SignIn)
	}
}
