package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/pyric/pyric/internal/jsonstr"
)

// CustomTokenAudience is the aud every custom token must carry.
const CustomTokenAudience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"

// idTokenTTL is the lifetime of ID tokens, as "expiresIn" says.
const idTokenTTL = 3600

// jwsShaped says tok has the shape JWT libraries accept: three base64url
// parts joined by dots, the signature possibly empty.
func jwsShaped(tok string) bool {
	part, dots := 0, 0 // the current part's length, the dots so far
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case c == '.':
			if part == 0 || dots == 2 {
				return false
			}
			dots++
			part = 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			part++
		default:
			return false
		}
	}
	return dots == 2
}

// JWT is a decoded, unverified JSON Web Token.
type JWT struct {
	Header  map[string]any
	Payload map[string]any // nil when the payload is not a JSON object
}

var errNotJWT = errors.New("not a JWT")

// DecodeJWT decodes a token without verifying it, as the emulator does: the
// signature and alg are ignored. It fails when the token is not JWS-shaped
// or its header is not a JSON object; a payload that is not a JSON object
// decodes with a nil Payload.
func DecodeJWT(tok string) (*JWT, error) {
	if !jwsShaped(tok) {
		return nil, errNotJWT
	}
	parts := strings.SplitN(tok, ".", 3)
	var h map[string]any
	if err := jsonNumbers(b64url(parts[0]), &h); err != nil || h == nil {
		return nil, errNotJWT
	}
	var p map[string]any
	if err := jsonNumbers(b64url(parts[1]), &p); err != nil {
		p = nil
	}
	return &JWT{Header: h, Payload: p}, nil
}

func b64url(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil && len(s)%4 == 1 {
		b, _ = base64.RawURLEncoding.DecodeString(s[:len(s)-1])
	}
	return b
}

// jsonNumbers unmarshals keeping integral numbers exact (json.Number).
func jsonNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

// EncodeUnsignedJWT returns header.payload. with alg "none", the form of
// every token the emulator issues.
func EncodeUnsignedJWT(payload any) string {
	return unsignedJWT(appendJSON(make([]byte, 0, 512), payload)) // an ID token's claims fit
}

// unsignedJWT is the unsigned JWT of an encoded payload.
func unsignedJWT(p []byte) string {
	return encodedString(unsignedPrefix, base64.RawURLEncoding, p, ".")
}

// unsignedHeader is the encoded header of every token the emulator issues.
var unsignedHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))

// unsignedPrefix is what every unsigned token begins with: its header and
// the dot after it.
var unsignedPrefix = unsignedHeader + "."

// encodedString is prefix, then p encoded with enc, then suffix, written
// in the string's own bytes (one allocation: the string is not a copy of
// a buffer). p is encoded in chunks of a multiple of 3 bytes, which
// encode as the whole would.
func encodedString(prefix string, enc *base64.Encoding, p []byte, suffix string) string {
	var sb strings.Builder
	sb.Grow(len(prefix) + enc.EncodedLen(len(p)) + len(suffix))
	sb.WriteString(prefix)
	var chunk [256]byte // the encoding of 192 bytes
	for len(p) > 0 {
		n := min(len(p), 192)
		k := enc.EncodedLen(n)
		enc.Encode(chunk[:k], p[:n])
		sb.Write(chunk[:k])
		p = p[n:]
	}
	sb.WriteString(suffix)
	return sb.String()
}

// scratch are the buffers a token's JSON is written in before it is
// encoded, reused: every sign-in and refresh writes two.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxScratch bounds the buffers kept in scratch.
const maxScratch = 64 << 10

// encodeJSON encodes the JSON write appends to a scratch buffer with
// encode, and puts the buffer back.
func encodeJSON(write func([]byte) []byte, encode func([]byte) string) string {
	bp := scratch.Get().(*[]byte)
	b := write((*bp)[:0])
	s := encode(b)
	if cap(b) <= maxScratch {
		*bp = b[:0]
		scratch.Put(bp)
	}
	return s
}

