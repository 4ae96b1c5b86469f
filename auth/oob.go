package auth

import (
	"net/url"
	"strconv"
)

// SendOOBCodeRequest is accounts:sendOobCode.
type SendOOBCodeRequest struct {
	RequestType        string `json:"requestType,omitempty"`
	Email              string `json:"email,omitempty"`
	NewEmail           string `json:"newEmail,omitempty"`
	IDToken            string `json:"idToken,omitempty"`
	ContinueURL        string `json:"continueUrl,omitempty"`
	CanHandleCodeInApp bool   `json:"canHandleCodeInApp,omitempty"`
	ReturnOOBLink      bool   `json:"returnOobLink,omitempty"`
	TenantID           string `json:"tenantId,omitempty"`
}

// SendOOBCodeResponse is identitytoolkit#GetOobConfirmationCodeResponse.
type SendOOBCodeResponse struct {
	Kind    string `json:"kind"`
	Email   string `json:"email,omitempty"`
	OOBCode string `json:"oobCode,omitempty"`
	OOBLink string `json:"oobLink,omitempty"`
}

// SendOOBCode "sends" a password-reset, email-verification, email-change or
// email sign-in message: it lands in the outbox (ListOOBCodes), and an admin
// asking with returnOobLink gets the code and link back directly.
func (e *Engine) SendOOBCode(c Call, req SendOOBCodeRequest) (_ *SendOOBCodeResponse, err error) {
	defer e.begin()(&err)
	return e.email.sendOOBCode(c, req)
}

// emailFlow is what goes through a message in the email outbox: sending
// the codes (sign-in link, password reset, verification, email change),
// redeeming them (email-link sign-in, password reset), and the sign-in
// methods of an email (createAuthUri).
type emailFlow struct{ *core }

// oobMessage is the message a sendOobCode request asks for: to whom, the
// new email of a change, and the action link's mode.
type oobMessage struct {
	email, newEmail, mode string
}

func (f emailFlow) sendOOBCode(c Call, req SendOOBCodeRequest) (*SendOOBCodeResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if req.RequestType == "" || req.RequestType == "OOB_REQ_TYPE_UNSPECIFIED" {
		return nil, badRequest("MISSING_REQ_TYPE")
	}
	if req.ReturnOOBLink && !c.admin() {
		return nil, ErrInsufficientPermission
	}
	if req.ContinueURL != "" && !isAbsoluteURL(req.ContinueURL) {
		return nil, badRequest("INVALID_CONTINUE_URI : ((expected an absolute URI with valid scheme and host))")
	}
	m, silent, err := f.addressOOB(sc, req)
	if err != nil || silent {
		return m.response(), err
	}
	if emailType, ok := map[string]string{"EMAIL_SIGNIN": "EMAIL_SIGN_IN", "PASSWORD_RESET": "PASSWORD_RESET"}[req.RequestType]; ok && !req.ReturnOOBLink {
		// An email is about to be sent (an admin's generated link is not).
		if err := f.block.send(sc, BeforeSendEmail, map[string]any{"email_type": emailType, "email": m.email}); err != nil {
			return nil, err
		}
	}
	o := f.createOOB(sc, c.BaseURL, m.email, m.newEmail, req.RequestType, m.mode, req.ContinueURL)
	resp := m.response()
	if req.ReturnOOBLink {
		resp.OOBCode, resp.OOBLink = o.OOBCode, o.OOBLink
	}
	return resp, nil
}

// response is the answer naming the message's recipient; nil for no
// message (a refused request).
func (m *oobMessage) response() *SendOOBCodeResponse {
	if m == nil {
		return nil
	}
	return &SendOOBCodeResponse{Kind: "identitytoolkit#GetOobConfirmationCodeResponse", Email: m.email}
}

