package auth

import (
	"net/url"
	"slices"
	"strings"
)

// FederatedUserID names a user by a linked provider identity.
type FederatedUserID struct {
	ProviderID string `json:"providerId,omitempty"`
	RawID      string `json:"rawId,omitempty"`
}

// LookupRequest is accounts:lookup: a client's own account by idToken, or
// (admin) any accounts by uid, email, phone or federated id.
type LookupRequest struct {
	IDToken         string            `json:"idToken,omitempty"`
	LocalID         []string          `json:"localId,omitempty"`
	Email           []string          `json:"email,omitempty"`
	PhoneNumber     []string          `json:"phoneNumber,omitempty"`
	FederatedUserID []FederatedUserID `json:"federatedUserId,omitempty"`
	InitialEmail    []string          `json:"initialEmail,omitempty"`
	TenantID        string            `json:"tenantId,omitempty"`
}

// LookupResponse is identitytoolkit#GetAccountInfoResponse.
type LookupResponse struct {
	Kind  string  `json:"kind"`
	Users []*User `json:"users,omitempty"`
}

// Lookup returns accounts. Their provider and MFA lists are shared with
// the stored accounts: replace them, don't change their elements.
func (e *Engine) Lookup(c Call, req LookupRequest) (_ *LookupResponse, err error) {
	defer e.begin()(&err)
	return e.accounts.lookup(c, req)
}

// accountFlow is what a user (idToken) or an admin (localId) does with one
// account: look it up, change it, delete it.
type accountFlow struct{ *core }

func (e accountFlow) lookup(c Call, req LookupRequest) (*LookupResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	a := &lookupAnswer{resp: LookupResponse{Kind: "identitytoolkit#GetAccountInfoResponse"}}
	resp := &a.resp
	seen := map[string]bool{}
	add := func(u *User) {
		if u != nil && !seen[u.LocalID] {
			seen[u.LocalID] = true
			// A shallow copy: the caller may set its fields; the lists
			// it shares with the stored account are read-only, as the
			// engine never changes a stored account's in place
			// (User.Redacted).
			if resp.Users == nil {
				a.first = *u
				a.users[0] = &a.first
				resp.Users = a.users[:1:1]
				return
			}
			c := *u
			resp.Users = append(resp.Users, &c)
		}
	}
	if c.admin() {
		if len(req.InitialEmail) > 0 {
			return nil, NotImplemented("Lookup by initialEmail is not implemented.")
		}
		for _, id := range req.LocalID {
			add(sc.space.get(id))
		}
		for _, em := range req.Email {
			add(sc.space.byEmailAddr(canonicalEmail(em)))
		}
		for _, p := range req.PhoneNumber {
			add(sc.space.byPhone(p))
		}
		for _, f := range req.FederatedUserID {
			if f.ProviderID != "" && f.RawID != "" {
				add(sc.space.byProviderRawID(f.ProviderID, f.RawID))
			}
		}
		return resp, nil
	}
	if req.IDToken == "" {
		return nil, badRequest("MISSING_ID_TOKEN")
	}
	t, err := e.parseIDToken(sc, req.IDToken)
	if err != nil {
		return nil, err
	}
	add(t.user)
	return resp, nil
}

// lookupAnswer is a lookup's answer with its first account and the list
// of it in the same allocation: a lookup mostly answers one account (by
// ID token after a sign-in, by localId for verifyIdToken's revocation
// check). The list has no room for more: the caller's append copies it.
type lookupAnswer struct {
	resp  LookupResponse
	first User
	users [1]*User
}

// DeleteRequest is accounts:delete.
type DeleteRequest struct {
	IDToken  string `json:"idToken,omitempty"`
	LocalID  string `json:"localId,omitempty"`
	TenantID string `json:"tenantId,omitempty"`
}

// KindResponse is a response that carries only its kind.
type KindResponse struct {
	Kind string `json:"kind"`
}

// Delete removes an account: the caller's own (idToken) or, for an admin,
// any (localId).
func (e *Engine) Delete(c Call, req DeleteRequest) (_ *KindResponse, err error) {
	defer e.begin()(&err)
	return e.accounts.delete(c, req)
}

