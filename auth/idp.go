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
	return e.idp.signIn(c, req)
}

// idpFlow is sign-in with a federated identity (the emulator's fake IdP:
// OAuth providers, OIDC and SAML) and the identities its sign-in page
// offers.
type idpFlow struct{ *core }

// idpSignIn is one accounts:signInWithIdp request as it goes through its
// steps: the credential read, the response described from it, the account
// it names and the changes to make to that account.
type idpSignIn struct {
	f   idpFlow
	c   Call
	sc  scope
	req SignInWithIdpRequest

	providerID       string
	idTok, accessTok string
	claims           map[string]any
	rawClaims        string         // claims as compact JSON in their order
	saml             map[string]any // the SAMLResponse, when sent
	rawID, email     string

	resp *SignInWithIdpResponse
	upd  idpUpdates
}

// idpUpdates are the fields a sign-in sets on its account; nil pointers
// leave a field alone.
type idpUpdates struct {
	set                               bool
	displayName, photoURL, screenName *string
	email                             *string
	emailVerified                     *bool
	clearPassword                     bool
	validSince                        bool
}

func (f idpFlow) signIn(c Call, req SignInWithIdpRequest) (*SignInWithIdpResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if req.ReturnRefreshToken {
		return nil, NotImplemented("returnRefreshToken is not implemented yet.")
	}
	if req.PendingIDToken != "" {
		return nil, NotImplemented("pendingIdToken is not implemented yet.")
	}
	s := &idpSignIn{f: f, c: c, sc: sc, req: req}
	if err := s.readCredential(); err != nil {
		return nil, err
	}
	s.describe()
	if done, err := s.resolveAccount(); err != nil {
		return nil, err
	} else if done {
		return s.resp, nil
	}
	stored, err := s.storeAccount()
	if err != nil {
		return nil, err
	}
	return s.finish(stored)
}

// readCredential reads the provider, its claims (id_token, else
// access_token) and the SAML response from requestUri and postBody, with
// the emulator's errors for each missing or malformed piece.
func (s *idpSignIn) readCredential() error {
	q, normalized, err := normalizedIdpParams(s.req)
	if err != nil {
		return err
	}
	s.providerID = strings.ToLower(q.Get("providerId"))
	if s.providerID == "" {
		return badRequest("INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: " + normalized)
	}
	s.idTok, s.accessTok = q.Get("id_token"), q.Get("access_token")
	if err := s.readClaims(); err != nil {
		return err
	}
	if !s.sc.space.idpEnabled(s.providerID) {
		return ErrOperationNotAllowed
	}
	if s.saml, err = parseSAMLResponse(q.Get("SAMLResponse")); err != nil {
		return err
	}
	s.rawID = claimString(s.claims, "sub")
	if e := claimString(s.claims, "email"); e != "" {
		s.email = canonicalEmail(e)
	}
	return nil
}

// readClaims parses the fake id_token, else the access_token; without
// claims it answers why, as the emulator does.
func (s *idpSignIn) readClaims() error {
	var err error
	if s.claims, s.rawClaims, err = parseIdpClaims(s.idTok); err != nil {
		return err
	}
	if s.claims == nil {
		if s.claims, s.rawClaims, err = parseIdpClaims(s.accessTok); err != nil {
			return err
		}
	}
	if s.claims != nil {
		return nil
	}
	switch {
	case s.idTok != "":
		return badRequest("INVALID_IDP_RESPONSE : Unable to parse id_token: " + s.idTok + " ((Auth Emulator only accepts strict JSON or JWTs as fake id_tokens.))")
	case s.accessTok != "" && (s.providerID == "google.com" || s.providerID == "apple.com"):
		return NotImplemented("The Auth Emulator only support sign-in with " + s.providerID + " using id_token, not access_token. Please update your code to use id_token.")
	case s.accessTok != "":
		return NotImplemented("The Auth Emulator does not support " + s.providerID + " sign-in with credentials.")
	default:
		return NotImplemented("The Auth Emulator only supports sign-in with credentials (id_token required).")
	}
}

