package auth

import (
	"strconv"
)

// SignUpRequest is accounts:signUp, and the admin
// POST /v1/projects/{p}/accounts (create user).
type SignUpRequest struct {
	Email         *string         `json:"email,omitempty"`
	Password      string          `json:"password,omitempty"`
	DisplayName   string          `json:"displayName,omitempty"`
	PhotoURL      string          `json:"photoUrl,omitempty"`
	EmailVerified bool            `json:"emailVerified,omitempty"`
	PhoneNumber   string          `json:"phoneNumber,omitempty"`
	Disabled      bool            `json:"disabled,omitempty"`
	LocalID       string          `json:"localId,omitempty"`
	IDToken       string          `json:"idToken,omitempty"`
	TenantID      string          `json:"tenantId,omitempty"`
	MFAInfo       []MFAEnrollment `json:"mfaInfo,omitempty"`
}

// SignUpResponse is identitytoolkit#SignupNewUserResponse.
type SignUpResponse struct {
	Kind        string `json:"kind"`
	LocalID     string `json:"localId"`
	DisplayName string `json:"displayName,omitempty"`
	Email       string `json:"email,omitempty"`
	Tokens
}

// SignUp creates an account: anonymous or email/password for clients (then
// signs it in), any fields for an admin (no tokens). With an idToken of an
// anonymous user it upgrades that account in place.
func (e *Engine) SignUp(c Call, req SignUpRequest) (_ *SignUpResponse, err error) {
	defer e.begin()(&err)
	return e.password.signUp(c, req)
}

// passwordFlow is email/password sign-up and sign-in (and anonymous
// sign-up, the same accounts:signUp call without credentials).
type passwordFlow struct{ *core }

// signUpAccount is one accounts:signUp request as it goes through its
// steps: the account built from the request, then created, or written over
// the idToken's (anonymous) account.
type signUpAccount struct {
	f        passwordFlow
	c        Call
	sc       scope
	req      SignUpRequest
	email    string
	provider string // the sign-in provider of a client's sign-up; "" for an admin's
	u        *User
	extra    map[string]any // session claims a beforeSignIn function set
}

func (f passwordFlow) signUp(c Call, req SignUpRequest) (*SignUpResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	s := &signUpAccount{f: f, c: c, sc: sc, req: req}
	if req.Email != nil {
		s.email = *req.Email
	}
	if err := s.build(); err != nil {
		return nil, err
	}
	var before *User
	if req.IDToken != "" {
		t, err := f.parseIDToken(sc, req.IDToken)
		if err != nil {
			return nil, err
		}
		before = t.user
	}
	var stored *User
	if before == nil {
		stored, err = s.create()
	} else {
		stored = s.upgrade(before)
	}
	if err != nil {
		return nil, err
	}
	resp := &SignUpResponse{Kind: "identitytoolkit#SignupNewUserResponse", LocalID: stored.LocalID,
		DisplayName: stored.DisplayName, Email: stored.Email}
	if s.provider != "" {
		var after *User
		after, resp.Tokens = f.issueTokens(sc, stored, s.provider, s.extra)
		f.emit(c, sc, OpSignIn, after.LocalID, stored, after, map[string]any{"provider": s.provider})
	}
	return resp, nil
}

// build checks the request and makes the account it describes (not yet
// stored).
func (s *signUpAccount) build() error {
	req, f := s.req, s.f
	if err := checkProfile(&req.DisplayName, &req.PhotoURL); err != nil {
		return err
	}
	s.u = &User{LastLoginAt: f.millis()}
	var err error
	if s.c.admin() {
		err = s.fromAdmin()
	} else {
		err = s.fromClient()
	}
	if err != nil {
		return err
	}
	if err := s.setEmail(); err != nil {
		return err
	}
	u := s.u
	if req.Password != "" {
		if err := checkNewPassword(req.Password); err != nil {
			return err
		}
		u.Salt = f.newSalt()
		u.PasswordHash = hashPassword(req.Password, u.Salt)
		u.PasswordUpdatedAt = f.now().UnixMilli()
		u.ValidSince = f.seconds()
	}
	if len(req.MFAInfo) > 0 {
		if u.MFAInfo, err = f.validateEnrollments(req.MFAInfo, true); err != nil {
			return err
		}
	}
	u.TenantID = s.sc.tenantID()
	return nil
}

