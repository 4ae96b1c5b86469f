package auth

import (
	"encoding/binary"
	"encoding/json"
	"slices"
)

// VerificationCode is one SMS the emulator "sent": the code, the number and the
// session it belongs to (GET /emulator/v1/projects/{p}/verificationCodes).
type VerificationCode struct {
	Code        string `json:"code"`
	PhoneNumber string `json:"phoneNumber"`
	SessionInfo string `json:"sessionInfo"`
	seq         uint64
}

// TemporaryProof lets a client sign in to an existing phone account after
// a link attempt found the number taken.
type TemporaryProof struct {
	PhoneNumber string `json:"phoneNumber"`
	Proof       string `json:"temporaryProof"`
}

const kindProof = "p"

// addCode stores a verification code.
func (s *space) addCode(c *VerificationCode) {
	old := s.codes
	c.seq = s.codeSeq
	s.codeSeq++
	s.codes = append(slices.Clip(old), c)
	v := *c
	s.j.record(seqKey(s.project, s.tenant, kindCode, c.seq), func() ([]byte, error) { return json.Marshal(v) }, func() { s.codes = old })
}

func (s *space) code(sessionInfo string) *VerificationCode {
	for _, c := range s.codes {
		if c.SessionInfo == sessionInfo {
			return c
		}
	}
	return nil
}

func (s *space) deleteCode(sessionInfo string) {
	old := s.codes
	i := slices.IndexFunc(old, func(c *VerificationCode) bool { return c.SessionInfo == sessionInfo })
	if i < 0 {
		return
	}
	s.codes = slices.Delete(slices.Clone(old), i, i+1)
	s.j.record(seqKey(s.project, s.tenant, kindCode, old[i].seq), func() ([]byte, error) { return nil, nil }, func() { s.codes = old })
}

// proof is a temporary proof of a phone number.
func (s *space) proof(p string) (TemporaryProof, bool) {
	v, ok := s.proofs[p]
	return v, ok
}

// pendingCodes copies the verification codes not yet used, oldest first.
func (s *space) pendingCodes() []VerificationCode {
	out := []VerificationCode{}
	for _, c := range s.codes {
		out = append(out, *c)
	}
	return out
}

func (s *space) addProof(p TemporaryProof) {
	setMap(s.j, s.proofs, p.Proof, p, false)
	s.j.record(recordKey(s.project, s.tenant, kindProof, p.Proof), func() ([]byte, error) { return json.Marshal(p) }, nil)
}

func seqKey(p, t, kind string, seq uint64) []byte {
	return recordKey(p, t, kind, string(binary.BigEndian.AppendUint64(nil, seq)))
}

// newCode mints a 6-digit code for phone, as the emulator's SMS.
func (e *core) newCode(sc scope, phone string) *VerificationCode {
	c := &VerificationCode{Code: e.randomString(6, "0123456789"), PhoneNumber: phone, SessionInfo: e.randomString(226, base64url)}
	if fixed, ok := sc.testCode(phone); ok {
		// A test number gets its configured code, as in production.
		c.Code = fixed
	}
	sc.space.addCode(c)
	return c
}

// verifyCode redeems a code: INVALID_SESSION_INFO, INVALID_CODE, or the
// verified number (the code is used up).
func verifyCode(sc scope, sessionInfo, code string) (string, error) {
	c := sc.space.code(sessionInfo)
	if c == nil {
		return "", badRequest("INVALID_SESSION_INFO")
	}
	if c.Code != code {
		return "", badRequest("INVALID_CODE")
	}
	sc.space.deleteCode(sessionInfo)
	return c.PhoneNumber, nil
}

// SendVerificationCodeRequest is accounts:sendVerificationCode.
type SendVerificationCodeRequest struct {
	PhoneNumber    string `json:"phoneNumber,omitempty"`
	RecaptchaToken string `json:"recaptchaToken,omitempty"`
	TenantID       string `json:"tenantId,omitempty"`
	// The reCAPTCHA Enterprise / Play Integrity fields are accepted and
	// ignored, as the emulator does.
	CaptchaResponse    string `json:"captchaResponse,omitempty"`
	ClientType         string `json:"clientType,omitempty"`
	RecaptchaVersion   string `json:"recaptchaVersion,omitempty"`
	PlayIntegrityToken string `json:"playIntegrityToken,omitempty"`
}