func (e accountFlow) delete(c Call, req DeleteRequest) (*KindResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	var u *User
	if c.admin() {
		if req.LocalID == "" {
			return nil, badRequest("MISSING_LOCAL_ID")
		}
		if u = sc.space.get(req.LocalID); u == nil {
			return nil, ErrUserNotFound
		}
	} else {
		if req.IDToken == "" {
			return nil, badRequest("MISSING_ID_TOKEN")
		}
		t, err := e.parseIDToken(sc, req.IDToken)
		if err != nil {
			return nil, err
		}
		u = t.user
	}
	sc.space.remove(u)
	e.emit(c, sc, OpUserDelete, u.LocalID, u, nil, nil)
	return &KindResponse{Kind: "identitytoolkit#DeleteAccountResponse"}, nil
}

// UpdateRequest is accounts:update (setAccountInfo): profile, email,
// password and provider changes by the user (idToken) or an admin
// (localId; also custom claims, disabling, validSince), or applying an OOB
// code (email verification, email change, email recovery).
type UpdateRequest struct {
	IDToken              string            `json:"idToken,omitempty"`
	LocalID              string            `json:"localId,omitempty"`
	OOBCode              string            `json:"oobCode,omitempty"`
	Email                string            `json:"email,omitempty"`
	Password             string            `json:"password,omitempty"`
	DisplayName          *string           `json:"displayName,omitempty"`
	PhotoURL             *string           `json:"photoUrl,omitempty"`
	PhoneNumber          string            `json:"phoneNumber,omitempty"`
	EmailVerified        *bool             `json:"emailVerified,omitempty"`
	DisableUser          *bool             `json:"disableUser,omitempty"`
	CustomAttributes     *string           `json:"customAttributes,omitempty"`
	ValidSince           *string           `json:"validSince,omitempty"`
	CreatedAt            *string           `json:"createdAt,omitempty"`
	LastLoginAt          *string           `json:"lastLoginAt,omitempty"`
	DeleteAttribute      []string          `json:"deleteAttribute,omitempty"`
	DeleteProvider       []string          `json:"deleteProvider,omitempty"`
	LinkProviderUserInfo *ProviderUserInfo `json:"linkProviderUserInfo,omitempty"`
	TenantID             string            `json:"tenantId,omitempty"`
	ReturnSecureToken    bool              `json:"returnSecureToken,omitempty"`
	// Provider and UpgradeToFederatedLogin are not supported, as in the emulator.
	Provider                []string   `json:"provider,omitempty"`
	UpgradeToFederatedLogin *bool      `json:"upgradeToFederatedLogin,omitempty"`
	MFA                     *MFAUpdate `json:"mfa,omitempty"`
	DeletePasskey           []string   `json:"deletePasskey,omitempty"`
}

// MFAUpdate replaces an account's second factors (admin).
type MFAUpdate struct {
	Enrollments []MFAEnrollment `json:"enrollments,omitempty"`
}

// UpdateResponse is identitytoolkit#SetAccountInfoResponse.
type UpdateResponse struct {
	Kind             string `json:"kind"`
	LocalID          string `json:"localId"`
	EmailVerified    *bool  `json:"emailVerified,omitempty"`
	ProviderUserInfo any    `json:"providerUserInfo,omitempty"` // []ProviderUserInfo; [] kept, nil omitted
	Email            string `json:"email,omitempty"`
	DisplayName      string `json:"displayName,omitempty"`
	PhotoURL         string `json:"photoUrl,omitempty"`
	NewEmail         string `json:"newEmail,omitempty"`
	PasswordHash     string `json:"passwordHash,omitempty"`
	Tokens
}

// Update changes an account.
func (e *Engine) Update(c Call, req UpdateRequest) (_ *UpdateResponse, err error) {
	defer e.begin()(&err)
	return e.accounts.update(c, req)
}

// accountUpdate is one accounts:update request as it goes through its
// steps: the account it targets (by OOB code, idToken or localId), the
// changes made to a copy of it, and what the response reports.
type accountUpdate struct {
	f   accountFlow
	c   Call
	sc  scope
	req UpdateRequest

	before, nu     *User
	signInProvider string // the provider the returned tokens name
	isEmailUpdate  bool
	newEmail       string
	validSinceSet  bool
}

