package auth

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pyric/pyric/internal/jsonstr"
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
	return e.mintTokens(sc, u.clone(), provider, extra, sf, attrs)
}

// mintTokens is issueTokensAttrs for nu, a copy of the account the caller
// owns and has not stored yet: it stamps lastRefreshAt, stores nu and
// mints the tokens. A sign-in stamps lastLoginAt on the same copy, so
// that the account is stored once.
func (e *core) mintTokens(sc scope, nu *User, provider string, extra map[string]any, sf *secondFactor, attrs any) (*User, Tokens) {
	nu.LastRefreshAt = e.now().UTC().Format("2006-01-02T15:04:05.000Z")
	nu = sc.space.put(nu, nil, nil)
	claims := newIDClaims(nu, provider, extra, sc.project.id, sc.tenantID(), e.now(), idTokenTTL)
	claims.attrs, claims.secondFactor = attrs, sf
	rt := RefreshToken{LocalID: nu.LocalID, Provider: provider, ExtraClaims: extra, ProjectID: sc.project.id, TenantID: nu.TenantID,
		IssuedAt: e.now().Unix()}
	if sf != nil {
		rt.SecondFactor = map[string]any{"identifier": sf.Identifier, "provider": sf.Provider}
	}
	return nu, Tokens{IDToken: claims.token(), RefreshToken: rt.Encode(), ExpiresIn: strconv.Itoa(idTokenTTL)}
}

// idClaims is the emulator's ID token payload: profile claims, then custom
// claims (stored and per-sign-in), then the standard claims, which custom
// claims cannot shadow. It is encoded as json.Marshal encodes the same
// claims in a map (keys sorted), without building the map.
type idClaims struct {
	// custom are the stored and the sign-in's custom claims, less the
	// names the token sets itself; a custom name or picture replaces the
	// profile's.
	custom        map[string]any
	name, picture string
	email         string
	emailVerified *bool
	phoneNumber   string
	anonymous     bool // provider_id: "anonymous"
	uid           string
	authTime, iat int64
	ttl           int64
	project       string
	// firebase's members.
	identities []providerIDs // in order of provider, email first
	// idArr and emailIDs hold the identities of an account with at most
	// two providers and its email's ids in the claims' own allocation.
	idArr        [2]providerIDs
	emailIDs     [1]string
	provider     string
	tenant       string
	secondFactor *secondFactor
	attrs        any
}

// providerIDs is one provider's ids in firebase.identities.
type providerIDs struct {
	provider string
	ids      []string
}

// standardClaims are the names the token sets (or drops) whatever the
// custom claims say.
var standardClaims = map[string]bool{"email": true, "email_verified": true, "phone_number": true, "provider_id": true,
	"auth_time": true, "user_id": true, "firebase": true, "iat": true, "exp": true, "aud": true, "iss": true, "sub": true}

func newIDClaims(u *User, provider string, extra map[string]any, project, tenant string, now time.Time, ttl int64) *idClaims {
	c := &idClaims{name: u.DisplayName, picture: u.PhotoURL, email: u.Email, emailVerified: u.EmailVerified, phoneNumber: u.PhoneNumber,
		anonymous: provider == ProviderAnonymous, uid: u.LocalID, authTime: authTime(u, now).Unix(), iat: now.Unix(), ttl: ttl,
		project: project, provider: provider, tenant: tenant}
	if u.CustomAttributes != "" || len(extra) > 0 {
		c.custom = map[string]any{}
		if u.CustomAttributes != "" {
			for k, v := range u.claims() {
				c.custom[k] = v
			}
		}
		for k, v := range extra {
			c.custom[k] = v
		}
		for k := range c.custom {
			if standardClaims[k] {
				delete(c.custom, k)
			}
		}
		if _, ok := c.custom["name"]; ok {
			c.name = ""
		}
		if _, ok := c.custom["picture"]; ok {
			c.picture = ""
		}
	}
	c.identities = c.idArr[:0]
	if u.Email != "" {
		c.emailIDs[0] = u.Email
		c.identities = append(c.identities, providerIDs{provider: "email", ids: c.emailIDs[:]})
	}
	for _, p := range u.ProviderUserInfo {
		if p.ProviderID == "" || p.ProviderID == ProviderPassword || p.RawID == "" {
			continue
		}
		if i := slices.IndexFunc(c.identities, func(id providerIDs) bool { return id.provider == p.ProviderID }); i >= 0 {
			c.identities[i].ids = append(c.identities[i].ids, p.RawID)
		} else {
			c.identities = append(c.identities, providerIDs{provider: p.ProviderID, ids: []string{p.RawID}})
		}
	}
	return c
}

// token is the unsigned JWT of the claims.
func (c *idClaims) token() string {
	return encodeJSON(c.appendJSON, unsignedJWT)
}