// SendVerificationCodeResponse carries the session of the code.
type SendVerificationCodeResponse struct {
	SessionInfo string `json:"sessionInfo"`
}

// SendVerificationCode "texts" a code to a phone number: it lands in the
// verification-code list (ListVerificationCodes) instead.
func (e *Engine) SendVerificationCode(c Call, req SendVerificationCodeRequest) (_ *SendVerificationCodeResponse, err error) {
	defer e.begin()(&err)
	return e.phone.sendVerificationCode(c, req)
}

// phoneFlow is phone-number sign-in: codes "texted" to the SMS outbox,
// redeemed to sign in, create an account or link the number.
type phoneFlow struct{ *core }

func (e phoneFlow) sendVerificationCode(c Call, req SendVerificationCodeRequest) (*SendVerificationCodeResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if sc.tenant != nil {
		return nil, badRequest("UNSUPPORTED_TENANT_OPERATION")
	}
	if !sc.allowPhone() {
		return nil, ErrOperationNotAllowed
	}
	if !isValidPhone(req.PhoneNumber) {
		return nil, badRequest("INVALID_PHONE_NUMBER : Invalid format.")
	}
	if u := sc.space.byPhone(req.PhoneNumber); u != nil && len(u.MFAInfo) > 0 {
		return nil, errUnsupportedFirstFactor
	}
	if err := e.block.send(sc, BeforeSendSms, map[string]any{"sms_type": "SIGN_IN_OR_SIGN_UP", "phone_number": req.PhoneNumber}); err != nil {
		return nil, err
	}
	code := e.newCode(sc, req.PhoneNumber)
	e.emit(c, sc, OpCodeSent, req.PhoneNumber, nil, nil, map[string]any{"reason": "code_for_sign_in"})
	return &SendVerificationCodeResponse{SessionInfo: code.SessionInfo}, nil
}

var errUnsupportedFirstFactor = badRequest("UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user.")

// SignInWithPhoneNumberRequest is accounts:signInWithPhoneNumber.
type SignInWithPhoneNumberRequest struct {
	SessionInfo    string `json:"sessionInfo,omitempty"`
	Code           string `json:"code,omitempty"`
	PhoneNumber    string `json:"phoneNumber,omitempty"`
	TemporaryProof string `json:"temporaryProof,omitempty"`
	IDToken        string `json:"idToken,omitempty"`
	TenantID       string `json:"tenantId,omitempty"`
	Operation      string `json:"operation,omitempty"`
}

// SignInWithPhoneNumberResponse is the sign-in (or, for a link to a number
// another account has, the temporary proof).
type SignInWithPhoneNumberResponse struct {
	IsNewUser               *bool  `json:"isNewUser,omitempty"`
	PhoneNumber             string `json:"phoneNumber,omitempty"`
	LocalID                 string `json:"localId,omitempty"`
	TemporaryProof          string `json:"temporaryProof,omitempty"`
	TemporaryProofExpiresIn string `json:"temporaryProofExpiresIn,omitempty"`
	Tokens
}

// SignInWithPhoneNumber redeems a code (or a temporary proof): it signs in
// the account with that number, creates one, or, with an idToken, links
// (updates) the number on the caller's account.
func (e *Engine) SignInWithPhoneNumber(c Call, req SignInWithPhoneNumberRequest) (_ *SignInWithPhoneNumberResponse, err error) {
	defer e.begin()(&err)
	return e.phone.signIn(c, req)
}