func (f accountFlow) update(c Call, req UpdateRequest) (*UpdateResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if err := checkUpdate(c, req); err != nil {
		return nil, err
	}
	u := &accountUpdate{f: f, c: c, sc: sc, req: req}
	if req.OOBCode != "" {
		err = u.applyOOBCode()
	} else {
		err = u.applyFields()
	}
	if err != nil {
		return nil, err
	}
	var upserts []ProviderUserInfo
	if l := req.LinkProviderUserInfo; l != nil {
		if l.ProviderID == "" {
			return nil, badRequest("MISSING_PROVIDER_ID")
		}
		if l.RawID == "" {
			return nil, badRequest("MISSING_RAW_ID")
		}
		upserts = append(upserts, *l)
	}
	return u.store(upserts), nil
}

// checkUpdate refuses what an update may not ask, before anything is read:
// unsupported fields, a client without idToken or OOB code, claims from a
// client, bad profile fields and claims.
func checkUpdate(c Call, req UpdateRequest) error {
	if req.Provider != nil {
		return NotImplemented("provider is not implemented yet.")
	}
	if req.UpgradeToFederatedLogin != nil {
		return NotImplemented("upgradeToFederatedLogin is not implemented yet.")
	}
	if !c.admin() {
		if req.IDToken == "" && req.OOBCode == "" {
			return badRequest("INVALID_REQ_TYPE : Unsupported request parameters.")
		}
		if req.CustomAttributes != nil {
			return ErrInsufficientPermission
		}
	} else if req.LocalID == "" {
		return badRequest("MISSING_LOCAL_ID")
	}
	if err := checkProfile(req.DisplayName, req.PhotoURL); err != nil {
		return err
	}
	if req.CustomAttributes != nil && *req.CustomAttributes != "" {
		if err := validateSerializedClaims(*req.CustomAttributes); err != nil {
			return err
		}
	}
	for _, a := range req.DeleteAttribute {
		if a == "PROVIDER" || a == "RAW_USER_INFO" {
			return NotImplemented("deleteAttribute: " + a)
		}
	}
	return nil
}

// applyOOBCode applies an email action code (the code is used up even when
// the change is then refused): verify the email, change it, or recover the
// one it replaced.
func (u *accountUpdate) applyOOBCode() error {
	sp := u.sc.space
	oob := sp.oob(u.req.OOBCode)
	if oob == nil {
		return ErrInvalidOOBCode
	}
	switch oob.RequestType {
	case "VERIFY_EMAIL":
		sp.deleteOOB(u.req.OOBCode)
		u.signInProvider = ProviderPassword
		if u.before = sp.byEmailAddr(oob.Email); u.before == nil {
			return ErrInvalidOOBCode
		}
		u.nu = u.before.clone()
		u.nu.EmailVerified = ptr(true)
		u.nu.Email = oob.Email
	case "VERIFY_AND_CHANGE_EMAIL":
		sp.deleteOOB(u.req.OOBCode)
		if u.before = sp.byEmailAddr(oob.Email); u.before == nil || oob.NewEmail == "" {
			return ErrInvalidOOBCode
		}
		if sp.byEmailAddr(oob.NewEmail) != nil {
			return ErrEmailExists
		}
		u.nu = u.before.clone()
		if oob.NewEmail != u.nu.Email {
			u.nu.Email, u.nu.EmailVerified, u.newEmail = oob.NewEmail, ptr(true), oob.NewEmail
		}
	case "RECOVER_EMAIL":
		sp.deleteOOB(u.req.OOBCode)
		if u.before = sp.byInitialEmail(oob.Email); u.before == nil {
			return ErrInvalidOOBCode
		}
		if sp.byEmailAddr(oob.Email) != nil {
			return ErrEmailExists
		}
		u.nu = u.before.clone()
		if oob.Email != u.nu.Email {
			u.nu.Email, u.nu.EmailVerified = oob.Email, ptr(true)
		}
	default:
		return NotImplemented(oob.RequestType)
	}
	return nil
}