// addressOOB decides the message of each request type. silent means
// nothing is sent yet the client is answered as if it was: a reset for an
// unknown email under improved email privacy.
func (f emailFlow) addressOOB(sc scope, req SendOOBCodeRequest) (_ *oobMessage, silent bool, err error) {
	switch req.RequestType {
	case "EMAIL_SIGNIN":
		if !sc.allowEmailLink() {
			return nil, false, ErrOperationNotAllowed
		}
		if req.Email == "" {
			return nil, false, ErrMissingEmail
		}
		return &oobMessage{email: canonicalEmail(req.Email), mode: "signIn"}, false, nil
	case "PASSWORD_RESET":
		if req.Email == "" {
			return nil, false, ErrMissingEmail
		}
		m := &oobMessage{email: canonicalEmail(req.Email), mode: "resetPassword"}
		if sc.space.byEmailAddr(m.email) == nil {
			if sc.improvedPrivacy() {
				return m, true, nil
			}
			return nil, false, ErrEmailNotFound
		}
		return m, false, nil
	case "VERIFY_EMAIL":
		email, err := f.accountEmail(sc, req, ErrInvalidIDToken)
		if err != nil {
			return nil, false, err
		}
		return &oobMessage{email: email, mode: "verifyEmail"}, false, nil
	case "VERIFY_AND_CHANGE_EMAIL":
		m, err := f.addressChange(sc, req)
		return m, false, err
	default:
		return nil, false, NotImplemented(req.RequestType)
	}
}

// addressChange is the VERIFY_AND_CHANGE_EMAIL message: to the account's
// email, about a new email nobody has.
func (f emailFlow) addressChange(sc scope, req SendOOBCodeRequest) (*oobMessage, error) {
	if req.NewEmail == "" {
		return nil, badRequest("MISSING_NEW_EMAIL")
	}
	newEmail := canonicalEmail(req.NewEmail)
	email, err := f.accountEmail(sc, req, badRequest("MISSING_ID_TOKEN"))
	if err != nil {
		return nil, err
	}
	if sc.space.byEmailAddr(newEmail) != nil {
		return nil, ErrEmailExists
	}
	return &oobMessage{email: email, newEmail: newEmail, mode: "verifyAndChangeEmail"}, nil
}

// accountEmail is the email of the account a verification is about: an
// admin generating a link names it by email, anyone else by idToken
// (noToken is the error without one).
func (f emailFlow) accountEmail(sc scope, req SendOOBCodeRequest, noToken error) (string, error) {
	if req.ReturnOOBLink && req.IDToken == "" {
		if req.Email == "" {
			return "", ErrMissingEmail
		}
		email := canonicalEmail(req.Email)
		if sc.space.byEmailAddr(email) == nil {
			return "", ErrUserNotFound
		}
		return email, nil
	}
	if req.IDToken == "" {
		return "", noToken
	}
	t, err := f.parseIDToken(sc, req.IDToken)
	if err != nil {
		return "", err
	}
	if t.user.Email == "" {
		return "", ErrMissingEmail
	}
	return t.user.Email, nil
}

func isAbsoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}

// ResetPasswordRequest is accounts:resetPassword. Without newPassword it
// only inspects the code (verifyPasswordResetCode / checkActionCode).
type ResetPasswordRequest struct {
	OOBCode     string `json:"oobCode,omitempty"`
	NewPassword string `json:"newPassword,omitempty"`
	Email       string `json:"email,omitempty"`
	OldPassword string `json:"oldPassword,omitempty"`
	TenantID    string `json:"tenantId,omitempty"`
}

// ResetPasswordResponse is identitytoolkit#ResetPasswordResponse.
type ResetPasswordResponse struct {
	Kind        string `json:"kind"`
	RequestType string `json:"requestType"`
	Email       string `json:"email,omitempty"`
	NewEmail    string `json:"newEmail,omitempty"`
}

// ResetPassword applies a PASSWORD_RESET code (or inspects any code).
func (e *Engine) ResetPassword(c Call, req ResetPasswordRequest) (_ *ResetPasswordResponse, err error) {
	defer e.begin()(&err)
	return e.email.resetPassword(c, req)
}

