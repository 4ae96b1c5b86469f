package auth

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// SignInWithIdpRequest is accounts:signInWithIdp. The emulator's fake IdP
// flow puts the provider's credential in postBody (or requestUri):
// "providerId=google.com&id_token=<JWT or strict JSON claims>".
type SignInWithIdpRequest struct {
	RequestURI          string `json:"requestUri,omitempty"`
	PostBody            string `json:"postBody,omitempty"`
	IDToken             string `json:"idToken,omitempty"`
	ReturnIdpCredential bool   `json:"returnIdpCredential,omitempty"`
	ReturnRefreshToken  bool   `json:"returnRefreshToken,omitempty"`
	ReturnSecureToken   bool   `json:"returnSecureToken,omitempty"`
	PendingIDToken      string `json:"pendingIdToken,omitempty"`
	SessionID           string `json:"sessionId,omitempty"`
	TenantID            string `json:"tenantId,omitempty"`
}

// SignInWithIdpResponse is identitytoolkit#VerifyAssertionResponse.
type SignInWithIdpResponse struct {
	Kind             string   `json:"kind"`
	Context          string   `json:"context"`
	ProviderID       string   `json:"providerId"`
	DisplayName      string   `json:"displayName,omitempty"`
	FullName         string   `json:"fullName,omitempty"`
	ScreenName       string   `json:"screenName,omitempty"`
	Email            string   `json:"email,omitempty"`
	EmailVerified    bool     `json:"emailVerified"`
	PhotoURL         string   `json:"photoUrl,omitempty"`
	FirstName        string   `json:"firstName,omitempty"`
	LastName         string   `json:"lastName,omitempty"`
	RawUserInfo      string   `json:"rawUserInfo,omitempty"`
	FederatedID      string   `json:"federatedId"`
	OAuthAccessToken string   `json:"oauthAccessToken,omitempty"`
	OAuthIDToken     string   `json:"oauthIdToken,omitempty"`
	LocalID          string   `json:"localId,omitempty"`
	IsNewUser        bool     `json:"isNewUser,omitempty"`
	NeedConfirmation bool     `json:"needConfirmation,omitempty"`
	VerifiedProvider []string `json:"verifiedProvider,omitempty"`
	EmailRecycled    bool     `json:"emailRecycled,omitempty"`
	ErrorMessage     string   `json:"errorMessage,omitempty"`
	TenantID         string   `json:"tenantId,omitempty"`
	Tokens
	MFAPending
}

// normalizedIdpParams merges requestUri's query, postBody and the fragment.
func normalizedIdpParams(req SignInWithIdpRequest) (url.Values, string, error) {
	if req.RequestURI == "" {
		return nil, "", badRequest("MISSING_REQUEST_URI")
	}
	u, err := url.Parse(req.RequestURI)
	if err != nil || u.Scheme == "" {
		return nil, "", badRequest("INVALID_REQUEST_URI")
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss", "ftp", "file":
		// WHATWG URL parsing (the emulator's) gives special schemes a "/" path.
		if u.Path == "" && u.Opaque == "" {
			u.Path = "/"
		}
	}
	q := u.Query()
	if req.PostBody != "" {
		pb, _ := url.ParseQuery(req.PostBody)
		for k, v := range pb {
			q[k] = v[:1]
		}
	}
	if u.Fragment != "" {
		fq, _ := url.ParseQuery(u.Fragment)
		for k, v := range fq {
			q[k] = v[:1]
		}
		u.Fragment = ""
	}
	u.RawQuery = q.Encode()
	return q, u.String(), nil
}

// parseIdpClaims reads a fake IdP id_token: strict JSON or an unverified
// JWT. It also returns the claims as compact JSON in their original order
// (rawUserInfo echoes them).
func parseIdpClaims(tok string) (map[string]any, string, error) {
	if tok == "" {
		return nil, "", nil
	}
	var claims map[string]any
	var raw []byte
	if strings.HasPrefix(tok, "{") {
		if err := jsonNumbers([]byte(tok), &claims); err != nil || claims == nil {
			return nil, "", badRequest("INVALID_IDP_RESPONSE : Unable to parse id_token: " + tok + " ((Auth Emulator failed to parse fake id_token as strict JSON.))")
		}
		raw = []byte(tok)
	} else {
		j, err := DecodeJWT(tok)
		if err != nil || j.Payload == nil {
			return nil, "", nil
		}
		claims = j.Payload
		raw = b64url(strings.SplitN(tok, ".", 3)[1])
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		b, _ := json.Marshal(claims)
		buf.Reset()
		buf.Write(b)
	}
	if !truthy(claims["sub"]) {
		return nil, "", badRequest(`INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing required fields. ((Missing "sub" field. This field is required and must be a unique identifier.))`)
	}
	if _, ok := claims["sub"].(string); !ok {
		return nil, "", badRequest(`INVALID_IDP_RESPONSE : ((The "sub" field must be a string.))`)
	}
	return claims, buf.String(), nil
}