// fromAdmin takes the fields an admin may set (a chosen uid, profile,
// phone, disabled).
func (s *signUpAccount) fromAdmin() error {
	req, u, sp := s.req, s.u, s.sc.space
	if req.IDToken != "" && req.LocalID != "" {
		return badRequest("UNEXPECTED_PARAMETER : User ID")
	}
	if req.LocalID != "" && sp.get(req.LocalID) != nil {
		return badRequest("DUPLICATE_LOCAL_ID")
	}
	u.DisplayName, u.PhotoURL = req.DisplayName, req.PhotoURL
	u.EmailVerified = ptr(req.EmailVerified)
	if req.PhoneNumber != "" {
		if !isValidPhone(req.PhoneNumber) {
			return badRequest("INVALID_PHONE_NUMBER : Invalid format.")
		}
		if sp.byPhone(req.PhoneNumber) != nil {
			return badRequest("PHONE_NUMBER_EXISTS")
		}
		u.PhoneNumber = req.PhoneNumber
	}
	if req.Disabled {
		u.Disabled = ptr(true)
	}
	return nil
}

// fromClient decides a client's sign-up: email/password (both required)
// or anonymous, each when the project allows it.
func (s *signUpAccount) fromClient() error {
	req, u := s.req, s.u
	if req.LocalID != "" {
		return badRequest("UNEXPECTED_PARAMETER : User ID")
	}
	if req.IDToken == "" && req.Password == "" && s.email == "" {
		s.provider = ProviderAnonymous
		if !s.sc.allowAnonymous() {
			return badRequest("ADMIN_ONLY_OPERATION")
		}
		return nil
	}
	u.DisplayName = req.DisplayName
	u.EmailVerified = ptr(false)
	if s.email == "" {
		return ErrMissingEmail
	}
	if req.Password == "" {
		return ErrMissingPassword
	}
	s.provider = ProviderPassword
	if !s.sc.allowPassword() {
		return ErrOperationNotAllowed
	}
	return nil
}

// setEmail sets the account's email, which must be valid and free.
func (s *signUpAccount) setEmail() error {
	if s.email == "" && (s.req.Email == nil || s.provider == "") {
		return nil
	}
	if !isValidEmail(s.email) {
		return ErrInvalidEmail
	}
	s.email = canonicalEmail(s.email)
	if s.sc.space.byEmailAddr(s.email) != nil {
		return ErrEmailExists
	}
	s.u.Email = s.email
	return nil
}

// create stores the new account; a client's email sign-up runs
// beforeCreate first and beforeSignIn after.
func (s *signUpAccount) create() (*User, error) {
	f, sc, u := s.f, s.sc, s.u
	u.CreatedAt = f.millis()
	if s.req.LocalID != "" {
		u.LocalID = s.req.LocalID
	} else {
		u.LocalID = f.newLocalID(sc.space)
	}
	blocking := s.email != "" && !s.c.admin()
	var err error
	if blocking {
		if u, err = f.block.beforeCreate(sc, u, blockingOpts{signInMethod: ProviderPassword, uniqueEmail: true}); err != nil {
			return nil, err
		}
	}
	stored := sc.space.put(u, nil, nil)
	f.emit(s.c, sc, OpUserCreate, stored.LocalID, nil, stored, map[string]any{"provider": s.provider})
	if blocking && !stored.isDisabled() {
		if stored, s.extra, err = f.block.beforeSignIn(s.c, sc, stored, blockingOpts{signInMethod: ProviderPassword}); err != nil {
			return nil, err
		}
	}
	if blocking && stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	return stored, nil
}