func (e emailFlow) resetPassword(c Call, req ResetPasswordRequest) (*ResetPasswordResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if !sc.allowPassword() {
		return nil, badRequest("PASSWORD_LOGIN_DISABLED")
	}
	if req.OOBCode == "" {
		return nil, badRequest("MISSING_OOB_CODE")
	}
	oob := sc.space.oob(req.OOBCode)
	if oob == nil {
		return nil, ErrInvalidOOBCode
	}
	if req.NewPassword != "" {
		if oob.RequestType != "PASSWORD_RESET" {
			return nil, ErrInvalidOOBCode
		}
		if err := checkNewPassword(req.NewPassword); err != nil {
			return nil, err
		}
		sc.space.deleteOOB(req.OOBCode)
		before := sc.space.byEmailAddr(oob.Email)
		if before == nil {
			return nil, ErrInvalidOOBCode
		}
		nu := before.clone()
		nu.EmailVerified = ptr(true)
		nu.Salt = e.newSalt()
		nu.PasswordHash = hashPassword(req.NewPassword, nu.Salt)
		nu.PasswordUpdatedAt = e.now().UnixMilli()
		nu.ValidSince = e.seconds()
		// The emulator drops every linked provider on a reset; the password
		// provider comes back because the account has a password again.
		var del []string
		for _, p := range before.ProviderUserInfo {
			del = append(del, p.ProviderID)
		}
		nu = sc.space.put(nu, nil, del)
		e.emit(c, sc, OpUserUpdate, nu.LocalID, before, nu, map[string]any{"reason": "password_reset"})
	}
	resp := &ResetPasswordResponse{Kind: "identitytoolkit#ResetPasswordResponse", RequestType: oob.RequestType, NewEmail: oob.NewEmail}
	if oob.RequestType != "EMAIL_SIGNIN" {
		resp.Email = oob.Email
	}
	return resp, nil
}

// SignInWithEmailLinkRequest is accounts:signInWithEmailLink.
type SignInWithEmailLinkRequest struct {
	Email    string `json:"email,omitempty"`
	OOBCode  string `json:"oobCode,omitempty"`
	IDToken  string `json:"idToken,omitempty"`
	TenantID string `json:"tenantId,omitempty"`
}

// SignInWithEmailLinkResponse is identitytoolkit#EmailLinkSigninResponse.
type SignInWithEmailLinkResponse struct {
	Kind      string `json:"kind"`
	Email     string `json:"email"`
	LocalID   string `json:"localId"`
	IsNewUser bool   `json:"isNewUser"`
	Tokens
	MFAPending
}

// SignInWithEmailLink redeems an EMAIL_SIGNIN code, creating the account
// (verified) on first use, or linking the email to the idToken's account.
func (e *Engine) SignInWithEmailLink(c Call, req SignInWithEmailLinkRequest) (_ *SignInWithEmailLinkResponse, err error) {
	defer e.begin()(&err)
	return e.email.signInWithEmailLink(c, req)
}

func (f emailFlow) signInWithEmailLink(c Call, req SignInWithEmailLinkRequest) (*SignInWithEmailLinkResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if !sc.allowEmailLink() {
		return nil, ErrOperationNotAllowed
	}
	var fromToken *User
	if req.IDToken != "" {
		t, err := f.parseIDToken(sc, req.IDToken)
		if err != nil {
			return nil, err
		}
		fromToken = t.user
	}
	email, err := redeemSignInLink(sc, req)
	if err != nil {
		return nil, err
	}
	fromEmail := sc.space.byEmailAddr(email)
	u := fromToken
	if u == nil {
		u = fromEmail
	}
	resp := &SignInWithEmailLinkResponse{Kind: "identitytoolkit#EmailLinkSigninResponse", Email: email, IsNewUser: u == nil}
	var stored *User
	if u == nil {
		stored, err = f.createByLink(c, sc, email)
	} else {
		stored, err = f.linkEmail(c, sc, u, fromToken, fromEmail, email)
	}
	if err != nil {
		return nil, err
	}
	resp.LocalID = stored.LocalID
	if sc.mfaRequired(stored) {
		resp.MFAPending = f.mfaPending(sc, stored, ProviderPassword)
		return resp, nil
	}
	var extra map[string]any
	if !stored.isDisabled() {
		if stored, extra, err = f.block.beforeSignIn(c, sc, stored, blockingOpts{signInMethod: signInEmailLink}); err != nil {
			return nil, err
		}
	}
	if stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	f.signIn(c, sc, stored, ProviderPassword, extra, &resp.Tokens, map[string]any{"method": signInEmailLink})
	return resp, nil
}

