package auth

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"testing"
)

// TestAppendJSONIsMarshal: the token encoder writes exactly what
// json.Marshal writes, for the claims tokens carry and for the values it
// hands to json.Marshal.
func TestAppendJSONIsMarshal(t *testing.T) {
	cases := []any{
		map[string]any{"sub": "u1", "iat": int64(1700000000), "email_verified": false, "name": "A <b> & \"c\" \\ é \u2028 \x01 \x7f",
			"firebase": map[string]any{"identities": map[string]any{"email": []string{"a@x.com"}, "phone": []string(nil)}, "sign_in_provider": "password"},
			"custom":   json.Number("12345678901234567890"), "f": 1e21, "g": 0.5, "n": nil, "arr": []any{"x", 1.0, true, map[string]any{"z": 1, "a": 2}},
			"nilmap": map[string]any(nil), "int": 7, "\u00e9key": "v", "<k>": "v", "": ""},
		map[string]any{},
		"plain", "esc\"aped", "bad\xffutf8", true, int64(-3), []string{}, []string{"a", "<"},
	}
	for _, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSON(nil, c); string(got) != string(want) {
			t.Errorf("appendJSON(%#v)\n got %s\nwant %s", c, got, want)
		}
	}
	if got := string(appendJSON([]byte("x"), map[string]any{"nan": math.NaN()})); got != `x{"nan":null}` {
		t.Errorf("a value json.Marshal refuses: %s", got)
	}
}

// TestRefreshTokenEncodeIsMarshal: a refresh token's JSON is what
// json.Marshal writes for its record, whatever its optional parts hold.
func TestRefreshTokenEncodeIsMarshal(t *testing.T) {
	cases := []RefreshToken{
		{},
		{LocalID: "u1", Provider: "password", ProjectID: "demo-p", IssuedAt: 1796656780},
		{LocalID: "é<&>\"\\\u2028", Provider: "anonymous", ProjectID: "p", TenantID: "t-1", IssuedAt: -1,
			ExtraClaims: map[string]any{"role": "admin", "n": json.Number("12"), "nested": map[string]any{"b": []any{true, nil}, "a": 1.5}, "<x>": "y"}},
		{LocalID: "u", Provider: "phone", ProjectID: "p", ExtraClaims: map[string]any{},
			SecondFactor: map[string]any{"identifier": "id-1", "provider": "phone"}},
		{LocalID: "u", SecondFactor: map[string]any(nil), Marker: "ignored"},
	}
	for _, r := range cases {
		want := r
		want.Marker = "DO NOT MODIFY"
		if want.ExtraClaims == nil {
			want.ExtraClaims = map[string]any{}
		}
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Encode(); got != base64.StdEncoding.EncodeToString(b) {
			dec, _ := base64.StdEncoding.DecodeString(got)
			t.Errorf("Encode(%+v)\n got %s\nwant %s", r, dec, b)
		}
	}
}