// upgrade writes the fields set by the request over the idToken's
// account, in place.
func (s *signUpAccount) upgrade(before *User) *User {
	u := s.u
	nu := before.clone()
	nu.LastLoginAt = u.LastLoginAt
	if s.c.admin() {
		nu.DisplayName, nu.PhotoURL, nu.EmailVerified = u.DisplayName, u.PhotoURL, u.EmailVerified
		if u.PhoneNumber != "" {
			nu.PhoneNumber = u.PhoneNumber
		}
		if u.Disabled != nil {
			nu.Disabled = u.Disabled
		}
	} else if s.provider == ProviderPassword {
		nu.DisplayName, nu.EmailVerified = u.DisplayName, u.EmailVerified
	}
	if u.Email != "" {
		nu.Email = u.Email
	}
	if u.PasswordHash != "" {
		nu.Salt, nu.PasswordHash, nu.PasswordUpdatedAt, nu.ValidSince = u.Salt, u.PasswordHash, u.PasswordUpdatedAt, u.ValidSince
	}
	if u.TenantID != "" {
		nu.TenantID = u.TenantID
	}
	stored := s.sc.space.put(nu, nil, nil)
	s.f.emit(s.c, s.sc, OpUserUpdate, stored.LocalID, before, stored, map[string]any{"provider": s.provider, "upgrade": true})
	return stored
}

// SignInWithPasswordRequest is accounts:signInWithPassword.
type SignInWithPasswordRequest struct {
	Email          *string `json:"email,omitempty"`
	Password       string  `json:"password,omitempty"`
	TenantID       string  `json:"tenantId,omitempty"`
	IDToken        string  `json:"idToken,omitempty"`
	PendingIDToken string  `json:"pendingIdToken,omitempty"`
	Captcha        string  `json:"captchaResponse,omitempty"`
	Challenge      string  `json:"captchaChallenge,omitempty"`
}

// SignInWithPasswordResponse is identitytoolkit#VerifyPasswordResponse.
type SignInWithPasswordResponse struct {
	Kind       string `json:"kind"`
	Registered bool   `json:"registered"`
	LocalID    string `json:"localId"`
	Email      string `json:"email"`
	Tokens
	MFAPending
}

// SignInWithPassword checks an email and password. Unknown email is
// EMAIL_NOT_FOUND and a wrong password INVALID_PASSWORD, or both
// INVALID_LOGIN_CREDENTIALS when the project has improved email privacy.
func (e *Engine) SignInWithPassword(c Call, req SignInWithPasswordRequest) (_ *SignInWithPasswordResponse, err error) {
	defer e.begin()(&err)
	return e.password.signInWithPassword(c, req)
}

