package auth

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// claimsFromMap is what the engine read of an ID token before
// decodeTokenClaims: DecodeJWT, then lookups in its payload map.
func claimsFromMap(tok string) (tokenClaims, error) {
	j, err := DecodeJWT(tok)
	if err != nil {
		return tokenClaims{}, err
	}
	if j.Payload == nil {
		return tokenClaims{}, nil
	}
	c := tokenClaims{object: true}
	fb, _ := j.Payload["firebase"].(map[string]any)
	c.tenant, _ = fb["tenant"].(string)
	c.provider, _ = fb["sign_in_provider"].(string)
	c.uid, _ = primitiveString(j.Payload["user_id"])
	c.iat, c.iatOK = num(j.Payload["iat"])
	return c, nil
}

// checkClaims fails when decodeTokenClaims reads tok otherwise than the
// map decoding did.
func checkClaims(t *testing.T, tok string) {
	t.Helper()
	got, gerr := decodeTokenClaims(tok)
	want, werr := claimsFromMap(tok)
	if gerr != werr || got != want {
		t.Fatalf("%.300q: %+v %v, decoded whole %+v %v", tok, got, gerr, want, werr)
	}
}

// jws is an unsigned token of a header and payload, as raw bytes.
func jws(header, payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload)) + "."
}

// claimsPayloads are payloads a token may carry: the engine's own, and
// every shape the decoders could read otherwise (duplicates, escapes,
// wrong types, bad UTF-8, numbers out of range, text that is not one
// JSON value, encoding/json's leniencies about what follows a value).
var claimsPayloads = []string{
	`{}`, `null`, `[]`, `1`, `"s"`, `true`, ``, ` `, `{`, `{"a":}`, `{"a":1} x`, `{"a":1}}`, `{"user_id":"u"}]`, `{} {}`,
	` { "user_id" : "u" , "iat" : 17 } `, "{\"user_id\":\"u\"}\n",
	`{"user_id":"u1","iat":1700000000,"firebase":{"tenant":"t1","sign_in_provider":"password"}}`,
	`{"user_id":12,"iat":"1700000000"}`, `{"user_id":true}`, `{"user_id":false}`, `{"user_id":null}`, `{"user_id":{}}`, `{"user_id":[1]}`,
	`{"user_id":1.50e3}`, `{"user_id":-0}`, `{"user_id":12345678901234567890123}`,
	`{"iat":1e400}`, `{"iat":-1e400}`, `{"iat":1.5}`, `{"iat":-17}`, `{"iat":0}`, `{"iat":123456789012345}`, `{"iat":1234567890123456}`,
	`{"iat":12345678901234567890}`, `{"iat":1E2}`, `{"iat":null}`, `{"iat":true}`, `{"iat":[]}`, `{"iat":2,"iat":"x"}`, `{"iat":"x","iat":3}`,
	`{"user_id":"a","user_id":"b"}`, `{"user_id":"a","user_id":null}`,
	`{"firebase":{"tenant":"a"},"firebase":{"sign_in_provider":"phone"}}`, `{"firebase":{"tenant":"a"},"firebase":7}`,
	`{"firebase":{"tenant":"a","tenant":1}}`, `{"firebase":{"tenant":1,"tenant":"b"}}`, `{"firebase":[{"tenant":"a"}]}`, `{"firebase":null}`,
	`{"firebase":{"sign_in_provider":"anonymous"}}`, `{"firebase":{"sign_in_provider":"custom"}}`, `{"firebase":{"sign_in_provider":"google.com"}}`,
	`{"firebase":{"sign_in_provider":"pass\u0077ord"}}`, `{"firebase":{"sign_in_provider":""}}`, `{"firebase":{"sign_in_provider":{}}}`,
	`{"firebase":{"identities":{"email":["a@x.com"]},"tenant":"t\"q"}}`, `{"firebase":{"tenant":"t","x":{"tenant":"deep"}}}`,
	`{"user\u005fid":"esc","\u0069at":5,"fire\u0062ase":{"tena\u006et":"te"}}`, `{"user_id\u0000":"nul"}`, `{"USER_ID":"case"}`,
	"{\"user_id\":\"\xff\xfe\"}", "{\"user_id\xff\":\"x\"}", "{\"user_id\":\"\\ud800\"}", `{"user_id":"\u00e9\u2028<>&"}`,
	"{\"user_id\":\"a\x01\"}", `{"user_id":"u","nested":{"user_id":"inner","iat":1},"arr":[{"iat":9}]}`,
	`{"user_id":"` + strings.Repeat("long", 200) + `","iat":99}`, `{"pad":"` + strings.Repeat("x", 70000) + `","user_id":"big"}`,
	strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001), `{"a":` + strings.Repeat(`[`, 9998) + strings.Repeat(`]`, 9998) + `,"user_id":"d"}`,
}