// redeemSignInLink uses up the request's EMAIL_SIGNIN code, which must have
// been sent to the request's email, and returns that email.
func redeemSignInLink(sc scope, req SignInWithEmailLinkRequest) (string, error) {
	if req.Email == "" {
		return "", ErrMissingEmail
	}
	email := canonicalEmail(req.Email)
	if req.OOBCode == "" {
		return "", badRequest("MISSING_OOB_CODE")
	}
	oob := sc.space.oob(req.OOBCode)
	if oob == nil || oob.RequestType != "EMAIL_SIGNIN" {
		return "", ErrInvalidOOBCode
	}
	if email != oob.Email {
		return "", badRequest("INVALID_EMAIL : The email provided does not match the sign-in email address.")
	}
	sc.space.deleteOOB(req.OOBCode)
	return email, nil
}

// createByLink creates the verified email-link account (after
// beforeCreate).
func (f emailFlow) createByLink(c Call, sc scope, email string) (*User, error) {
	now := f.millis()
	nu, err := f.block.beforeCreate(sc, &User{LocalID: f.newLocalID(sc.space), Email: email, EmailVerified: ptr(true), EmailLinkSignin: true,
		CreatedAt: now, TenantID: sc.tenantID()}, blockingOpts{signInMethod: signInEmailLink, uniqueEmail: true})
	if err != nil {
		return nil, err
	}
	stored := sc.space.put(nu, nil, nil)
	f.emit(c, sc, OpUserCreate, stored.LocalID, nil, stored, map[string]any{"provider": signInEmailLink})
	return stored, nil
}

// linkEmail marks u's email verified and usable for link sign-in: u is the
// idToken's account (which gets the email, unless another account has
// it) or the email's.
func (f emailFlow) linkEmail(c Call, sc scope, u, fromToken, fromEmail *User, email string) (*User, error) {
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	if fromToken != nil && fromEmail != nil && fromToken.LocalID != fromEmail.LocalID {
		return nil, ErrEmailExists
	}
	nu := u.clone()
	nu.Email, nu.EmailVerified, nu.EmailLinkSignin = email, ptr(true), true
	if tid := sc.tenantID(); tid != "" {
		nu.TenantID = tid
	}
	stored := sc.space.put(nu, nil, nil)
	f.emit(c, sc, OpUserUpdate, stored.LocalID, u, stored, nil)
	return stored, nil
}

// CreateAuthURIRequest is accounts:createAuthUri (fetchSignInMethodsForEmail).
type CreateAuthURIRequest struct {
	Identifier  string `json:"identifier,omitempty"`
	ContinueURI string `json:"continueUri,omitempty"`
	ProviderID  string `json:"providerId,omitempty"`
	SessionID   string `json:"sessionId,omitempty"`
	TenantID    string `json:"tenantId,omitempty"`
}

// CreateAuthURIResponse is identitytoolkit#CreateAuthUriResponse.
type CreateAuthURIResponse struct {
	Kind          string    `json:"kind"`
	Registered    *bool     `json:"registered,omitempty"`
	AllProviders  *[]string `json:"allProviders,omitempty"`
	SessionID     string    `json:"sessionId"`
	SigninMethods *[]string `json:"signinMethods,omitempty"`
}

// CreateAuthURI reports how an email can sign in (hidden under improved
// email privacy).
func (e *Engine) CreateAuthURI(c Call, req CreateAuthURIRequest) (_ *CreateAuthURIResponse, err error) {
	defer e.begin()(&err)
	return e.email.createAuthURI(c, req)
}

func (f emailFlow) createAuthURI(c Call, req CreateAuthURIRequest) (*CreateAuthURIResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	sid := req.SessionID
	if sid == "" {
		sid = f.randomString(27, alnum)
	}
	if req.ProviderID != "" {
		return nil, NotImplemented("Sign-in with IDP is not yet supported.")
	}
	if req.Identifier == "" {
		return nil, badRequest("MISSING_IDENTIFIER")
	}
	if req.ContinueURI == "" {
		return nil, badRequest("MISSING_CONTINUE_URI")
	}
	if !isValidEmail(req.Identifier) {
		return nil, badRequest("INVALID_IDENTIFIER")
	}
	if !isAbsoluteURL(req.ContinueURI) {
		return nil, badRequest("INVALID_CONTINUE_URI")
	}
	if sc.improvedPrivacy() {
		return &CreateAuthURIResponse{Kind: "identitytoolkit#CreateAuthUriResponse", SessionID: sid}, nil
	}
	users := sc.space.byEmailOrProviderEmail(canonicalEmail(req.Identifier))
	var registered bool
	var all, methods []string
	if sc.oneAccountPerEmail() {
		registered, all, methods = signInMethods(users)
	} else {
		registered, all, methods = sharedEmailSignInMethods(users)
	}
	return &CreateAuthURIResponse{Kind: "identitytoolkit#CreateAuthUriResponse", Registered: &registered,
		AllProviders: &all, SessionID: sid, SigninMethods: &methods}, nil
}