func (e passwordFlow) signInWithPassword(c Call, req SignInWithPasswordRequest) (*SignInWithPasswordResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if !sc.allowPassword() {
		return nil, badRequest("PASSWORD_LOGIN_DISABLED")
	}
	if req.Email == nil {
		return nil, ErrMissingEmail
	}
	if !isValidEmail(*req.Email) {
		return nil, ErrInvalidEmail
	}
	if req.Password == "" {
		return nil, ErrMissingPassword
	}
	if req.Captcha != "" || req.Challenge != "" {
		return nil, NotImplemented("captcha unimplemented")
	}
	if req.IDToken != "" || req.PendingIDToken != "" {
		return nil, NotImplemented("idToken / pendingIdToken is no longer in use and unsupported by the Auth Emulator.")
	}
	email := canonicalEmail(*req.Email)
	u := sc.space.byEmailAddr(email)
	notFound, wrong := ErrEmailNotFound, ErrInvalidPassword
	if sc.improvedPrivacy() {
		notFound, wrong = ErrInvalidLoginCredentials, ErrInvalidLoginCredentials
	}
	switch {
	case u == nil:
		return nil, notFound
	case u.isDisabled():
		return nil, ErrUserDisabled
	case u.PasswordHash == "" || u.Salt == "" || passwordTooLong(req.Password) || !passwordMatches(u.PasswordHash, req.Password, u.Salt):
		return nil, wrong
	}
	resp := &SignInWithPasswordResponse{Kind: "identitytoolkit#VerifyPasswordResponse", Registered: true, LocalID: u.LocalID, Email: email}
	if sc.mfaRequired(u) {
		resp.MFAPending = e.mfaPending(sc, u, ProviderPassword)
		return resp, nil
	}
	u, extra, err := e.block.beforeSignIn(c, sc, u, blockingOpts{signInMethod: ProviderPassword})
	if err != nil {
		return nil, err
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	e.signIn(c, sc, u, ProviderPassword, extra, &resp.Tokens, nil)
	return resp, nil
}

// signIn stamps lastLoginAt, issues tokens and emits sign_in.
func (e *core) signIn(c Call, sc scope, u *User, provider string, extra map[string]any, out *Tokens, detail map[string]any) *User {
	nu := u.restamped()
	nu.LastLoginAt = e.millis()
	after, toks := e.mintTokens(sc, nu, provider, extra, nil, nil)
	*out = toks
	if detail == nil {
		e.emitMutation(c, sc, OpSignIn, u.LocalID, u, after, provider, "")
		return after
	}
	detail["provider"] = provider
	e.emit(c, sc, OpSignIn, u.LocalID, u, after, detail)
	return after
}

// SignInWithCustomTokenRequest is accounts:signInWithCustomToken.
type SignInWithCustomTokenRequest struct {
	Token    string `json:"token,omitempty"`
	TenantID string `json:"tenantId,omitempty"`
}

// SignInWithCustomTokenResponse is identitytoolkit#VerifyCustomTokenResponse.
type SignInWithCustomTokenResponse struct {
	Kind      string `json:"kind"`
	IsNewUser bool   `json:"isNewUser"`
	Tokens
}

// SignInWithCustomToken signs in (creating the account if needed) with a
// custom token, signed or not: the emulator never verifies signatures.
func (e *Engine) SignInWithCustomToken(c Call, req SignInWithCustomTokenRequest) (_ *SignInWithCustomTokenResponse, err error) {
	defer e.begin()(&err)
	return e.tokens.signInWithCustomToken(c, req)
}

// tokenFlow is what works with tokens rather than credentials: sign-in
// with a custom token, refreshing, session cookies and signing out.
type tokenFlow struct{ *core }

func (e tokenFlow) signInWithCustomToken(c Call, req SignInWithCustomTokenRequest) (*SignInWithCustomTokenResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	ct, err := ParseCustomToken(req.Token, sc.tenantID())
	if err != nil {
		return nil, err
	}
	u := sc.space.get(ct.UID)
	resp := &SignInWithCustomTokenResponse{Kind: "identitytoolkit#VerifyCustomTokenResponse", IsNewUser: u == nil}
	now := e.millis()
	if u != nil {
		if u.isDisabled() {
			return nil, ErrUserDisabled
		}
		nu := u.clone()
		nu.CustomAuth, nu.LastLoginAt, nu.TenantID = true, now, sc.tenantID()
		after := sc.space.put(nu, nil, nil)
		after, resp.Tokens = e.issueTokens(sc, after, ProviderCustom, ct.Claims)
		e.emit(c, sc, OpSignIn, after.LocalID, u, after, map[string]any{"provider": ProviderCustom})
		return resp, nil
	}
	nu := sc.space.put(&User{LocalID: ct.UID, CustomAuth: true, LastLoginAt: now, CreatedAt: now, TenantID: sc.tenantID()}, nil, nil)
	e.emit(c, sc, OpUserCreate, nu.LocalID, nil, nu, map[string]any{"provider": ProviderCustom})
	after, toks := e.issueTokens(sc, nu, ProviderCustom, ct.Claims)
	resp.Tokens = toks
	e.emit(c, sc, OpSignIn, after.LocalID, nu, after, map[string]any{"provider": ProviderCustom})
	return resp, nil
}

// GrantTokenRequest is securetoken /v1/token.
type GrantTokenRequest struct {
	GrantType    string `json:"grantType,omitempty"`
	RefreshToken string `json:"refreshToken,omitempty"`
	Code         string `json:"code,omitempty"`
}

// GrantTokenResponse is the securetoken response (snake_case).
type GrantTokenResponse struct {
	IDToken      string `json:"id_token"`
	AccessToken  string `json:"access_token"`
	ExpiresIn    string `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	UserID       string `json:"user_id"`
	ProjectID    string `json:"project_id"`
}

// ProjectNumber is the fixed project number the Auth emulator reports
// for every project.
const ProjectNumber = "12345"

// GrantToken exchanges a refresh token for fresh tokens. Custom claims are
// read again, so claim changes reach the client on the next refresh.
func (e *Engine) GrantToken(c Call, req GrantTokenRequest) (_ *GrantTokenResponse, err error) {
	defer e.begin()(&err)
	return e.tokens.grant(c, req)
}

func (e tokenFlow) grant(c Call, req GrantTokenRequest) (*GrantTokenResponse, error) {
	// The emulator decodes any refresh token (to find its tenant) before
	// looking at the grant type.
	var rt *RefreshToken
	if req.RefreshToken != "" {
		var err error
		if rt, err = DecodeRefreshToken(req.RefreshToken); err != nil {
			return nil, err
		}
	}
	if req.GrantType == "" {
		return nil, badRequest("MISSING_GRANT_TYPE")
	}
	if req.GrantType != "refresh_token" {
		return nil, badRequest("INVALID_GRANT_TYPE")
	}
	if req.RefreshToken == "" {
		return nil, badRequest("MISSING_REFRESH_TOKEN")
	}
	sc, err := e.scopeFor(c, "", "", rt)
	if err != nil {
		return nil, err
	}
	if rt.ProjectID != sc.project.id {
		return nil, ErrInvalidRefreshToken
	}
	if sc.tenant != nil && rt.TenantID != sc.tenantID() {
		return nil, ErrTenantIDMismatch
	}
	u := sc.space.get(rt.LocalID)
	if u == nil {
		return nil, ErrInvalidRefreshToken
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	if revokedBefore(u, rt.IssuedAt) {
		// Production: a refresh token older than validSince (RevokeRefreshTokens,
		// a password change) no longer mints ID tokens.
		return nil, ErrTokenExpired
	}
	var sf *secondFactor
	if m, ok := rt.SecondFactor.(map[string]any); ok {
		sf = &secondFactor{Identifier: jsString(m["identifier"]), Provider: jsString(m["provider"])}
	}
	_, toks := e.mintTokens(sc, u.restamped(), rt.Provider, rt.ExtraClaims, sf, nil)
	return &GrantTokenResponse{IDToken: toks.IDToken, AccessToken: toks.IDToken, ExpiresIn: toks.ExpiresIn,
		RefreshToken: toks.RefreshToken, TokenType: "Bearer", UserID: u.LocalID, ProjectID: ProjectNumber}, nil
}

// SignOut records that uid signed out. The Identity Toolkit protocol has
// no sign-out call (clients drop their tokens); in-process callers such as
// the sandbox use this so the event stream shows the transition.
func (e *Engine) SignOut(c Call, uid string) {
	var err error
	defer e.begin()(&err)
	e.tokens.signOut(c, uid)
}

func (e tokenFlow) signOut(c Call, uid string) {
	sc, serr := e.scopeFor(c, "", "", nil)
	if serr != nil {
		return
	}
	e.emit(c, sc, OpSignOut, uid, sc.space.get(uid), nil, nil)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// revokedBefore says a credential issued at iat (Unix seconds) predates the
// account's validSince.
func revokedBefore(u *User, iat int64) bool {
	if u.ValidSince == "" {
		return false
	}
	vs, err := strconv.ParseFloat(u.ValidSince, 64)
	return err == nil && float64(iat) < vs
}
