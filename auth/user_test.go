package auth_test

import (
	"encoding/json"
	"testing"

	"github.com/pyric/pyric/auth"
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