// appendJSON appends v's encoding, byte for byte what json.Marshal writes
// (keys sorted, HTML characters escaped), to b. The claims maps and
// strings of a token are written directly (strings through jsonstr); any
// other value goes through json.Marshal. A token's claims were a
// quarter of a sign-in's allocations through json.Marshal's map encoder.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return jsonstr.Append(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case []string:
		return appendStrings(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		b, _ = jsonstr.AppendObject(b, keys, func(b []byte, k string) ([]byte, bool) {
			return appendJSON(b, x[k]), true
		})
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		// What json.Marshal of the whole payload would do with a value
		// it cannot encode (none reaches a token): leave it null.
		return append(b, "null"...)
	}
	return append(b, out...)
}

// appendStrings appends the JSON of a list of strings (null when nil),
// as appendJSON does, without boxing it in an interface.
func appendStrings(b []byte, x []string) []byte {
	if x == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range x {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, s)
	}
	return append(b, ']')
}

// num reads a JSON number claim as float64 (0, false when absent or not a number).
func num(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// primitiveString converts a string, number or boolean claim to a string,
// as the emulator coerces custom-token uids.
func primitiveString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64, int64, int:
		b, _ := json.Marshal(x)
		return string(b), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// RefreshToken is the emulator's refresh-token record; on the wire it is
// base64 JSON beginning with {"_AuthEmulatorRefreshToken":"DO NOT MODIFY"}.
type RefreshToken struct {
	Marker       string         `json:"_AuthEmulatorRefreshToken"`
	LocalID      string         `json:"localId"`
	Provider     string         `json:"provider"`
	ExtraClaims  map[string]any `json:"extraClaims"`
	ProjectID    string         `json:"projectId"`
	SecondFactor any            `json:"secondFactor,omitempty"`
	TenantID     string         `json:"tenantId,omitempty"`
	// IssuedAt (Unix seconds) is pyric's addition: production refuses a
	// refresh token issued before the account's validSince (revocation,
	// password change) with TOKEN_EXPIRED; the emulator's tokens carry no
	// time and never expire.
	IssuedAt int64 `json:"iat,omitempty"`
}

// Encode returns the wire form: base64 of the record's JSON, byte for
// byte what json.Marshal writes for it (TestRefreshTokenEncodeIsMarshal),
// written directly: every sign-in and refresh mints one.
func (r RefreshToken) Encode() string {
	return encodeJSON(r.appendJSON, func(b []byte) string { return encodedString("", base64.StdEncoding, b, "") })
}

// appendJSON appends the record's JSON to b.
func (r RefreshToken) appendJSON(b []byte) []byte {
	b = append(b, `{"_AuthEmulatorRefreshToken":"DO NOT MODIFY","localId":`...)
	b = jsonstr.Append(b, r.LocalID)
	b = append(b, `,"provider":`...)
	b = jsonstr.Append(b, r.Provider)
	b = append(b, `,"extraClaims":`...)
	if r.ExtraClaims == nil {
		b = append(b, "{}"...)
	} else {
		b = appendJSON(b, r.ExtraClaims)
	}
	b = append(b, `,"projectId":`...)
	b = jsonstr.Append(b, r.ProjectID)
	if r.SecondFactor != nil {
		b = append(b, `,"secondFactor":`...)
		b = appendJSON(b, r.SecondFactor)
	}
	if r.TenantID != "" {
		b = append(b, `,"tenantId":`...)
		b = jsonstr.Append(b, r.TenantID)
	}
	if r.IssuedAt != 0 {
		b = append(b, `,"iat":`...)
		b = strconv.AppendInt(b, r.IssuedAt, 10)
	}
	return append(b, '}')
}

// DecodeRefreshToken parses a refresh token; anything else is
// INVALID_REFRESH_TOKEN. Decoding is lenient about base64 flavour and
// padding, like Node's Buffer.from(s, "base64").
func DecodeRefreshToken(s string) (*RefreshToken, error) {
	clean, ok := plainBase64(s)
	if !ok {
		clean = strings.Map(func(r rune) rune {
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
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	raw, err := base64.RawStdEncoding.DecodeString(clean)
	if err != nil {
		return nil, ErrInvalidRefreshToken
	}
	if i := jsonstr.SkipSpace(raw, 0); i < len(raw) && raw[i] == '{' && jsonstr.Valid(raw) {
		return refreshFromObject(raw, i)
	}
	return refreshFromMap(raw)
}

// plainBase64 is the cleaning DecodeRefreshToken does for a token of the
// standard alphabet with only padding after it, every token pyric
// issues: the token less its padding, without a copy. ok is false for
// any other token.
func plainBase64(s string) (string, bool) {
	body := strings.TrimRight(s, "=")
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
		default:
			return "", false
		}
	}
	return body, true
}

// refreshRecord holds a refresh token's members as decoded JSON (numbers
// as json.Number), zero when absent.
type refreshRecord struct {
	marker, localID, provider, projectID, tenantID, extraClaims, secondFactor, iat tokenMember
}

// tokenMember is one decoded JSON value: a string is kept as a string (no
// interface to allocate for it), anything else as encoding/json decodes it.
type tokenMember struct {
	v   any
	s   string
	str bool // a string: s
}

// anyMember is a value decoded into an any.
func anyMember(v any) tokenMember {
	if s, ok := v.(string); ok {
		return tokenMember{s: s, str: true}
	}
	return tokenMember{v: v}
}

// rawMember decodes a valid JSON value.
func rawMember(raw []byte) tokenMember {
	if raw[0] == '"' {
		if string(raw) == `"`+refreshMarker+`"` {
			return tokenMember{s: refreshMarker, str: true}
		}
		return tokenMember{s: jsonstr.Unquote(raw), str: true}
	}
	return tokenMember{v: jsonstr.Value(raw)}
}

// refreshMarker is the value of a refresh token's marker.
const refreshMarker = "DO NOT MODIFY"

// any is the member as an any.
func (m tokenMember) any() any {
	if m.str {
		return m.s
	}
	return m.v
}

// string is the member when it is a string.
func (m tokenMember) string() (string, bool) { return m.s, m.str }

// refreshFromObject reads the members of a refresh token's valid JSON
// object at raw[i] that a refresh token has, decoding only those (of
// repeated ones, the last).
func refreshFromObject(raw []byte, i int) (*RefreshToken, error) {
	var rec refreshRecord
	jsonstr.Members(raw, i, func(k, v []byte) {
		switch string(memberName(k)) {
		case "_AuthEmulatorRefreshToken":
			rec.marker = rawMember(v)
		case "localId":
			rec.localID = rawMember(v)
		case "provider":
			rec.provider = rawMember(v)
		case "projectId":
			rec.projectID = rawMember(v)
		case "tenantId":
			rec.tenantID = rawMember(v)
		case "extraClaims":
			rec.extraClaims = rawMember(v)
		case "secondFactor":
			rec.secondFactor = rawMember(v)
		case "iat":
			rec.iat = rawMember(v)
		}
	})
	return rec.token()
}

// refreshFromMap decodes a refresh token's JSON whole, the way for any
// text that is not a valid JSON object (encoding/json's leniencies and
// refusals stay the answer for those).
func refreshFromMap(raw []byte) (*RefreshToken, error) {
	var m map[string]any
	if err := jsonNumbers(raw, &m); err != nil || m == nil {
		return nil, ErrInvalidRefreshToken
	}
	return refreshRecord{marker: anyMember(m["_AuthEmulatorRefreshToken"]), localID: anyMember(m["localId"]), provider: anyMember(m["provider"]),
		projectID: anyMember(m["projectId"]), tenantID: anyMember(m["tenantId"]), extraClaims: anyMember(m["extraClaims"]),
		secondFactor: anyMember(m["secondFactor"]), iat: anyMember(m["iat"])}.token()
}

// token checks the marker and takes the members' values, as leniently as
// the emulator does.
func (rec refreshRecord) token() (*RefreshToken, error) {
	if rec.marker.str && rec.marker.s == "" || !rec.marker.str && !truthy(rec.marker.v) {
		return nil, ErrInvalidRefreshToken
	}
	var r RefreshToken
	r.Marker, _ = rec.marker.string()
	if s, ok := rec.localID.string(); ok {
		r.LocalID = s
	} else {
		r.LocalID, _ = primitiveString(rec.localID.v)
	}
	r.Provider, _ = rec.provider.string()
	r.ProjectID, _ = rec.projectID.string()
	r.TenantID, _ = rec.tenantID.string()
	r.ExtraClaims, _ = rec.extraClaims.v.(map[string]any)
	r.SecondFactor = rec.secondFactor.any()
	if f, ok := num(rec.iat.v); ok {
		r.IssuedAt = int64(f)
	}
	return &r, nil
}

// truthy is JavaScript truthiness for decoded JSON.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, _ := x.Float64()
		return f != 0
	case float64:
		return x != 0
	}
	return true
}

