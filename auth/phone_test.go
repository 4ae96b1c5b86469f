package auth

import "testing"

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
	if !first.IsNewUser || first.IDToken == "" {
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
