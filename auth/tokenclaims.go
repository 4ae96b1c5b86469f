package auth

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"github.com/pyric/pyric/internal/jsonstr"
)

// tokenClaims are the claims of an ID token the engine checks (the tenant,
// the account, revocation) and answers with (the sign-in provider), read
// as DecodeJWT and lookups in its Payload map read them. Decoding only
// these, instead of the whole payload into a map, was most of a lookup
// by ID token's allocations: web apps look their account up after every
// sign-in. createSessionCookie, which copies every claim, decodes the
// map (parsedIDToken.payload).
type tokenClaims struct {
	object   bool    // the payload is a JSON object: else the token is invalid
	tenant   string  // firebase.tenant, when it is a string
	provider string  // firebase.sign_in_provider, when it is a string
	uid      string  // user_id as primitiveString reads it
	iat      float64 // iat, when it is a number (iatOK)
	iatOK    bool
}

// decodeTokenClaims decodes tok's claims as DecodeJWT would decode its
// header and payload: it fails when DecodeJWT does, and a payload that is
// not a JSON object leaves object false. Valid JSON is scanned for the
// claims; anything else goes through DecodeJWT's own decoding, so that
// encoding/json's leniencies and refusals stay the answer for it.
func decodeTokenClaims(tok string) (tokenClaims, error) {
	if !jwsShaped(tok) {
		return tokenClaims{}, errNotJWT
	}
	header, rest, _ := strings.Cut(tok, ".")
	payload, _, _ := strings.Cut(rest, ".")
	bp := scratch.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxScratch {
			scratch.Put(bp)
		}
	}()
	b := appendJWSPart((*bp)[:0], header)
	*bp = b[:0]
	if !jsonObject(b) {
		return tokenClaims{}, errNotJWT
	}
	b = appendJWSPart(b[:0], payload)
	*bp = b[:0]
	return payloadClaims(b), nil
}

// appendJWSPart appends the bytes of one part of a JWS-shaped token (the
// base64url alphabet only) to b, as b64url decodes it: a part one
// character too long for base64 loses its last character. The part is
// decoded in chunks of a multiple of 4 characters, which decode as the
// whole would, without copying it to a []byte first.
func appendJWSPart(b []byte, s string) []byte {
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	enc := base64.RawURLEncoding
	b = slices.Grow(b, enc.DecodedLen(len(s)))
	var chunk [256]byte
	for len(s) > 0 {
		n := copy(chunk[:], s)
		k, _ := enc.Decode(b[len(b):cap(b)], chunk[:n])
		b = b[:len(b)+k]
		s = s[n:]
	}
	return b
}

// jsonObject says whether b decodes, as DecodeJWT decodes a header, into
// a non-nil map: whether it is a JSON object.
func jsonObject(b []byte) bool {
	if jsonstr.Valid(b) {
		return b[jsonstr.SkipSpace(b, 0)] == '{'
	}
	var m map[string]any
	return jsonNumbers(b, &m) == nil && m != nil
}

// payloadClaims reads the claims of a token's decoded payload b.
func payloadClaims(b []byte) tokenClaims {
	if !jsonstr.Valid(b) {
		var m map[string]any
		if err := jsonNumbers(b, &m); err != nil || m == nil {
			return tokenClaims{}
		}
		return mapClaims(m)
	}
	i := jsonstr.SkipSpace(b, 0)
	if b[i] != '{' {
		return tokenClaims{}
	}
	c := tokenClaims{object: true}
	// Of a member repeated, the last is the one a map keeps: each
	// assignment below replaces what an earlier one set.
	jsonstr.Members(b, i, func(k, v []byte) {
		switch string(memberName(k)) {
		case "firebase":
			c.tenant, c.provider = "", ""
			if v[0] == '{' {
				jsonstr.Members(v, 0, func(k, v []byte) {
					switch string(memberName(k)) {
					case "tenant":
						c.tenant = stringMember(v)
					case "sign_in_provider":
						c.provider = stringMember(v)
					}
				})
			}
		case "user_id":
			c.uid = primitiveMember(v)
		case "iat":
			c.iat, c.iatOK = numberMember(v)
		}
	})
	return c
}

// mapClaims reads the claims of a payload decoded into a map.
func mapClaims(m map[string]any) tokenClaims {
	c := tokenClaims{object: true}
	fb, _ := m["firebase"].(map[string]any)
	c.tenant, _ = fb["tenant"].(string)
	c.provider, _ = fb["sign_in_provider"].(string)
	c.uid, _ = primitiveString(m["user_id"])
	c.iat, c.iatOK = num(m["iat"])
	return c
}

// memberName is the name of a member whose valid JSON key (quotes
// included) is k: its bytes when it has no escape (a name with bytes
// that are not UTF-8 then matches none of the claims' names, as its
// decoding would not).
func memberName(k []byte) []byte {
	name := k[1 : len(k)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		return []byte(jsonstr.Unquote(k))
	}
	return name
}

// stringMember is the valid JSON value v when it is a string, else "".
// The providers the engine names are its constants, not copies.
func stringMember(v []byte) string {
	if v[0] != '"' {
		return ""
	}
	switch string(v) {
	case `"` + ProviderPassword + `"`:
		return ProviderPassword
	case `"` + ProviderAnonymous + `"`:
		return ProviderAnonymous
	case `"` + ProviderCustom + `"`:
		return ProviderCustom
	case `"` + ProviderPhone + `"`:
		return ProviderPhone
	}
	return jsonstr.Unquote(v)
}

// primitiveMember is primitiveString of the valid JSON value v decoded
// with numbers as json.Number: a string's value, a number's text, "true"
// or "false"; "" for anything else.
func primitiveMember(v []byte) string {
	switch v[0] {
	case '"':
		return jsonstr.Unquote(v)
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n', '{', '[':
		return ""
	}
	return string(v)
}

// numberMember is num of the valid JSON value v decoded with numbers as
// json.Number: a number's float64 (false when it is out of range), false
// for anything else. An integer of up to 15 digits, every iat the
// engine issues, is read without strconv, exactly.
func numberMember(v []byte) (float64, bool) {
	if c := v[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	if len(v) <= 15 {
		var n int64
		digits := true
		for _, c := range v {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			return float64(n), true
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}