// CustomToken is what signInWithCustomToken accepts: strict JSON
// ({"uid":…,"claims":{…}}) or a JWT (signed or not; never verified) with
// aud = CustomTokenAudience.
type CustomToken struct {
	UID       string
	Claims    map[string]any // nil when absent
	HasClaims bool
	RawClaims any
	TenantID  string
	payload   map[string]any
}

// ParseCustomToken decodes a custom token. tenant is the tenant the call
// targets ("" for none): a JWT must then carry the same tenant_id.
func ParseCustomToken(tok, tenant string) (*CustomToken, error) {
	if tok == "" {
		return nil, badRequest("MISSING_CUSTOM_TOKEN")
	}
	var payload map[string]any
	if strings.HasPrefix(tok, "{") {
		if err := jsonNumbers([]byte(tok), &payload); err != nil || payload == nil {
			return nil, badRequest("INVALID_CUSTOM_TOKEN : ((Auth Emulator only accepts strict JSON or JWTs as fake custom tokens.))")
		}
	} else {
		j, err := DecodeJWT(tok)
		if tenant != "" {
			var tid any
			if err == nil && j.Payload != nil {
				tid = j.Payload["tenant_id"]
			}
			if s, _ := tid.(string); s != tenant {
				return nil, ErrTenantIDMismatch
			}
		}
		if err != nil {
			return nil, badRequest("INVALID_CUSTOM_TOKEN : Invalid assertion format")
		}
		payload = j.Payload
		if payload == nil {
			payload = map[string]any{}
		}
		aud := payload["aud"]
		if s, _ := aud.(string); s != CustomTokenAudience {
			return nil, badRequest("INVALID_CUSTOM_TOKEN : ((Invalid aud (audience): " + jsString(aud) +
				" Note: Firebase ID Tokens / third-party tokens cannot be used with signInWithCustomToken.))")
		}
	}
	ct := &CustomToken{payload: payload}
	if uid, ok := primitiveString(payload["uid"]); ok {
		ct.UID = uid
	} else if uid, ok := primitiveString(payload["user_id"]); ok {
		ct.UID = uid
	}
	if ct.UID == "" {
		return nil, badRequest("MISSING_IDENTIFIER")
	}
	if c, ok := payload["claims"]; ok {
		ct.HasClaims, ct.RawClaims = true, c
		if err := validateClaims(c); err != nil {
			return nil, err
		}
		ct.Claims = c.(map[string]any)
	}
	ct.TenantID, _ = payload["tenant_id"].(string)
	return ct, nil
}

// jsString renders a value as JavaScript string interpolation would.
func jsString(v any) string {
	switch x := v.(type) {
	case nil:
		return "undefined"
	case string:
		return x
	case map[string]any:
		return "[object Object]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// forbiddenClaims may not appear in custom claims.
var forbiddenClaims = []string{"iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf", "auth_time", "firebase", "at_hash", "c_hash"}

const maxCustomAttributes = 1000

func validateClaims(c any) error {
	m, ok := c.(map[string]any)
	if !ok || m == nil {
		return badRequest("INVALID_CLAIMS")
	}
	for _, k := range forbiddenClaims {
		if _, ok := m[k]; ok {
			return badRequest("FORBIDDEN_CLAIM : " + k)
		}
	}
	return nil
}

// validateSerializedClaims checks a customAttributes string.
func validateSerializedClaims(s string) error {
	if len([]rune(s)) > maxCustomAttributes {
		return badRequest("CLAIMS_TOO_LARGE")
	}
	var v any
	if err := jsonNumbers([]byte(s), &v); err != nil {
		return badRequest("INVALID_CLAIMS")
	}
	return validateClaims(v)
}