// parseSAMLResponse reads the fake SAML response (JSON with
// assertion.subject.nameId); "" is none.
func parseSAMLResponse(sr string) (map[string]any, error) {
	if sr == "" {
		return nil, nil
	}
	var saml map[string]any
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
	return saml, nil
}

// samlAssertion is the SAML response's assertion, nil without one.
func (s *idpSignIn) samlAssertion() map[string]any {
	a, _ := s.saml["assertion"].(map[string]any)
	return a
}

// describe fills the response's profile from the claims: Google's and
// SAML's own shapes, any other provider's claims as sent.
func (s *idpSignIn) describe() {
	cl := s.claims
	r := &SignInWithIdpResponse{Kind: "identitytoolkit#VerifyAssertionResponse", ProviderID: s.providerID,
		DisplayName: claimString(cl, "name"), FullName: claimString(cl, "name"), ScreenName: claimString(cl, "screen_name"),
		Email: s.email, EmailVerified: truthy(cl["email_verified"]), PhotoURL: claimString(cl, "picture"), FederatedID: s.rawID}
	s.resp = r
	switch {
	case s.providerID == "google.com":
		r.FederatedID = "https://accounts.google.com/" + s.rawID
		r.FirstName, r.LastName = claimString(cl, "given_name"), claimString(cl, "family_name")
		r.RawUserInfo = googleRawUserInfo(r, s.rawID, s.email)
	case strings.HasPrefix(s.providerID, "saml."):
		s.describeSAML()
	default:
		r.RawUserInfo = s.rawClaims
	}
	r.OAuthAccessToken = s.accessTok
	if r.OAuthAccessToken == "" {
		r.OAuthAccessToken = "FirebaseAuthEmulatorFakeAccessToken_" + s.providerID
	}
	r.OAuthIDToken = s.idTok
}

// googleRawUserInfo is Google's userinfo as the emulator serializes it:
// its field order, empty fields left out.
func googleRawUserInfo(r *SignInWithIdpResponse, rawID, email string) string {
	scopes := "openid https://www.googleapis.com/auth/userinfo.profile"
	if email != "" {
		scopes += " https://www.googleapis.com/auth/userinfo.email"
	}
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
	field("name", r.DisplayName)
	field("given_name", r.FirstName)
	field("family_name", r.LastName)
	field("verified_email", r.EmailVerified)
	field("locale", "en")
	field("email", email)
	field("picture", r.PhotoURL)
	b.WriteByte('}')
	return b.String()
}

// describeSAML is the emulator's fake SAML: the subject's nameId is the
// email when it is one, the email counts as verified, rawUserInfo is the
// assertion's attribute statements.
func (s *idpSignIn) describeSAML() {
	a := s.samlAssertion()
	if a != nil {
		sub, _ := a["subject"].(map[string]any)
		if n, _ := sub["nameId"].(string); isValidEmail(n) {
			// Kept as sent (not lower-cased), as the emulator does.
			s.resp.Email, s.email = n, n
		}
	}
	s.resp.EmailVerified = true
	var attrs any
	if a != nil {
		attrs = a["attributeStatements"]
	}
	if attrs != nil {
		b, _ := json.Marshal(attrs)
		s.resp.RawUserInfo = string(b)
	}
}

// resolveAccount finds the account the identity signs in to and what to
// change on it: the idToken's account (linking), the account already
// linked, an account with the same email, or a new one. done means the
// response is final (a confirmation is needed, or a refusal returned as
// errorMessage).
func (s *idpSignIn) resolveAccount() (done bool, err error) {
	var fromToken *User
	if s.req.IDToken != "" {
		t, err := s.f.parseIDToken(s.sc, s.req.IDToken)
		if err != nil {
			return false, err
		}
		fromToken = t.user
	}
	sp, r := s.sc.space, s.resp
	matching := sp.byProviderRawID(s.providerID, s.rawID)
	switch {
	case fromToken != nil:
		return s.linkTo(fromToken, matching)
	case matching != nil:
		r.LocalID = matching.LocalID
	case s.sc.oneAccountPerEmail() && s.email != "" && sp.byEmailAddr(s.email) != nil:
		return s.matchEmail(sp.byEmailAddr(s.email)), nil
	default:
		s.signUp()
	}
	return false, nil
}

