package identity

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// ErrInvalidJWT is returned for an Authorization header whose bearer token
// is neither "owner" nor JWT-shaped; the official emulators answer it with
// INVALID_ARGUMENT "invalid jwt".
var ErrInvalidJWT = errors.New("invalid jwt")

// FromAuthorization derives the caller from an HTTP/gRPC Authorization
// header exactly as the official emulators do: no header is unauthenticated;
// "Bearer owner" is admin; any other bearer must be a three-part JWT whose
// payload becomes the token claims, with uid = sub (possibly empty). The signature, alg,
// aud, iss and exp are deliberately not checked — SDK mock tokens are
// unsigned and expire in 1970.
func FromAuthorization(header string) (Identity, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return Anonymous(), nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Identity{}, ErrInvalidJWT
	}
	token = strings.TrimSpace(token)
	if token == "owner" {
		return AdminIdentity(), nil
	}
	claims, err := DecodeJWTPayload(token)
	if err != nil {
		return Identity{}, err
	}
	// The Firestore emulator takes the uid from sub only: a token carrying
	// just user_id authenticates a user without a uid (request.auth.uid is
	// undefined). Storage takes user_id instead; see UIDFromClaims.
	uid, _ := claims["sub"].(string)
	return NewUser(uid, claims), nil
}

// DecodeJWTPayload returns the claims of a JWT without verifying it. Numbers
// stay json.Number-free float64/ints as encoding/json decodes them into any,
// except that integral numbers are kept as int64 so rules see ints.
func DecodeJWTPayload(token string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, ErrInvalidJWT
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, ErrInvalidJWT
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var claims map[string]any
	if err := dec.Decode(&claims); err != nil || claims == nil {
		return nil, ErrInvalidJWT
	}
	return normalizeNumbers(claims).(map[string]any), nil
}

func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeNumbers(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = normalizeNumbers(x)
		}
		return v
	}
	return v
}
