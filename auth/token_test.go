package auth

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
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

// idClaimsMap is the ID token payload as a map, written the plain way:
// profile claims, then custom claims (stored, then the sign-in's), the
// reserved names dropped, then the standard claims. json.Marshal of it is
// what idClaims must encode.
func idClaimsMap(u *User, provider string, extra map[string]any, project, tenant string, now time.Time, ttl int64, sf *secondFactor, attrs any) map[string]any {
	c := map[string]any{}
	if u.DisplayName != "" {
		c["name"] = u.DisplayName
	}
	if u.PhotoURL != "" {
		c["picture"] = u.PhotoURL
	}
	for k, v := range u.claims() {
		c[k] = v
	}
	for k, v := range extra {
		c[k] = v
	}
	for _, k := range []string{"email", "email_verified", "phone_number", "provider_id"} {
		delete(c, k)
	}
	if u.Email != "" {
		c["email"] = u.Email
	}
	if u.EmailVerified != nil {
		c["email_verified"] = *u.EmailVerified
	}
	if u.PhoneNumber != "" {
		c["phone_number"] = u.PhoneNumber
	}
	if provider == ProviderAnonymous {
		c["provider_id"] = provider
	}
	c["auth_time"] = authTime(u, now).Unix()
	c["user_id"] = u.LocalID
	identities := map[string]any{}
	if u.Email != "" {
		identities["email"] = []string{u.Email}
	}
	for _, p := range u.ProviderUserInfo {
		if p.ProviderID != "" && p.ProviderID != ProviderPassword && p.RawID != "" {
			ids, _ := identities[p.ProviderID].([]string)
			identities[p.ProviderID] = append(ids, p.RawID)
		}
	}
	fb := map[string]any{"identities": identities, "sign_in_provider": provider}
	if tenant != "" {
		fb["tenant"] = tenant
	}
	if attrs != nil {
		fb["sign_in_attributes"] = attrs
	}
	if sf != nil {
		fb["sign_in_second_factor"], fb["second_factor_identifier"] = sf.Provider, sf.Identifier
	}
	c["firebase"] = fb
	c["iat"] = now.Unix()
	c["exp"] = now.Unix() + ttl
	c["aud"] = project
	c["iss"] = "https://securetoken.google.com/" + project
	c["sub"] = u.LocalID
	return c
}