// refuse ends the sign-in with err, or with the response carrying it as
// errorMessage when the client asked for the IdP credential back.
func (s *idpSignIn) refuse(err error) (bool, error) {
	if s.req.ReturnIdpCredential {
		s.resp.ErrorMessage = err.Error()
		return true, nil
	}
	return true, err
}

// linkTo links the identity to the idToken's account: refused when the
// identity is linked already or its email belongs to another account.
func (s *idpSignIn) linkTo(u, matching *User) (bool, error) {
	if matching != nil {
		return s.refuse(ErrFederatedUserIDLinked)
	}
	one, email := s.sc.oneAccountPerEmail(), s.email
	if one && email != "" {
		if m := s.sc.space.byEmailAddr(email); m != nil && m.LocalID != u.LocalID {
			return s.refuse(ErrEmailExists)
		}
	}
	s.resp.LocalID = u.LocalID
	s.upd.set = true
	if one && email != "" && u.Email == "" {
		s.upd.email, s.upd.emailVerified = &email, ptr(s.resp.EmailVerified)
	}
	target := u.Email
	if s.upd.email != nil {
		target = *s.upd.email
	}
	if email != "" && s.resp.EmailVerified && target == email {
		s.upd.emailVerified = ptr(true)
	}
	return false, nil
}

// matchEmail handles an identity whose email an account has already: an
// unverified email needs the user to confirm (done), a verified one takes
// the account over, dropping its password and phone when its own email was
// not verified.
func (s *idpSignIn) matchEmail(m *User) (done bool) {
	r := s.resp
	if !r.EmailVerified {
		r.NeedConfirmation, r.LocalID = true, m.LocalID
		for _, p := range m.ProviderUserInfo {
			if p.ProviderID != ProviderPassword && p.ProviderID != ProviderPhone {
				r.VerifiedProvider = append(r.VerifiedProvider, p.ProviderID)
			}
		}
		return true
	}
	for _, p := range m.ProviderUserInfo {
		if p.ProviderID == s.providerID && p.RawID != s.rawID {
			r.EmailRecycled = true
		}
	}
	r.LocalID = m.LocalID
	s.upd = idpUpdates{set: true, displayName: &r.DisplayName, photoURL: &r.PhotoURL, screenName: &r.ScreenName, emailVerified: ptr(true)}
	if !m.isEmailVerified() {
		s.upd.clearPassword, s.upd.validSince = true, true
	}
	return false
}

// signUp makes the sign-in create an account with the identity's profile
// (and its email, when an email names one account).
func (s *idpSignIn) signUp() {
	r := s.resp
	r.IsNewUser = true
	s.upd = idpUpdates{set: true, displayName: &r.DisplayName, photoURL: &r.PhotoURL, screenName: &r.ScreenName}
	if s.sc.oneAccountPerEmail() && s.email != "" {
		s.upd.email, s.upd.emailVerified = &s.email, ptr(r.EmailVerified)
	}
}

// apply sets the sign-in's field updates on u.
func (s *idpSignIn) apply(u *User) {
	upd := s.upd
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
		u.ValidSince = s.f.seconds()
	}
}

// identity is the provider record the account gets (or has refreshed).
func (s *idpSignIn) identity() ProviderUserInfo {
	r := s.resp
	return ProviderUserInfo{ProviderID: s.providerID, RawID: s.rawID, FederatedID: s.rawID, DisplayName: r.DisplayName,
		PhotoURL: r.PhotoURL, Email: s.email, ScreenName: r.ScreenName}
}

