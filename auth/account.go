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

// Lookup returns accounts.
func (e *Engine) Lookup(c Call, req LookupRequest) (_ *LookupResponse, err error) {
	defer e.begin()(&err)
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, "")
	if err != nil {
		return nil, err
	}
	resp := &LookupResponse{Kind: "identitytoolkit#GetAccountInfoResponse"}
	seen := map[string]bool{}
	add := func(u *User) {
		if u != nil && !seen[u.LocalID] {
			seen[u.LocalID] = true
			resp.Users = append(resp.Users, u.clone())
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
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, "")
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
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, "")
	if err != nil {
		return nil, err
	}
	return e.update(c, sc, req)
}

func (e *Engine) update(c Call, sc scope, req UpdateRequest) (*UpdateResponse, error) {
	if req.Provider != nil {
		return nil, NotImplemented("provider is not implemented yet.")
	}
	if req.UpgradeToFederatedLogin != nil {
		return nil, NotImplemented("upgradeToFederatedLogin is not implemented yet.")
	}
	if !c.admin() {
		if req.IDToken == "" && req.OOBCode == "" {
			return nil, badRequest("INVALID_REQ_TYPE : Unsupported request parameters.")
		}
		if req.CustomAttributes != nil {
			return nil, ErrInsufficientPermission
		}
	} else if req.LocalID == "" {
		return nil, badRequest("MISSING_LOCAL_ID")
	}
	if err := checkProfile(req.DisplayName, req.PhotoURL); err != nil {
		return nil, err
	}
	if req.CustomAttributes != nil && *req.CustomAttributes != "" {
		if err := validateSerializedClaims(*req.CustomAttributes); err != nil {
			return nil, err
		}
	}
	for _, a := range req.DeleteAttribute {
		if a == "PROVIDER" || a == "RAW_USER_INFO" {
			return nil, NotImplemented("deleteAttribute: " + a)
		}
	}
	var (
		before, nu     *User
		signInProvider string
		isEmailUpdate  bool
		newEmail       string
		validSinceSet  bool
		upserts        []ProviderUserInfo
	)
	if req.OOBCode != "" {
		oob := sc.space.oob(req.OOBCode)
		if oob == nil {
			return nil, ErrInvalidOOBCode
		}
		switch oob.RequestType {
		case "VERIFY_EMAIL":
			sc.space.deleteOOB(req.OOBCode)
			signInProvider = ProviderPassword
			if before = sc.space.byEmailAddr(oob.Email); before == nil {
				return nil, ErrInvalidOOBCode
			}
			nu = before.clone()
			nu.EmailVerified = ptr(true)
			nu.Email = oob.Email
		case "VERIFY_AND_CHANGE_EMAIL":
			sc.space.deleteOOB(req.OOBCode)
			if before = sc.space.byEmailAddr(oob.Email); before == nil || oob.NewEmail == "" {
				return nil, ErrInvalidOOBCode
			}
			if sc.space.byEmailAddr(oob.NewEmail) != nil {
				return nil, ErrEmailExists
			}
			nu = before.clone()
			if oob.NewEmail != nu.Email {
				nu.Email, nu.EmailVerified, newEmail = oob.NewEmail, ptr(true), oob.NewEmail
			}
		case "RECOVER_EMAIL":
			sc.space.deleteOOB(req.OOBCode)
			if before = sc.space.byInitialEmail(oob.Email); before == nil {
				return nil, ErrInvalidOOBCode
			}
			if sc.space.byEmailAddr(oob.Email) != nil {
				return nil, ErrEmailExists
			}
			nu = before.clone()
			if oob.Email != nu.Email {
				nu.Email, nu.EmailVerified = oob.Email, ptr(true)
			}
		default:
			return nil, NotImplemented(oob.RequestType)
		}
	} else {
		if req.IDToken != "" {
			t, err := e.parseIDToken(sc, req.IDToken)
			if err != nil {
				return nil, err
			}
			before, signInProvider = t.user, t.provider
			if req.DisableUser != nil {
				return nil, ErrOperationNotAllowed
			}
		} else {
			if req.LocalID == "" {
				return nil, badRequest("MISSING_LOCAL_ID")
			}
			if before = sc.space.get(req.LocalID); before == nil {
				return nil, ErrUserNotFound
			}
		}
		nu = before.clone()
		if req.Email != "" {
			if !isValidEmail(req.Email) {
				return nil, ErrInvalidEmail
			}
			newEmail = canonicalEmail(req.Email)
			if newEmail != before.Email {
				if sc.space.byEmailAddr(newEmail) != nil {
					return nil, ErrEmailExists
				}
				nu.Email, nu.EmailVerified, isEmailUpdate = newEmail, ptr(false), true
				if signInProvider != ProviderAnonymous && before.Email != "" && before.InitialEmail == "" {
					nu.InitialEmail = before.Email
				}
			}
		}
		if req.Password != "" {
			if err := checkNewPassword(req.Password); err != nil {
				return nil, err
			}
			nu.Salt = e.newSalt()
			nu.PasswordHash = hashPassword(req.Password, nu.Salt)
			nu.PasswordUpdatedAt = e.now().UnixMilli()
			signInProvider = ProviderPassword
		}
		if req.Password != "" || (req.ValidSince != nil && *req.ValidSince != "") || isEmailUpdate {
			nu.ValidSince, validSinceSet = e.seconds(), true
		}
		if req.MFA != nil {
			if !c.admin() {
				return nil, ErrInsufficientPermission
			}
			if len(req.MFA.Enrollments) == 0 {
				nu.MFAInfo = nil
			} else {
				enr, err := e.validateEnrollments(req.MFA.Enrollments, false)
				if err != nil {
					return nil, err
				}
				nu.MFAInfo = enr
			}
		}
		if req.DisplayName != nil {
			nu.DisplayName = *req.DisplayName
		}
		if req.PhotoURL != nil {
			nu.PhotoURL = *req.PhotoURL
		}
		if c.admin() {
			if req.DisableUser != nil {
				nu.Disabled = ptr(*req.DisableUser)
			}
			if req.PhoneNumber != "" && req.PhoneNumber != before.PhoneNumber {
				if !isValidPhone(req.PhoneNumber) {
					return nil, badRequest("INVALID_PHONE_NUMBER : Invalid format.")
				}
				if sc.space.byPhone(req.PhoneNumber) != nil {
					return nil, badRequest("PHONE_NUMBER_EXISTS")
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
		}
		for _, a := range req.DeleteAttribute {
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
		if slices.Contains(req.DeleteProvider, ProviderPassword) {
			nu.Email, nu.EmailVerified, nu.EmailLinkSignin, nu.PasswordHash, nu.Salt = "", nil, false, "", ""
		}
		if slices.Contains(req.DeleteProvider, ProviderPhone) {
			nu.PhoneNumber = ""
		}
	}
	if l := req.LinkProviderUserInfo; l != nil {
		if l.ProviderID == "" {
			return nil, badRequest("MISSING_PROVIDER_ID")
		}
		if l.RawID == "" {
			return nil, badRequest("MISSING_RAW_ID")
		}
		upserts = append(upserts, *l)
	}
	nu = sc.space.put(nu, upserts, req.DeleteProvider)
	e.emit(c, sc, OpUserUpdate, nu.LocalID, before, nu, nil)
	if signInProvider != ProviderAnonymous && nu.InitialEmail != "" && isEmailUpdate {
		e.createOOB(sc, c.BaseURL, nu.InitialEmail, "", "RECOVER_EMAIL", "recoverEmail", "")
	}
	resp := &UpdateResponse{Kind: "identitytoolkit#SetAccountInfoResponse", LocalID: nu.LocalID, EmailVerified: nu.EmailVerified,
		Email: nu.Email, DisplayName: nu.DisplayName, PhotoURL: nu.PhotoURL,
		NewEmail: newEmail, PasswordHash: nu.PasswordHash}
	if nu.ProviderUserInfo != nil {
		resp.ProviderUserInfo = slices.Clone(nu.ProviderUserInfo)
	}
	if validSinceSet && signInProvider != "" {
		_, resp.Tokens = e.issueTokens(sc, nu, signInProvider, nil)
	}
	return resp, nil
}

// createOOB records an out-of-band message in the outbox and returns it.
func (e *Engine) createOOB(sc scope, baseURL, email, newEmail, requestType, mode, continueURL string) *OOBCode {
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