// TestTokenClaimsMatchMap: the claims decodeTokenClaims reads of a token
// are what decoding its payload whole into a map gave, for the tokens
// the engine issues and for any other payload and header, malformed ones
// included; one after another, long and short, so that a reused buffer's
// earlier bytes would show.
func TestTokenClaimsMatchMap(t *testing.T) {
	u := &User{LocalID: "u1", Email: "a@x.com", EmailVerified: ptr(true), ProviderUserInfo: []ProviderUserInfo{{ProviderID: "password", RawID: "a@x.com", FederatedID: "a@x.com", Email: "a@x.com"}}}
	now := time.Unix(1796656780, 0)
	for _, p := range []string{ProviderPassword, ProviderAnonymous, ProviderCustom, ProviderPhone, "google.com"} {
		for _, tenant := range []string{"", "t-1"} {
			c := newIDClaims(u, p, map[string]any{"role": "admin", "user_id": "shadow"}, "p", tenant, now, idTokenTTL)
			checkClaims(t, c.token())
		}
	}
	headers := []string{`{"alg":"none","typ":"JWT"}`, `{}`, ` {"alg":"RS256"} `, `null`, `[]`, `"x"`, ``, `{"a":1} x`, `{"a":1}}`, `{`, "{\"k\":\"\xff\"}"}
	for _, h := range headers {
		for _, p := range claimsPayloads {
			checkClaims(t, jws(h, p))
			checkClaims(t, jws(h, p)+"sig")
		}
	}
	// Not JWS-shaped, or parts base64 reads only leniently.
	valid := jws(headers[0], claimsPayloads[16])
	h, rest, _ := strings.Cut(valid, ".")
	p, _, _ := strings.Cut(rest, ".")
	for _, tok := range []string{"", "garbage", ".", "..", "a..", ".b.", h + "." + p, h + "." + p + ".s.x", h + "." + p + ".s=",
		h + "." + p + "A.", h + "A." + p + ".", h + "." + p + "AAAAA.", h + "." + p + "+/.", " " + valid, valid + " ",
		h + "." + p[:len(p)-1] + ".", h[:len(h)-2] + "." + p + "."} {
		checkClaims(t, tok)
	}
}

// FuzzTokenClaimsMatchMap: for any header and payload, and any token
// text, decodeTokenClaims reads what decoding the payload whole gave.
func FuzzTokenClaimsMatchMap(f *testing.F) {
	for _, p := range claimsPayloads[:len(claimsPayloads)-4] {
		f.Add(`{"alg":"none"}`, p, "")
	}
	f.Add(`{"a":1}}`, `{"user_id":"u"}`, "x.y")
	f.Fuzz(func(t *testing.T, header, payload, tail string) {
		checkClaims(t, jws(header, payload)+tail)
		checkClaims(t, header+"."+payload+"."+tail)
	})
}

// TestTokenClaimsAllocations: reading the claims of a token the engine
// issued costs only the user id's string.
func TestTokenClaimsAllocations(t *testing.T) {
	u := &User{LocalID: "u1", Email: "a@x.com"}
	tok := newIDClaims(u, ProviderPassword, nil, "p", "", time.Unix(1796656780, 0), idTokenTTL).token()
	if n := testing.AllocsPerRun(100, func() { _, _ = decodeTokenClaims(tok) }); n > 1 {
		t.Errorf("decoding an ID token's claims costs %v allocations", n)
	}
}