// blockingOpts are what the blocking functions are told of this sign-in.
func (s *idpSignIn) blockingOpts() blockingOpts {
	r := s.resp
	bo := blockingOpts{signInMethod: s.providerID, rawUserInfo: r.RawUserInfo, uniqueEmail: s.sc.oneAccountPerEmail(),
		oauth: map[string]any{"oauth_access_token": r.OAuthAccessToken, "oauth_id_token": r.OAuthIDToken}}
	if a := s.saml["assertion"]; a != nil {
		// The emulator sends the SAML assertion's attributes to blocking
		// functions as JSON text.
		if am, _ := a.(map[string]any); am != nil {
			if b, err := json.Marshal(am["attributeStatements"]); err == nil && len(b) > 0 {
				bo.signInAttributes = string(b)
			}
		}
	}
	return bo
}

// storeAccount creates the account (after beforeCreate) or applies the
// updates and the identity to the existing one.
func (s *idpSignIn) storeAccount() (*User, error) {
	f, sc, info := s.f, s.sc, s.identity()
	detail := map[string]any{"provider": s.providerID}
	if s.resp.IsNewUser {
		now := f.millis()
		nu := &User{LocalID: f.newLocalID(sc.space), CreatedAt: now, LastLoginAt: now, TenantID: sc.tenantID()}
		s.apply(nu)
		nu, err := f.block.beforeCreate(sc, nu, s.blockingOpts(), info)
		if err != nil {
			return nil, err
		}
		stored := sc.space.put(nu, []ProviderUserInfo{info}, nil)
		s.resp.LocalID = stored.LocalID
		f.emit(s.c, sc, OpUserCreate, stored.LocalID, nil, stored, detail)
		return stored, nil
	}
	before := sc.space.get(s.resp.LocalID)
	if before == nil {
		return nil, ErrUserNotFound
	}
	nu := before.clone()
	s.apply(nu)
	stored := sc.space.put(nu, []ProviderUserInfo{info}, nil)
	f.emit(s.c, sc, OpUserUpdate, stored.LocalID, before, stored, detail)
	return stored, nil
}

// finish signs the stored account in: a pending second factor when the
// account needs one, else beforeSignIn, lastLoginAt and tokens (with the
// SAML attributes).
func (s *idpSignIn) finish(stored *User) (*SignInWithIdpResponse, error) {
	f, sc, resp := s.f, s.sc, s.resp
	if stored.Email == resp.Email {
		resp.EmailVerified = stored.isEmailVerified()
	}
	resp.TenantID = sc.tenantID()
	if stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	if sc.mfaRequired(stored) {
		resp.MFAPending = f.mfaPending(sc, stored, s.providerID)
		return resp, nil
	}
	var attrs any
	if a := s.samlAssertion(); a != nil {
		attrs = a["attributeStatements"]
	}
	stored, extra, err := f.block.beforeSignIn(s.c, sc, stored, s.blockingOpts())
	if err != nil {
		return nil, err
	}
	if stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	nu := stored.clone()
	nu.LastLoginAt = f.millis()
	nu = sc.space.put(nu, nil, nil)
	after, toks := f.issueTokensAttrs(sc, nu, s.providerID, extra, nil, attrs)
	resp.Tokens = toks
	f.emit(s.c, sc, OpSignIn, stored.LocalID, stored, after, map[string]any{"provider": s.providerID})
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
	return e.idp.accounts(c, providerID)
}

func (f idpFlow) accounts(c Call, providerID string) ([]ProviderUserInfo, error) {
	sc, err := f.scopeFor(c, "", "", nil)
	if err != nil {
		return nil, err
	}
	out := []ProviderUserInfo{}
	sc.space.eachUser(func(u *User) {
		for _, pi := range u.ProviderUserInfo {
			if pi.ProviderID == providerID && len(out) < maxIdpAccounts {
				out = append(out, pi)
			}
		}
	})
	slices.SortFunc(out, func(a, b ProviderUserInfo) int {
		if c := strings.Compare(a.Email, b.Email); c != 0 {
			return c
		}
		return strings.Compare(a.RawID, b.RawID)
	})
	return out, nil
}