// TestIDClaimsMatchMap: an ID token's payload is byte for byte json.Marshal
// of its claims map, for accounts with and without a profile, custom
// claims that shadow profile and standard names, providers, a tenant, a
// second factor and SAML attributes.
func TestIDClaimsMatchMap(t *testing.T) {
	yes, no := true, false
	now := time.Unix(1796656780, 123e6)
	users := []*User{
		{LocalID: "u1"},
		{LocalID: "u2", Email: "a@x.com", EmailVerified: &no, LastLoginAt: "1796656000000"},
		{LocalID: "u<3>", Email: "é&<b>@x.com", EmailVerified: &yes, DisplayName: "A \"b\" \u2028", PhotoURL: "http://p/<a>.png", PhoneNumber: "+15555550100",
			LastRefreshAt:    "2026-12-07T15:19:40.028Z",
			CustomAttributes: `{"role":"admin","tier":2,"name":"custom name","email":"x","sub":"no","firebase":1,"aa":[1,{"z":null,"b":true}],"zz":{"k":"v"}}`,
			ProviderUserInfo: []ProviderUserInfo{{ProviderID: "password", RawID: "a@x.com"}, {ProviderID: "google.com", RawID: "g-1"},
				{ProviderID: "github.com", RawID: "gh-2"}, {ProviderID: "google.com", RawID: "g-2"}, {ProviderID: "email", RawID: "e-1"}, {ProviderID: "phone", RawID: ""}}},
		{LocalID: "u4", CustomAttributes: `{"picture":"p","auth_time":5,"provider_id":"x","phone_number":"y"}`, PhotoURL: "http://q", DisplayName: "D"},
		{LocalID: "u5", CustomAttributes: `{}`, ProviderUserInfo: []ProviderUserInfo{{ProviderID: "saml.a", RawID: "s"}}},
	}
	extras := []map[string]any{nil, {}, {"role": "editor", "iss": "no", "exp": 1, "name": "extra", "n": json.Number("7")}}
	sfs := []*secondFactor{nil, {Identifier: "mfa-1", Provider: "phone"}}
	attrs := []any{nil, map[string]any{"groups": []any{"a", "b"}}, map[string]any(nil)}
	for _, u := range users {
		for _, provider := range []string{ProviderPassword, ProviderAnonymous, "google.com"} {
			for _, extra := range extras {
				for _, tenant := range []string{"", "t-1"} {
					for _, sf := range sfs {
						for _, at := range attrs {
							// A project the iss claim must escape, as json.Marshal escapes the whole.
							for _, project := range []string{"demo-p", "p<&>\"é\u2028\xff\x01"} {
								want, err := json.Marshal(idClaimsMap(u, provider, extra, project, tenant, now, idTokenTTL, sf, at))
								if err != nil {
									t.Fatal(err)
								}
								c := newIDClaims(u, provider, extra, project, tenant, now, idTokenTTL)
								c.secondFactor, c.attrs = sf, at
								if got := c.appendJSON(nil); string(got) != string(want) {
									t.Fatalf("%s %s %v %q %v %v %q:\n got %s\nwant %s", u.LocalID, provider, extra, tenant, sf, at, project, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// FuzzRefreshTokenMatchesMap: a refresh token whose JSON is a valid object
// is read member by member; the answer must be what decoding it whole
// into a map gives, for any payload.
func FuzzRefreshTokenMatchesMap(f *testing.F) {
	for _, s := range []string{`{"_AuthEmulatorRefreshToken":"DO NOT MODIFY","localId":"u","provider":"password","extraClaims":{},"projectId":"p","iat":17}`,
		`{"_AuthEmulatorRefreshToken":true,"localId":12,"extraClaims":{"a":[1,{"b":null}]},"secondFactor":{"identifier":"x","provider":"phone"},"tenantId":"t"}`,
		`{"_AuthEmulatorRefreshToken":0}`, `{"_AuthEmulatorRefreshToken":"x","localId":"a","localId":"b","\u0070rovider":"esc","iat":"1"}`,
		`{"_AuthEmulatorRefreshToken":[],"extraClaims":[],"iat":1e400,"localId":true}`, `{"_AuthEmulatorRefreshToken":"x","localId\u00ff":"y"}`,
		"{\"_AuthEmulatorRefreshToken\":\"x\",\"localId\":\"\xff\"}", `{} }`, `{"a":1} x`, `null`, `[]`, ` { "_AuthEmulatorRefreshToken" : { } } `, `{"extraClaims": { } }`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(mustDecodeB64(RefreshToken{LocalID: "u", ProjectID: "p", ExtraClaims: map[string]any{"r": "x"}, IssuedAt: 5}.Encode())))
	f.Fuzz(func(t *testing.T, payload []byte) {
		got, gerr := DecodeRefreshToken(base64.RawStdEncoding.EncodeToString(payload))
		want, werr := refreshFromMap(payload)
		if gerr != werr || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v %v, decoded whole %+v %v", payload, got, gerr, want, werr)
		}
	})
}

func mustDecodeB64(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// FuzzPlainBase64: a token plainBase64 takes is cleaned as
// DecodeRefreshToken's character filter cleans it.
func FuzzPlainBase64(f *testing.F) {
	for _, s := range []string{"", "abc=", "ab+/==", "a=b", "a-b_", "a b", "====", "é=", mustEncodeB64(`{"x":1}`)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := plainBase64(s)
		if !ok {
			return
		}
		want := strings.Map(func(r rune) rune {
			switch {
			case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '+', r == '/':
				return r
			case r == '-':
				return '+'
			case r == '_':
				return '/'
			}
			return -1
		}, s)
		if got != want {
			t.Fatalf("%q: %q, the filter's %q", s, got, want)
		}
	})
}

func mustEncodeB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestTokensReuseScratch: the tokens written through the reused scratch
// buffers are each their own, a long one then short ones (a buffer's
// earlier bytes never show), and each costs its string (an ID token's
// claims also their keys and one closure).
func TestTokensReuseScratch(t *testing.T) {
	long := RefreshToken{LocalID: strings.Repeat("u", 3000), ProjectID: "p", IssuedAt: 7}
	short := RefreshToken{LocalID: "u", ProjectID: "p"}
	u := &User{LocalID: "u1", Email: "a@x.com"}
	now := time.Unix(1796656780, 0)
	for range 3 {
		for _, r := range []RefreshToken{long, short} {
			want := base64.StdEncoding.EncodeToString(r.appendJSON(nil))
			if got := r.Encode(); got != want {
				t.Fatalf("refresh token %.40q…, want %.40q…", got, want)
			}
		}
		c := newIDClaims(u, ProviderPassword, nil, "p", "", now, idTokenTTL)
		want := unsignedHeader + "." + base64.RawURLEncoding.EncodeToString(c.appendJSON(nil)) + "."
		if got := c.token(); got != want {
			t.Fatalf("ID token %q, want %q", got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = short.Encode() }); n != 1 {
		t.Errorf("a refresh token costs %v allocations", n)
	}
	c := newIDClaims(u, ProviderPassword, nil, "p", "", now, idTokenTTL)
	if n := testing.AllocsPerRun(100, func() { _ = c.token() }); n > 3 {
		t.Errorf("an ID token costs %v allocations", n)
	}
}