// applyFields makes the request's field changes to the target account, in
// the emulator's order (the first refusal wins).
func (u *accountUpdate) applyFields() error {
	if err := u.findTarget(); err != nil {
		return err
	}
	u.nu = u.before.clone()
	if err := u.changeEmail(); err != nil {
		return err
	}
	if err := u.changePassword(); err != nil {
		return err
	}
	req := u.req
	if req.Password != "" || (req.ValidSince != nil && *req.ValidSince != "") || u.isEmailUpdate {
		u.nu.ValidSince, u.validSinceSet = u.f.seconds(), true
	}
	if err := u.replaceMFA(); err != nil {
		return err
	}
	if req.DisplayName != nil {
		u.nu.DisplayName = *req.DisplayName
	}
	if req.PhotoURL != nil {
		u.nu.PhotoURL = *req.PhotoURL
	}
	if u.c.admin() {
		if err := u.applyAdminFields(); err != nil {
			return err
		}
	}
	u.deleteAttributes()
	return nil
}

// findTarget reads the account: the idToken's (a client may not disable
// it) or, for an admin, localId's.
func (u *accountUpdate) findTarget() error {
	req := u.req
	if req.IDToken != "" {
		t, err := u.f.parseIDToken(u.sc, req.IDToken)
		if err != nil {
			return err
		}
		u.before, u.signInProvider = t.user, t.provider
		if req.DisableUser != nil {
			return ErrOperationNotAllowed
		}
		return nil
	}
	if req.LocalID == "" {
		return badRequest("MISSING_LOCAL_ID")
	}
	if u.before = u.sc.space.get(req.LocalID); u.before == nil {
		return ErrUserNotFound
	}
	return nil
}

// changeEmail sets a new, unverified email, keeping the first one as
// initialEmail (what RECOVER_EMAIL restores).
func (u *accountUpdate) changeEmail() error {
	if u.req.Email == "" {
		return nil
	}
	if !isValidEmail(u.req.Email) {
		return ErrInvalidEmail
	}
	u.newEmail = canonicalEmail(u.req.Email)
	before, nu := u.before, u.nu
	if u.newEmail == before.Email {
		return nil
	}
	if u.sc.space.byEmailAddr(u.newEmail) != nil {
		return ErrEmailExists
	}
	nu.Email, nu.EmailVerified, u.isEmailUpdate = u.newEmail, ptr(false), true
	if u.signInProvider != ProviderAnonymous && before.Email != "" && before.InitialEmail == "" {
		nu.InitialEmail = before.Email
	}
	return nil
}

// changePassword sets a new password (fresh salt); the tokens returned
// then name the password provider.
func (u *accountUpdate) changePassword() error {
	if u.req.Password == "" {
		return nil
	}
	if err := checkNewPassword(u.req.Password); err != nil {
		return err
	}
	nu := u.nu
	nu.Salt = u.f.newSalt()
	nu.PasswordHash = hashPassword(u.req.Password, nu.Salt)
	nu.PasswordUpdatedAt = u.f.now().UnixMilli()
	u.signInProvider = ProviderPassword
	return nil
}

// replaceMFA replaces the second factors (admin only; none clears them).
func (u *accountUpdate) replaceMFA() error {
	m := u.req.MFA
	if m == nil {
		return nil
	}
	if !u.c.admin() {
		return ErrInsufficientPermission
	}
	if len(m.Enrollments) == 0 {
		u.nu.MFAInfo = nil
		return nil
	}
	enr, err := u.f.validateEnrollments(m.Enrollments, false)
	if err != nil {
		return err
	}
	u.nu.MFAInfo = enr
	return nil
}

// applyAdminFields sets what only an admin may: disabled, phone number,
// emailVerified, custom claims and the timestamps.
func (u *accountUpdate) applyAdminFields() error {
	req, nu := u.req, u.nu
	if req.DisableUser != nil {
		nu.Disabled = ptr(*req.DisableUser)
	}
	if req.PhoneNumber != "" && req.PhoneNumber != u.before.PhoneNumber {
		if !isValidPhone(req.PhoneNumber) {
			return badRequest("INVALID_PHONE_NUMBER : Invalid format.")
		}
		if u.sc.space.byPhone(req.PhoneNumber) != nil {
			return badRequest("PHONE_NUMBER_EXISTS")
		}
		nu.PhoneNumber = req.PhoneNumber
	}
	if req.EmailVerified != nil {
		nu.EmailVerified = ptr(*req.EmailVerified)
	}
	if req.CustomAttributes != nil {
		nu.CustomAttributes = *req.CustomAttributes
	}
	if req.CreatedAt != nil {
		nu.CreatedAt = *req.CreatedAt
	}
	if req.LastLoginAt != nil {
		nu.LastLoginAt = *req.LastLoginAt
	}
	if req.ValidSince != nil {
		nu.ValidSince = *req.ValidSince
	}
	return nil
}