// appendJSON appends the claims' JSON, keys sorted as json.Marshal sorts
// a map's: the standard claims merged with the custom ones.
func (c *idClaims) appendJSON(b []byte) []byte {
	var keys []string
	if len(c.custom) > 0 {
		keys = make([]string, 0, len(c.custom)+14)
		for k := range c.custom {
			keys = append(keys, k)
		}
	} else {
		keys = make([]string, 0, 14)
	}
	keys = append(keys, "auth_time", "user_id", "firebase", "iat", "exp", "aud", "iss", "sub")
	if c.name != "" {
		keys = append(keys, "name")
	}
	if c.picture != "" {
		keys = append(keys, "picture")
	}
	if c.email != "" {
		keys = append(keys, "email")
	}
	if c.emailVerified != nil {
		keys = append(keys, "email_verified")
	}
	if c.phoneNumber != "" {
		keys = append(keys, "phone_number")
	}
	if c.anonymous {
		keys = append(keys, "provider_id")
	}
	b, _ = jsonstr.AppendObject(b, keys, func(b []byte, k string) ([]byte, bool) {
		if v, ok := c.custom[k]; ok {
			return appendJSON(b, v), true
		}
		switch k {
		case "auth_time":
			b = strconv.AppendInt(b, c.authTime, 10)
		case "user_id", "sub":
			b = jsonstr.Append(b, c.uid)
		case "firebase":
			b = c.appendFirebase(b)
		case "iat":
			b = strconv.AppendInt(b, c.iat, 10)
		case "exp":
			b = strconv.AppendInt(b, c.iat+c.ttl, 10)
		case "aud":
			b = jsonstr.Append(b, c.project)
		case "iss":
			// The prefix needs no escaping: the project's characters are
			// escaped as they would be in the whole.
			b = append(b, `"https://securetoken.google.com/`...)
			b = append(jsonstr.AppendChars(b, c.project), '"')
		case "name":
			b = jsonstr.Append(b, c.name)
		case "picture":
			b = jsonstr.Append(b, c.picture)
		case "email":
			b = jsonstr.Append(b, c.email)
		case "email_verified":
			b = strconv.AppendBool(b, *c.emailVerified)
		case "phone_number":
			b = jsonstr.Append(b, c.phoneNumber)
		case "provider_id":
			b = jsonstr.Append(b, ProviderAnonymous)
		}
		return b, true
	})
	return b
}

// appendFirebase appends the firebase claim: identities, the sign-in's
// provider, second factor and SAML attributes, and the tenant, keys
// sorted.
func (c *idClaims) appendFirebase(b []byte) []byte {
	b = append(b, `{"identities":{`...)
	ids := c.identities
	if len(ids) > 1 {
		ids = slices.Clone(ids)
		slices.SortFunc(ids, func(x, y providerIDs) int { return strings.Compare(x.provider, y.provider) })
	}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, id.provider)
		b = append(b, ':')
		b = appendStrings(b, id.ids)
	}
	b = append(b, '}')
	if c.secondFactor != nil {
		b = append(b, `,"second_factor_identifier":`...)
		b = jsonstr.Append(b, c.secondFactor.Identifier)
	}
	if c.attrs != nil {
		b = append(b, `,"sign_in_attributes":`...)
		b = appendJSON(b, c.attrs)
	}
	b = append(b, `,"sign_in_provider":`...)
	b = jsonstr.Append(b, c.provider)
	if c.secondFactor != nil {
		b = append(b, `,"sign_in_second_factor":`...)
		b = jsonstr.Append(b, c.secondFactor.Provider)
	}
	if c.tenant != "" {
		b = append(b, `,"tenant":`...)
		b = jsonstr.Append(b, c.tenant)
	}
	return append(b, '}')
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
	token    string
}

// payload is the token's payload decoded whole (parseIDToken checked it
// is a JSON object), for the rare call that copies every claim.
func (t *parsedIDToken) payload() map[string]any {
	j, err := DecodeJWT(t.token)
	if err != nil {
		return nil
	}
	return j.Payload
}

// parseIDToken decodes an ID token without verifying its signature (the
// emulator accepts any alg and does not check exp), finds its user, and
// enforces revocation (iat < validSince is TOKEN_EXPIRED) and disabling.
func (e *core) parseIDToken(sc scope, tok string) (*parsedIDToken, error) {
	claims, err := sc.claims(tok)
	if err != nil || !claims.object {
		// The emulator crashes (500) on a JWT whose payload is not an
		// object; an invalid token is the honest answer.
		return nil, ErrInvalidIDToken
	}
	if t := claims.tenant; t != "" {
		if sc.tenant == nil {
			return nil, badRequest("((Parsed token that belongs to tenant in a non-tenant project.))")
		}
		if t != sc.tenantID() {
			return nil, ErrTenantIDMismatch
		}
	}
	u := sc.space.get(claims.uid)
	if u == nil {
		return nil, ErrUserNotFound
	}
	if u.ValidSince != "" {
		vs, _ := strconv.ParseFloat(u.ValidSince, 64)
		if iat := claims.iat; !claims.iatOK || iat < vs {
			return nil, ErrTokenExpired
		}
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	return &parsedIDToken{user: u, provider: claims.provider, token: tok}, nil
}