// signInMethods are the providers and sign-in methods of the one account
// having an email (users lists the accounts whose email or provider email
// it is).
func signInMethods(users []*User) (registered bool, all, methods []string) {
	all, methods = []string{}, []string{}
	if len(users) == 0 {
		return false, all, methods
	}
	u := users[0]
	for _, p := range u.ProviderUserInfo {
		switch {
		case p.ProviderID == ProviderPassword:
			all = append(all, p.ProviderID)
			if u.PasswordHash != "" {
				methods = append(methods, ProviderPassword)
			}
			if u.EmailLinkSignin {
				methods = append(methods, signInEmailLink)
			}
		case p.ProviderID != ProviderPhone:
			all = append(all, p.ProviderID)
			methods = append(methods, p.ProviderID)
		}
	}
	return true, all, methods
}

// sharedEmailSignInMethods is signInMethods when several accounts may
// share an email, as the emulator answers it: only the password provider
// of the first account with the email.
func sharedEmailSignInMethods(users []*User) (registered bool, all, methods []string) {
	all, methods = []string{}, []string{}
	for _, u := range users {
		if u.Email == "" {
			continue
		}
		registered = true
		if u.PasswordHash != "" || u.EmailLinkSignin {
			all = append(all, ProviderPassword)
			if users[0].PasswordHash != "" {
				methods = append(methods, ProviderPassword)
			}
			if users[0].EmailLinkSignin {
				methods = append(methods, signInEmailLink)
			}
		}
		break
	}
	return registered, all, methods
}

// CreateSessionCookieRequest is projects:createSessionCookie.
type CreateSessionCookieRequest struct {
	IDToken       string `json:"idToken,omitempty"`
	ValidDuration string `json:"validDuration,omitempty"`
	TenantID      string `json:"tenantId,omitempty"`
}

// CreateSessionCookieResponse carries the cookie.
type CreateSessionCookieResponse struct {
	SessionCookie string `json:"sessionCookie"`
}

// Session cookie lifetime bounds, in seconds.
const (
	sessionCookieMin = 5 * 60
	sessionCookieMax = 14 * 24 * 60 * 60
)

// CreateSessionCookie turns an ID token into a session cookie: the same
// claims with iss https://session.firebase.google.com/<project> and the
// requested lifetime (default and maximum 14 days).
func (e *Engine) CreateSessionCookie(c Call, req CreateSessionCookieRequest) (_ *CreateSessionCookieResponse, err error) {
	defer e.begin()(&err)
	return e.tokens.createSessionCookie(c, req)
}

func (e tokenFlow) createSessionCookie(c Call, req CreateSessionCookieRequest) (*CreateSessionCookieResponse, error) {
	sc, err := e.scopeFor(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if req.IDToken == "" {
		return nil, badRequest("MISSING_ID_TOKEN")
	}
	d, perr := strconv.ParseFloat(req.ValidDuration, 64)
	if perr != nil || d == 0 || d != d {
		d = sessionCookieMax
	}
	if d < sessionCookieMin || d > sessionCookieMax {
		return nil, badRequest("INVALID_DURATION")
	}
	t, err := e.parseIDToken(sc, req.IDToken)
	if err != nil {
		return nil, err
	}
	p := map[string]any{}
	claims := t.payload()
	for k, v := range claims {
		p[k] = v
	}
	iat := e.now().Unix()
	p["iat"] = iat
	p["exp"] = iat + int64(d)
	p["iss"] = "https://session.firebase.google.com/" + jsString(claims["aud"])
	return &CreateSessionCookieResponse{SessionCookie: EncodeUnsignedJWT(p)}, nil
}
