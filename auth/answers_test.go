package auth_test

import (
	"encoding/json"
	"testing"

	"github.com/pyric/pyric/auth"
)

// answers are the answers that write their own JSON, built from s (every
// string member) and flag, with members empty and set.
func answers(s string, flag bool) []interface{ AppendJSON([]byte) []byte } {
	toks := auth.Tokens{IDToken: s + "i", RefreshToken: s, ExpiresIn: "3600"}
	return []interface{ AppendJSON([]byte) []byte }{
		(*auth.SignUpResponse)(nil),
		&auth.SignUpResponse{},
		&auth.SignUpResponse{Kind: "identitytoolkit#SignupNewUserResponse", LocalID: s, DisplayName: s, Email: s + "@x", Tokens: toks},
		&auth.SignInWithPasswordResponse{},
		&auth.SignInWithPasswordResponse{Kind: "k", Registered: flag, LocalID: s, Email: s, Tokens: toks},
		&auth.SignInWithPasswordResponse{Kind: "k", LocalID: s, MFAPending: auth.MFAPending{MFAPendingCredential: s,
			MFAInfo: []auth.MFAEnrollment{{MFAEnrollmentID: s, PhoneInfo: "+1***"}, {TOTPInfo: &auth.TOTPInfo{}}}}},
		(*auth.GrantTokenResponse)(nil),
		&auth.GrantTokenResponse{},
		&auth.GrantTokenResponse{IDToken: s, AccessToken: s, ExpiresIn: "3600", RefreshToken: s + "r", TokenType: "Bearer", UserID: s, ProjectID: "12345"},
		(*auth.LookupResponse)(nil),
		&auth.LookupResponse{Kind: "identitytoolkit#GetAccountInfoResponse"},
		&auth.LookupResponse{Kind: s, Users: []*auth.User{}},
		&auth.LookupResponse{Kind: s, Users: []*auth.User{{LocalID: s, Email: s, EmailVerified: &flag, ProviderUserInfo: []auth.ProviderUserInfo{{ProviderID: "password", RawID: s}}}, nil, {}}},
	}
}

// TestAnswersMatchMarshal: each answer's AppendJSON is what json.Marshal
// writes for it (reflection, User.MarshalJSON for accounts), with HTML
// characters, non-ASCII text and invalid UTF-8 in its strings.
func TestAnswersMatchMarshal(t *testing.T) {
	for _, s := range []string{"", "a", "u<1>&\"q\"\\/", "é\u2028\U0001F600", "bad\xff\x01"} {
		checkAnswers(t, s, true)
		checkAnswers(t, s, false)
	}
}

func FuzzAnswersMatchMarshal(f *testing.F) {
	f.Add("abc", true)
	f.Add("<&>\xff", false)
	f.Fuzz(func(t *testing.T, s string, flag bool) { checkAnswers(t, s, flag) })
}

func checkAnswers(t *testing.T, s string, flag bool) {
	t.Helper()
	for _, a := range answers(s, flag) {
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("%T AppendJSON\n got %s\nwant x%s", a, got, want)
		}
	}
}