// deleteAttributes clears the fields of deleteAttribute, and the password
// or phone of deleteProvider.
func (u *accountUpdate) deleteAttributes() {
	nu := u.nu
	for _, a := range u.req.DeleteAttribute {
		switch a {
		case "DISPLAY_NAME":
			nu.DisplayName = ""
		case "PHOTO_URL":
			nu.PhotoURL = ""
		case "PASSWORD":
			nu.PasswordHash, nu.Salt = "", ""
		case "EMAIL":
			nu.Email, nu.EmailVerified, nu.EmailLinkSignin = "", nil, false
		}
	}
	if slices.Contains(u.req.DeleteProvider, ProviderPassword) {
		nu.Email, nu.EmailVerified, nu.EmailLinkSignin, nu.PasswordHash, nu.Salt = "", nil, false, "", ""
	}
	if slices.Contains(u.req.DeleteProvider, ProviderPhone) {
		nu.PhoneNumber = ""
	}
}

// store writes the changed account, sends the recover-email message of an
// email change, and answers (with fresh tokens when the change revoked the
// old ones and the caller signed in).
func (u *accountUpdate) store(upserts []ProviderUserInfo) *UpdateResponse {
	f, sc := u.f, u.sc
	nu := sc.space.put(u.nu, upserts, u.req.DeleteProvider)
	f.emit(u.c, sc, OpUserUpdate, nu.LocalID, u.before, nu, nil)
	if u.signInProvider != ProviderAnonymous && nu.InitialEmail != "" && u.isEmailUpdate {
		f.createOOB(sc, u.c.BaseURL, nu.InitialEmail, "", "RECOVER_EMAIL", "recoverEmail", "")
	}
	resp := &UpdateResponse{Kind: "identitytoolkit#SetAccountInfoResponse", LocalID: nu.LocalID, EmailVerified: nu.EmailVerified,
		Email: nu.Email, DisplayName: nu.DisplayName, PhotoURL: nu.PhotoURL,
		NewEmail: u.newEmail, PasswordHash: nu.PasswordHash}
	if nu.ProviderUserInfo != nil {
		resp.ProviderUserInfo = slices.Clone(nu.ProviderUserInfo)
	}
	if u.validSinceSet && u.signInProvider != "" {
		_, resp.Tokens = f.issueTokens(sc, nu, u.signInProvider, nil)
	}
	return resp
}

// createOOB records an out-of-band message in the outbox and returns it.
func (e *core) createOOB(sc scope, baseURL, email, newEmail, requestType, mode, continueURL string) *OOBCode {
	code := e.randomString(54, base64url)
	if baseURL == "" {
		baseURL = "http://127.0.0.1:9099"
	}
	q := url.Values{}
	q.Set("mode", mode)
	q.Set("lang", "en")
	q.Set("oobCode", code)
	q.Set("apiKey", "fake-api-key")
	if continueURL != "" {
		q.Set("continueUrl", continueURL)
	}
	if tid := sc.tenantID(); tid != "" {
		q.Set("tenantId", tid)
	}
	// Keep the emulator's parameter order (mode, lang, oobCode, apiKey, …).
	var b strings.Builder
	b.WriteString(strings.TrimRight(baseURL, "/") + "/emulator/action?")
	for i, k := range []string{"mode", "lang", "oobCode", "apiKey", "continueUrl", "tenantId"} {
		if !q.Has(k) {
			continue
		}
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + url.QueryEscape(q.Get(k)))
	}
	o := &OOBCode{Email: email, NewEmail: newEmail, RequestType: requestType, OOBCode: code, OOBLink: b.String()}
	sc.space.addOOB(o)
	return o
}
