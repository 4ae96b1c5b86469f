package auth

import (
	"strconv"
	"time"
)

// Tokens are the credentials a sign-in returns.
type Tokens struct {
	IDToken      string `json:"idToken,omitempty"`
	RefreshToken string `json:"refreshToken,omitempty"`
	ExpiresIn    string `json:"expiresIn,omitempty"`
}

// issueTokens stamps lastRefreshAt and mints an ID token and a refresh
// token for u. It returns the stored user.
func (e *core) issueTokens(sc scope, u *User, provider string, extra map[string]any) (*User, Tokens) {
	return e.issueTokensMFA(sc, u, provider, extra, nil)
}

// secondFactor names the second factor a sign-in passed.
type secondFactor struct {
	Identifier string `json:"identifier"`
	Provider   string `json:"provider"`
}

// issueTokensMFA is issueTokens after a second factor: the ID token says
// which (firebase.sign_in_second_factor, second_factor_identifier).
func (e *core) issueTokensMFA(sc scope, u *User, provider string, extra map[string]any, sf *secondFactor) (*User, Tokens) {
	return e.issueTokensAttrs(sc, u, provider, extra, sf, nil)
}

// issueTokensAttrs also puts a SAML assertion's attribute statements in the
// ID token (firebase.sign_in_attributes), as the emulator does.
func (e *core) issueTokensAttrs(sc scope, u *User, provider string, extra map[string]any, sf *secondFactor, attrs any) (*User, Tokens) {
	nu := u.clone()
	nu.LastRefreshAt = e.now().UTC().Format("2006-01-02T15:04:05.000Z")
	nu = sc.space.put(nu, nil, nil)
	claims := e.idTokenClaims(sc, nu, provider, extra, idTokenTTL)
	rt := RefreshToken{LocalID: nu.LocalID, Provider: provider, ExtraClaims: extra, ProjectID: sc.project.id, TenantID: nu.TenantID,
		IssuedAt: e.now().Unix()}
	if attrs != nil {
		claims["firebase"].(map[string]any)["sign_in_attributes"] = attrs
	}
	if sf != nil {
		fb := claims["firebase"].(map[string]any)
		fb["sign_in_second_factor"], fb["second_factor_identifier"] = sf.Provider, sf.Identifier
		rt.SecondFactor = map[string]any{"identifier": sf.Identifier, "provider": sf.Provider}
	}
	return nu, Tokens{IDToken: EncodeUnsignedJWT(claims), RefreshToken: rt.Encode(), ExpiresIn: strconv.Itoa(idTokenTTL)}
}

// idTokenClaims builds the emulator's ID token payload: profile claims,
// then custom claims (stored and per-sign-in), then the standard claims,
// which custom claims cannot shadow.
func (e *core) idTokenClaims(sc scope, u *User, provider string, extra map[string]any, ttl int64) map[string]any {
	// Sized for the claims every token has (up to 14) and the extra
	// and custom ones, so that it is not grown several times over.
	c := make(map[string]any, 14+len(extra))
	if u.DisplayName != "" {
		c["name"] = u.DisplayName
	}
	if u.PhotoURL != "" {
		c["picture"] = u.PhotoURL
	}
	if u.CustomAttributes != "" {
		for k, v := range u.claims() {
			c[k] = v
		}
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
	c["auth_time"] = authTime(u, e.now()).Unix()
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
	if tid := sc.tenantID(); tid != "" {
		fb["tenant"] = tid
	}
	c["firebase"] = fb
	iat := e.now().Unix()
	c["iat"] = iat
	c["exp"] = iat + ttl
	c["aud"] = sc.project.id
	c["iss"] = "https://securetoken.google.com/" + sc.project.id
	c["sub"] = u.LocalID
	return c
}

// authTime is the last sign-in time (lastLoginAt, else lastRefreshAt).
func authTime(u *User, now time.Time) time.Time {
	if ms, err := strconv.ParseInt(u.LastLoginAt, 10, 64); err == nil {
		return time.UnixMilli(ms)
	}
	if t, err := time.Parse(time.RFC3339Nano, u.LastRefreshAt); err == nil {
		return t
	}
	return now
}

// parsedIDToken is a validated ID token and its user.
type parsedIDToken struct {
	user     *User
	provider string
	payload  map[string]any
}

// parseIDToken decodes an ID token without verifying its signature (the
// emulator accepts any alg and does not check exp), finds its user, and
// enforces revocation (iat < validSince is TOKEN_EXPIRED) and disabling.
func (e *core) parseIDToken(sc scope, tok string) (*parsedIDToken, error) {
	j, err := sc.decodeJWT(tok)
	if err != nil || j.Payload == nil {
		// The emulator crashes (500) on a JWT whose payload is not an
		// object; an invalid token is the honest answer.
		return nil, ErrInvalidIDToken
	}
	fb, _ := j.Payload["firebase"].(map[string]any)
	if t, _ := fb["tenant"].(string); t != "" {
		if sc.tenant == nil {
			return nil, badRequest("((Parsed token that belongs to tenant in a non-tenant project.))")
		}
		if t != sc.tenantID() {
			return nil, ErrTenantIDMismatch
		}
	}
	uid, _ := primitiveString(j.Payload["user_id"])
	u := sc.space.get(uid)
	if u == nil {
		return nil, ErrUserNotFound
	}
	if u.ValidSince != "" {
		vs, _ := strconv.ParseFloat(u.ValidSince, 64)
		iat, ok := num(j.Payload["iat"])
		if !ok || iat < vs {
			return nil, ErrTokenExpired
		}
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	p, _ := fb["sign_in_provider"].(string)
	return &parsedIDToken{user: u, provider: p, payload: j.Payload}, nil
}