func (f phoneFlow) signIn(c Call, req SignInWithPhoneNumberRequest) (*SignInWithPhoneNumberResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if sc.tenant != nil {
		return nil, badRequest("UNSUPPORTED_TENANT_OPERATION")
	}
	phone, err := redeemPhone(sc, req)
	if err != nil {
		return nil, err
	}
	byPhone := sc.space.byPhone(phone)
	var fromToken *User
	if req.IDToken != "" {
		t, err := f.parseIDToken(sc, req.IDToken)
		if err != nil {
			return nil, err
		}
		fromToken = t.user
	}
	if byPhone != nil && fromToken != nil && byPhone.LocalID != fromToken.LocalID {
		return f.proveNumber(sc, req, phone)
	}
	u := fromToken
	if u == nil {
		u = byPhone
	}
	resp := &SignInWithPhoneNumberResponse{IsNewUser: ptr(u == nil), PhoneNumber: phone}
	stored, err := f.storePhone(c, sc, u, phone)
	if err != nil {
		return nil, err
	}
	resp.LocalID = stored.LocalID
	var extra map[string]any
	if !stored.isDisabled() {
		if stored, extra, err = f.block.beforeSignIn(c, sc, stored, blockingOpts{signInMethod: ProviderPhone}); err != nil {
			return nil, err
		}
	}
	if stored.isDisabled() {
		return nil, ErrUserDisabled
	}
	var after *User
	after, resp.Tokens = f.issueTokens(sc, stored, ProviderPhone, extra)
	f.emit(c, sc, OpSignIn, after.LocalID, stored, after, map[string]any{"provider": ProviderPhone})
	return resp, nil
}

// redeemPhone is the number a sign-in proves: a temporary proof's, or a
// code's (used up).
func redeemPhone(sc scope, req SignInWithPhoneNumberRequest) (string, error) {
	if req.TemporaryProof != "" {
		if req.PhoneNumber == "" {
			return "", badRequest("MISSING_PHONE_NUMBER")
		}
		p, ok := sc.space.proof(req.TemporaryProof)
		if !ok || p.PhoneNumber != req.PhoneNumber {
			return "", badRequest("INVALID_TEMPORARY_PROOF")
		}
		return p.PhoneNumber, nil
	}
	if req.SessionInfo == "" {
		return "", badRequest("MISSING_SESSION_INFO")
	}
	if req.Code == "" {
		return "", badRequest("MISSING_CODE")
	}
	return verifyCode(sc, req.SessionInfo, req.Code)
}

// proveNumber answers a link to a number another account has with a
// temporary proof of the number (a proof is not accepted twice).
func (f phoneFlow) proveNumber(sc scope, req SignInWithPhoneNumberRequest, phone string) (*SignInWithPhoneNumberResponse, error) {
	if req.TemporaryProof != "" {
		return nil, badRequest("PHONE_NUMBER_EXISTS")
	}
	p := TemporaryProof{PhoneNumber: phone, Proof: f.randomString(119, base64url)}
	sc.space.addProof(p)
	return &SignInWithPhoneNumberResponse{PhoneNumber: phone, TemporaryProof: p.Proof, TemporaryProofExpiresIn: "3600"}, nil
}

// storePhone creates the account of a new number (after beforeCreate), or
// sets the number on u, which may not have second factors.
func (f phoneFlow) storePhone(c Call, sc scope, u *User, phone string) (*User, error) {
	now := f.millis()
	if u == nil {
		nu, err := f.block.beforeCreate(sc, &User{LocalID: f.newLocalID(sc.space), PhoneNumber: phone, CreatedAt: now, LastLoginAt: now}, blockingOpts{signInMethod: ProviderPhone})
		if err != nil {
			return nil, err
		}
		stored := sc.space.put(nu, nil, nil)
		f.emit(c, sc, OpUserCreate, stored.LocalID, nil, stored, map[string]any{"provider": ProviderPhone})
		return stored, nil
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	if len(u.MFAInfo) > 0 {
		return nil, errUnsupportedFirstFactor
	}
	nu := u.clone()
	nu.PhoneNumber, nu.LastLoginAt = phone, now
	stored := sc.space.put(nu, nil, nil)
	f.emit(c, sc, OpUserUpdate, stored.LocalID, u, stored, map[string]any{"provider": ProviderPhone})
	return stored, nil
}

// VerificationCodesResponse is the emulator's SMS outbox.
type VerificationCodesResponse struct {
	VerificationCodes []VerificationCode `json:"verificationCodes"`
}

// ListVerificationCodes returns every code not yet used, oldest first.
func (e *Engine) ListVerificationCodes(c Call) (_ *VerificationCodesResponse, err error) {
	defer e.begin()(&err)
	return e.phone.listVerificationCodes(c)
}

func (e phoneFlow) listVerificationCodes(c Call) (*VerificationCodesResponse, error) {
	sc, err := e.scopeFor(c, "", "", nil)
	if err != nil {
		return nil, err
	}
	return &VerificationCodesResponse{VerificationCodes: sc.space.pendingCodes()}, nil
}