func claimString(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// SignInWithIdp signs in with a (fake) federated credential: it creates
// the account on first use, signs in the account linked to the identity,
// or links the identity to the idToken's account.
func (e *Engine) SignInWithIdp(c Call, req SignInWithIdpRequest) (_ *SignInWithIdpResponse, err error) {
	defer e.begin()(&err)
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, "")
	if err != nil {
		return nil, err
	}
	if req.ReturnRefreshToken {
		return nil, NotImplemented("returnRefreshToken is not implemented yet.")
	}
	if req.PendingIDToken != "" {
		return nil, NotImplemented("pendingIdToken is not implemented yet.")
	}
	q, normalized, err := normalizedIdpParams(req)
	if err != nil {
		return nil, err
	}
	providerID := strings.ToLower(q.Get("providerId"))
	if providerID == "" {
		return nil, badRequest("INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: " + normalized)
	}
	idTok, accessTok := q.Get("id_token"), q.Get("access_token")
	claims, rawClaims, err := parseIdpClaims(idTok)
	if err != nil {
		return nil, err
	}
	if claims == nil {
		if claims, rawClaims, err = parseIdpClaims(accessTok); err != nil {
			return nil, err
		}
	}
	if claims == nil {
		switch {
		case idTok != "":
			return nil, badRequest("INVALID_IDP_RESPONSE : Unable to parse id_token: " + idTok + " ((Auth Emulator only accepts strict JSON or JWTs as fake id_tokens.))")
		case accessTok != "" && (providerID == "google.com" || providerID == "apple.com"):
			return nil, NotImplemented("The Auth Emulator only support sign-in with " + providerID + " using id_token, not access_token. Please update your code to use id_token.")
		case accessTok != "":
			return nil, NotImplemented("The Auth Emulator does not support " + providerID + " sign-in with credentials.")
		default:
			return nil, NotImplemented("The Auth Emulator only supports sign-in with credentials (id_token required).")
		}
	}
	if !sc.space.idpEnabled(providerID) {
		return nil, ErrOperationNotAllowed
	}
	var saml map[string]any
	if sr := q.Get("SAMLResponse"); sr != "" {
		if json.Unmarshal([]byte(sr), &saml) != nil {
			return nil, badRequest("INVALID_IDP_RESPONSE ((SAMLResponse is not JSON.))")
		}
		a, _ := saml["assertion"].(map[string]any)
		if a == nil {
			return nil, badRequest("INVALID_IDP_RESPONSE ((Missing assertion in SAMLResponse.))")
		}
		sub, _ := a["subject"].(map[string]any)
		if sub == nil {
			return nil, badRequest("INVALID_IDP_RESPONSE ((Missing assertion.subject in SAMLResponse.))")
		}
		if _, ok := sub["nameId"]; !ok {
			return nil, badRequest("INVALID_IDP_RESPONSE ((Missing assertion.subject.nameId in SAMLResponse.))")
		}
	}
	rawID := claimString(claims, "sub")
	email := ""
	if s := claimString(claims, "email"); s != "" {
		email = canonicalEmail(s)
	}
	resp := &SignInWithIdpResponse{Kind: "identitytoolkit#VerifyAssertionResponse", ProviderID: providerID,
		DisplayName: claimString(claims, "name"), FullName: claimString(claims, "name"), ScreenName: claimString(claims, "screen_name"),
		Email: email, EmailVerified: truthy(claims["email_verified"]), PhotoURL: claimString(claims, "picture"), FederatedID: rawID}
	if providerID == "google.com" {
		resp.FederatedID = "https://accounts.google.com/" + rawID
		scopes := "openid https://www.googleapis.com/auth/userinfo.profile"
		if email != "" {
			scopes += " https://www.googleapis.com/auth/userinfo.email"
		}
		resp.FirstName, resp.LastName = claimString(claims, "given_name"), claimString(claims, "family_name")
		// Field order as the emulator serializes it; empty ones are left out.
		var b bytes.Buffer
		b.WriteByte('{')
		field := func(k string, v any) {
			if s, ok := v.(string); ok && s == "" {
				return
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(v)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(vb)
		}
		field("granted_scopes", scopes)
		field("id", rawID)
		field("name", resp.DisplayName)
		field("given_name", resp.FirstName)
		field("family_name", resp.LastName)
		field("verified_email", resp.EmailVerified)
		field("locale", "en")
		field("email", email)
		field("picture", resp.PhotoURL)
		b.WriteByte('}')
		resp.RawUserInfo = b.String()
	} else if strings.HasPrefix(providerID, "saml.") {
		// The emulator's fake SAML: the subject's nameId is the email when it
		// is one, the email counts as verified, rawUserInfo is the
		// assertion's attribute statements.
		var a map[string]any
		if saml != nil {
			a, _ = saml["assertion"].(map[string]any)
		}
		if a != nil {
			sub, _ := a["subject"].(map[string]any)
			if n, _ := sub["nameId"].(string); isValidEmail(n) {
				// Kept as sent (not lower-cased), as the emulator does.
				resp.Email, email = n, n
			}
		}
		resp.EmailVerified = true
		var attrs any
		if a != nil {
			attrs = a["attributeStatements"]
		}
		if attrs != nil {
			b, _ := json.Marshal(attrs)
			resp.RawUserInfo = string(b)
		}
	} else {
		resp.RawUserInfo = rawClaims
	}
	resp.OAuthAccessToken = accessTok
	if resp.OAuthAccessToken == "" {
		resp.OAuthAccessToken = "FirebaseAuthEmulatorFakeAccessToken_" + providerID
	}
	resp.OAuthIDToken = idTok

	var fromToken *User
	if req.IDToken != "" {
		t, err := e.parseIDToken(sc, req.IDToken)
		if err != nil {
			return nil, err
		}
		fromToken = t.user
	}
	matching := sc.space.byProviderRawID(providerID, rawID)

	// fields to apply to the account; nil pointers leave a field alone.
	type fieldUpdates struct {
		set                               bool
		displayName, photoURL, screenName *string
		email                             *string
		emailVerified                     *bool
		clearPassword                     bool
		validSince                        bool
	}
	var upd fieldUpdates
	fail := func(err error) (*SignInWithIdpResponse, error) {
		if req.ReturnIdpCredential {
			resp.ErrorMessage = err.Error()
			return resp, nil
		}
		return nil, err
	}
	signUp := func(emailRequired bool) {
		resp.IsNewUser = true
		upd = fieldUpdates{set: true, displayName: &resp.DisplayName, photoURL: &resp.PhotoURL, screenName: &resp.ScreenName}
		if emailRequired && email != "" {
			upd.email, upd.emailVerified = &email, ptr(resp.EmailVerified)
		}
	}
	switch {
	case fromToken != nil:
		if matching != nil {
			return fail(ErrFederatedUserIDLinked)
		}
		if sc.oneAccountPerEmail() && email != "" {
			if m := sc.space.byEmailAddr(email); m != nil && m.LocalID != fromToken.LocalID {
				return fail(ErrEmailExists)
			}
		}
		resp.LocalID = fromToken.LocalID
		upd.set = true
		if sc.oneAccountPerEmail() && email != "" && fromToken.Email == "" {
			upd.email, upd.emailVerified = &email, ptr(resp.EmailVerified)
		}
		target := fromToken.Email
		if upd.email != nil {
			target = *upd.email
		}
		if email != "" && resp.EmailVerified && target == email {
			upd.emailVerified = ptr(true)
		}
	case matching != nil:
		resp.LocalID = matching.LocalID
	case sc.oneAccountPerEmail() && email != "" && sc.space.byEmailAddr(email) != nil:
		m := sc.space.byEmailAddr(email)
		if !resp.EmailVerified {
			resp.NeedConfirmation, resp.LocalID = true, m.LocalID
			for _, p := range m.ProviderUserInfo {
				if p.ProviderID != ProviderPassword && p.ProviderID != ProviderPhone {
					resp.VerifiedProvider = append(resp.VerifiedProvider, p.ProviderID)
				}
			}
			return resp, nil
		}
		for _, p := range m.ProviderUserInfo {
			if p.ProviderID == providerID && p.RawID != rawID {
				resp.EmailRecycled = true
			}
		}
		resp.LocalID = m.LocalID
		upd = fieldUpdates{set: true, displayName: &resp.DisplayName, photoURL: &resp.PhotoURL, screenName: &resp.ScreenName, emailVerified: ptr(true)}
		if !m.isEmailVerified() {
			upd.clearPassword, upd.validSince = true, true
		}
	default:
		signUp(sc.oneAccountPerEmail())
	}
	info := ProviderUserInfo{ProviderID: providerID, RawID: rawID, FederatedID: rawID, DisplayName: resp.DisplayName,
		PhotoURL: resp.PhotoURL, Email: email, ScreenName: resp.ScreenName}
	apply := func(u *User) {
		if !upd.set {
			return
		}
		if upd.displayName != nil {
			u.DisplayName = *upd.displayName
		}
		if upd.photoURL != nil {
			u.PhotoURL = *upd.photoURL
		}
		if upd.screenName != nil {
			u.ScreenName = *upd.screenName
		}
		if upd.email != nil {
			u.Email = *upd.email
		}
		if upd.emailVerified != nil {
			u.EmailVerified = upd.emailVerified
		}
		if upd.clearPassword {
			u.PasswordHash, u.PhoneNumber = "", ""
		}
		if upd.validSince {
			u.ValidSince = e.seconds()
		}
	}
	var before, stored *User
	var signInAttrs string
	if a := saml["assertion"]; a != nil {
		// The emulator sends the SAML assertion's attributes to blocking
		// functions as JSON text.
		if am, _ := a.(map[string]any); am != nil {
			if b, err := json.Marshal(am["attributeStatements"]); err == nil {
				signInAttrs = string(b)
			}
		}
	}
	bo := blockingOpts{signInMethod: providerID, rawUserInfo: resp.RawUserInfo, uniqueEmail: sc.oneAccountPerEmail(),
		oauth: map[string]any{"oauth_access_token": resp.OAuthAccessToken, "oauth_id_token": resp.OAuthIDToken}}
	if signInAttrs != "" {
		bo.signInAttributes = signInAttrs
	}
	if resp.IsNewUser {
		now := e.millis()
		nu := &User{LocalID: e.newLocalID(sc.space), CreatedAt: now, LastLoginAt: now, TenantID: sc.tenantID()}
		apply(nu)
		if nu, err = e.blockCreate(sc, nu, bo, info); err != nil {
			return nil, err
		}
		stored = sc.space.put(nu, []ProviderUserInfo{info}, nil)
		resp.LocalID = stored.LocalID
		e.emit(c, sc, OpUserCreate, stored.LocalID, nil, stored, map[string]any{"provider": providerID})
	} else {
		if before = sc.space.get(resp.LocalID); before == nil {
			return nil, ErrUserNotFound
		}
		nu := before.clone()
		apply(nu)
		stored = sc.space.put(nu, []ProviderUserInfo{info}, nil)
		e.emit(c, sc, OpUserUpdate, stored.LocalID, before, stored, map[string]any{"provider": providerID})
	}
	if stored.Email == resp.Email {
		resp.EmailVerified = stored.isEmailVerified()
	}
	resp.TenantID = sc.tenantID()
	if stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	if sc.mfaRequired(stored) {
		resp.MFAPending = e.mfaPending(sc, stored, providerID)
		return resp, nil
	}
	var attrs any
	if a, ok := saml["assertion"].(map[string]any); ok {
		attrs = a["attributeStatements"]
	}
	stored, extra, err := e.blockSignIn(c, sc, stored, bo)
	if err != nil {
		return nil, err
	}
	if stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	nu := stored.clone()
	nu.LastLoginAt = e.millis()
	nu = sc.space.put(nu, nil, nil)
	after, toks := e.issueTokensAttrs(sc, nu, providerID, extra, nil, attrs)
	resp.Tokens = toks
	e.emit(c, sc, OpSignIn, stored.LocalID, stored, after, map[string]any{"provider": providerID})
	return resp, nil
}

// maxIdpAccounts bounds the accounts the fake IdP page offers, so the page
// costs the same with 50,000 accounts as with ten.
const maxIdpAccounts = 100

// IdpAccounts returns the identities of providerID linked to accounts of
// the call's project or tenant (at most 100, ordered by email then raw id):
// the accounts the emulator's fake IdP sign-in page offers to reuse.
func (e *Engine) IdpAccounts(c Call, providerID string) (_ []ProviderUserInfo, err error) {
	defer e.begin()(&err)
	sc, err := e.scopeFor(c, "", "", "")
	if err != nil {
		return nil, err
	}
	out := []ProviderUserInfo{}
	for _, u := range sc.space.users {
		for _, pi := range u.ProviderUserInfo {
			if pi.ProviderID == providerID && len(out) < maxIdpAccounts {
				out = append(out, pi)
			}
		}
	}
	slices.SortFunc(out, func(a, b ProviderUserInfo) int {
		if c := strings.Compare(a.Email, b.Email); c != 0 {
			return c
		}
		return strings.Compare(a.RawID, b.RawID)
	})
	return out, nil
}
