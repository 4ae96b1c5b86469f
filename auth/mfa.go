package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"time"
)

// MFAEnrollment is a second factor of an account (mfaInfo): an SMS number
// or a TOTP authenticator.
type MFAEnrollment struct {
	MFAEnrollmentID       string    `json:"mfaEnrollmentId,omitempty"`
	DisplayName           string    `json:"displayName,omitempty"`
	EnrolledAt            string    `json:"enrolledAt,omitempty"`
	PhoneInfo             string    `json:"phoneInfo,omitempty"`
	UnobfuscatedPhoneInfo string    `json:"unobfuscatedPhoneInfo,omitempty"`
	TOTPInfo              *TOTPInfo `json:"totpInfo,omitempty"`
}

// TOTPInfo marks a TOTP enrollment (its secret never leaves the engine).
type TOTPInfo struct{}

// redacted is the form a sign-in's MFA challenge lists: numbers obfuscated.
func (m MFAEnrollment) redacted() MFAEnrollment {
	out := MFAEnrollment{MFAEnrollmentID: m.MFAEnrollmentID, DisplayName: m.DisplayName, EnrolledAt: m.EnrolledAt, TOTPInfo: m.TOTPInfo}
	if m.UnobfuscatedPhoneInfo != "" {
		out.PhoneInfo = obfuscatePhone(m.UnobfuscatedPhoneInfo)
	}
	return out
}

// obfuscatePhone hides all but the last four digits.
func obfuscatePhone(p string) string {
	b := []byte(p)
	digits := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] >= '0' && b[i] <= '9' {
			digits++
			if digits > 4 {
				b[i] = '*'
			}
		}
	}
	return string(b)
}

// smsMFA and totpMFA say which second factors the scope allows: the project
// itself always allows SMS (as the emulator) and TOTP once its mfa config
// enables a TOTP provider (as production); a tenant allows them when its
// mfaConfig is ENABLED or MANDATORY (SMS when listed, TOTP whenever enabled:
// tenants' providerConfigs are not modelled).
func (s scope) smsMFA() bool {
	if s.tenant == nil {
		return true
	}
	m := s.tenant.config.MFAConfig
	return m != nil && (m.State == "ENABLED" || m.State == "MANDATORY") && slices.Contains(m.EnabledProviders, "PHONE_SMS")
}

func (s scope) totpMFA() bool {
	if s.tenant == nil {
		return s.project.config.MFA.totp() != nil
	}
	m := s.tenant.config.MFAConfig
	return m != nil && (m.State == "ENABLED" || m.State == "MANDATORY")
}

func (s scope) mfaRequired(u *User) bool { return len(u.MFAInfo) > 0 && (s.smsMFA() || s.totpMFA()) }

// mfaIneligible are first factors MFA cannot follow.
var mfaIneligible = []string{ProviderAnonymous, ProviderPhone, ProviderCustom, "gc.apple.com"}

// MFAPending is the answer to a first-factor sign-in of an account with
// second factors: no tokens, a pending credential and the factors.
type MFAPending struct {
	MFAPendingCredential string          `json:"mfaPendingCredential,omitempty"`
	MFAInfo              []MFAEnrollment `json:"mfaInfo,omitempty"`
}

func (e *core) mfaPending(sc scope, u *User, provider string) MFAPending {
	p := map[string]any{"_AuthEmulatorMfaPendingCredential": "DO NOT MODIFY", "localId": u.LocalID, "signInProvider": provider, "projectId": sc.project.id}
	if tid := sc.tenantID(); tid != "" {
		p["tenantId"] = tid
	}
	b, _ := json.Marshal(p)
	out := MFAPending{MFAPendingCredential: base64.StdEncoding.EncodeToString(b)}
	for _, m := range u.MFAInfo {
		out.MFAInfo = append(out.MFAInfo, m.redacted())
	}
	return out
}

func parsePending(sc scope, cred string) (*User, string, error) {
	bad := badRequest("((Invalid phoneVerificationInfo.mfaPendingCredential.))")
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return nil, "", bad
	}
	var p struct {
		Marker         string `json:"_AuthEmulatorMfaPendingCredential"`
		LocalID        string `json:"localId"`
		SignInProvider string `json:"signInProvider"`
		ProjectID      string `json:"projectId"`
		TenantID       string `json:"tenantId"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Marker == "" {
		return nil, "", bad
	}
	if p.ProjectID != sc.project.id || p.TenantID != sc.tenantID() {
		return nil, "", badRequest("INVALID_PROJECT_ID : Project ID does not match MFA pending credential.")
	}
	u := sc.space.get(p.LocalID)
	if u == nil {
		return nil, "", badRequest("((User in pendingCredentialPayload does not exist.))")
	}
	return u, p.SignInProvider, nil
}

// validateEnrollments checks admin-supplied factors (create, import,
// update) and fills their ids and times.
func (e *core) validateEnrollments(in []MFAEnrollment, generateIDs bool) ([]MFAEnrollment, error) {
	var out []MFAEnrollment
	phones, ids := map[string]bool{}, map[string]bool{}
	for _, m := range in {
		if m.TOTPInfo != nil {
			return nil, badRequest("INVALID_ARGUMENT : TOTP second factors cannot be created by an administrator.")
		}
		if !isValidPhone(m.PhoneInfo) {
			return nil, badRequest("INVALID_MFA_PHONE_NUMBER : Invalid format.")
		}
		if phones[m.PhoneInfo] {
			continue
		}
		if generateIDs || m.MFAEnrollmentID == "" {
			m.MFAEnrollmentID = e.randomString(28, alnum)
		}
		if ids[m.MFAEnrollmentID] {
			return nil, badRequest("DUPLICATE_MFA_ENROLLMENT_ID")
		}
		if m.EnrolledAt == "" {
			m.EnrolledAt = e.now().UTC().Format(time.RFC3339Nano)
		}
		m.UnobfuscatedPhoneInfo = m.PhoneInfo
		phones[m.PhoneInfo], ids[m.MFAEnrollmentID] = true, true
		out = append(out, m)
	}
	return out, nil
}

// ---- TOTP ----

// TOTPRecord is a pending TOTP enrollment (by session) or an enrolled
// secret (by uid and enrollment id).
type TOTPRecord struct {
	LocalID string `json:"localId"`
	Secret  string `json:"secret"` // base32, no padding
}

const (
	totpDigits = 6
	totpPeriod = 30
)

func (s *space) setTOTP(k string, r *TOTPRecord) {
	if r == nil {
		setMap(s.j, s.totp, k, TOTPRecord{}, true)
	} else {
		setMap(s.j, s.totp, k, *r, false)
	}
	s.j.record(recordKey(s.project, s.tenant, kindPending, k), func() ([]byte, error) {
		v, ok := s.totp[k]
		if !ok {
			return nil, nil
		}
		return json.Marshal(v)
	}, nil)
}

func secretKey(uid, enrollmentID string) string { return uid + "\x00" + enrollmentID }

// sessionKey is the key of a pending TOTP enrollment.
func sessionKey(session string) string { return "session\x00" + session }

// totpRecord is the TOTP record under k (secretKey or sessionKey).
func (s *space) totpRecord(k string) (TOTPRecord, bool) {
	r, ok := s.totp[k]
	return r, ok
}

// totpCode is RFC 6238's code for a base32 secret at t (SHA-1, 30 s, 6 digits).
func totpCode(secret string, t time.Time) string {
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		return ""
	}
	mac := hmac.New(sha1.New, key)
	_ = binary.Write(mac, binary.BigEndian, uint64(t.Unix()/totpPeriod))
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0xf
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// totpValid accepts the current code and those up to adjacentIntervals
// steps before or after (the project's TOTP config; 1 for tenants).
func (e *core) totpValid(sc scope, secret, code string) bool {
	adj := 1
	if sc.tenant == nil {
		if p := sc.project.config.MFA.totp(); p != nil {
			adj = p.TOTPProviderConfig.AdjacentIntervals
		}
	}
	now := e.now()
	for d := -adj; d <= adj; d++ {
		if c := totpCode(secret, now.Add(time.Duration(d)*totpPeriod*time.Second)); c != "" && hmac.Equal([]byte(c), []byte(code)) {
			return true
		}
	}
	return false
}

// ---- enrollment ----

// PhoneInfo is phoneEnrollmentInfo / phoneSignInInfo.
type PhoneInfo struct {
	PhoneNumber    string `json:"phoneNumber,omitempty"`
	RecaptchaToken string `json:"recaptchaToken,omitempty"`
}

// PhoneVerificationInfo is the code of an SMS factor.
type PhoneVerificationInfo struct {
	SessionInfo              string `json:"sessionInfo,omitempty"`
	Code                     string `json:"code,omitempty"`
	AndroidVerificationProof string `json:"androidVerificationProof,omitempty"`
	PhoneNumber              string `json:"phoneNumber,omitempty"`
}

// TOTPVerificationInfo is the code of a TOTP factor.
// verify checks an SMS second factor's proof, as enrollment and sign-in
// both take it, and returns the verified phone number.
func (v *PhoneVerificationInfo) verify(sc scope) (string, error) {
	if v.AndroidVerificationProof != "" {
		return "", NotImplemented("androidVerificationProof is unsupported!")
	}
	if v.Code == "" {
		return "", badRequest("MISSING_CODE")
	}
	if v.SessionInfo == "" {
		return "", badRequest("MISSING_SESSION_INFO")
	}
	return verifyCode(sc, v.SessionInfo, v.Code)
}

type TOTPVerificationInfo struct {
	SessionInfo      string `json:"sessionInfo,omitempty"`
	VerificationCode string `json:"verificationCode,omitempty"`
}

// MFAEnrollmentStartRequest is accounts/mfaEnrollment:start.
type MFAEnrollmentStartRequest struct {
	IDToken             string     `json:"idToken,omitempty"`
	PhoneEnrollmentInfo *PhoneInfo `json:"phoneEnrollmentInfo,omitempty"`
	TOTPEnrollmentInfo  *struct{}  `json:"totpEnrollmentInfo,omitempty"`
	TenantID            string     `json:"tenantId,omitempty"`
}

// TOTPSessionInfo is what a TOTP enrollment start returns.
type TOTPSessionInfo struct {
	SharedSecretKey        string `json:"sharedSecretKey"`
	VerificationCodeLength int    `json:"verificationCodeLength"`
	HashingAlgorithm       string `json:"hashingAlgorithm"`
	PeriodSec              int    `json:"periodSec"`
	SessionInfo            string `json:"sessionInfo"`
	FinalizeEnrollmentTime string `json:"finalizeEnrollmentTime"`
}

// MFAEnrollmentStartResponse carries the SMS session or the TOTP secret.
type MFAEnrollmentStartResponse struct {
	PhoneSessionInfo *SendVerificationCodeResponse `json:"phoneSessionInfo,omitempty"`
	TOTPSessionInfo  *TOTPSessionInfo              `json:"totpSessionInfo,omitempty"`
}

var errSMSMFADisabled = badRequest("OPERATION_NOT_ALLOWED : SMS based MFA not enabled.")

func (e *core) mfaUser(sc scope, idToken string) (*parsedIDToken, error) {
	if idToken == "" {
		return nil, badRequest("MISSING_ID_TOKEN")
	}
	t, err := e.parseIDToken(sc, idToken)
	if err != nil {
		return nil, err
	}
	if slices.Contains(mfaIneligible, t.provider) {
		return nil, badRequest("UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor.")
	}
	return t, nil
}

// MFAEnrollmentStart begins enrolling a second factor: it texts a code to
// the number, or creates a TOTP secret.
func (e *Engine) MFAEnrollmentStart(c Call, req MFAEnrollmentStartRequest) (_ *MFAEnrollmentStartResponse, err error) {
	defer e.begin()(&err)
	return e.mfa.enrollmentStart(c, req)
}

// mfaFlow is second factors: enrolling an SMS number or a TOTP
// authenticator (start, finalize), withdrawing one, and completing a sign-in
// that is pending a second factor.
type mfaFlow struct{ *core }

func (f mfaFlow) enrollmentStart(c Call, req MFAEnrollmentStartRequest) (*MFAEnrollmentStartResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if req.TOTPEnrollmentInfo != nil {
		return f.startTOTP(sc, req)
	}
	return f.startSMS(c, sc, req)
}

// enrollingUser is the idToken's account, which may enroll a second
// factor once its email is verified.
func (f mfaFlow) enrollingUser(sc scope, idToken string) (*parsedIDToken, error) {
	t, err := f.mfaUser(sc, idToken)
	if err != nil {
		return nil, err
	}
	if !t.user.isEmailVerified() {
		return nil, badRequest("UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")
	}
	return t, nil
}

// startTOTP creates the secret of a TOTP enrollment, pending until
// finalized with a code.
func (f mfaFlow) startTOTP(sc scope, req MFAEnrollmentStartRequest) (*MFAEnrollmentStartResponse, error) {
	if !sc.totpMFA() {
		return nil, badRequest("OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
	}
	t, err := f.enrollingUser(sc, req.IDToken)
	if err != nil {
		return nil, err
	}
	raw := []byte(f.randomString(20, alnum))
	secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw)
	session := f.randomString(226, base64url)
	sc.space.setTOTP(sessionKey(session), &TOTPRecord{LocalID: t.user.LocalID, Secret: secret})
	return &MFAEnrollmentStartResponse{TOTPSessionInfo: &TOTPSessionInfo{SharedSecretKey: secret, VerificationCodeLength: totpDigits,
		HashingAlgorithm: "SHA1", PeriodSec: totpPeriod, SessionInfo: session,
		FinalizeEnrollmentTime: f.now().Add(time.Hour).UTC().Format(time.RFC3339Nano)}}, nil
}

// startSMS texts a code to the number being enrolled (after
// beforeSendSms).
func (f mfaFlow) startSMS(c Call, sc scope, req MFAEnrollmentStartRequest) (*MFAEnrollmentStartResponse, error) {
	if !sc.smsMFA() {
		return nil, errSMSMFADisabled
	}
	t, err := f.enrollingUser(sc, req.IDToken)
	if err != nil {
		return nil, err
	}
	if req.PhoneEnrollmentInfo == nil {
		return nil, badRequest("INVALID_ARGUMENT : ((Missing phoneEnrollmentInfo.))")
	}
	phone := req.PhoneEnrollmentInfo.PhoneNumber
	if !isValidPhone(phone) {
		return nil, badRequest("INVALID_PHONE_NUMBER : Invalid format.")
	}
	if slices.ContainsFunc(t.user.MFAInfo, func(m MFAEnrollment) bool { return m.UnobfuscatedPhoneInfo == phone }) {
		return nil, errSecondFactorExists
	}
	if err := f.block.send(sc, BeforeSendSms, map[string]any{"sms_type": "MULTI_FACTOR_ENROLLMENT", "phone_number": phone}); err != nil {
		return nil, err
	}
	code := f.newCode(sc, phone)
	f.emit(c, sc, OpCodeSent, phone, nil, nil, map[string]any{"reason": "code_for_mfa_enrollment"})
	return &MFAEnrollmentStartResponse{PhoneSessionInfo: &SendVerificationCodeResponse{SessionInfo: code.SessionInfo}}, nil
}

var errSecondFactorExists = badRequest("SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account.")

// MFAEnrollmentFinalizeRequest is accounts/mfaEnrollment:finalize.
type MFAEnrollmentFinalizeRequest struct {
	IDToken               string                 `json:"idToken,omitempty"`
	DisplayName           string                 `json:"displayName,omitempty"`
	PhoneVerificationInfo *PhoneVerificationInfo `json:"phoneVerificationInfo,omitempty"`
	TOTPVerificationInfo  *TOTPVerificationInfo  `json:"totpVerificationInfo,omitempty"`
	TenantID              string                 `json:"tenantId,omitempty"`
}

// MFAFinalizeResponse carries the tokens of the upgraded session.
type MFAFinalizeResponse struct {
	IDToken      string `json:"idToken"`
	RefreshToken string `json:"refreshToken"`
}

// MFAEnrollmentFinalize checks the code and adds the factor.
func (e *Engine) MFAEnrollmentFinalize(c Call, req MFAEnrollmentFinalizeRequest) (_ *MFAFinalizeResponse, err error) {
	defer e.begin()(&err)
	return e.mfa.enrollmentFinalize(c, req)
}

func (f mfaFlow) enrollmentFinalize(c Call, req MFAEnrollmentFinalizeRequest) (*MFAFinalizeResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	var (
		enrollment MFAEnrollment
		t          *parsedIDToken
		secret     string
	)
	if req.TOTPVerificationInfo != nil {
		t, secret, err = f.verifyTOTPEnrollment(sc, req)
		enrollment.TOTPInfo = &TOTPInfo{}
	} else {
		var phone string
		t, phone, err = f.verifySMSEnrollment(sc, req)
		enrollment.PhoneInfo, enrollment.UnobfuscatedPhoneInfo = phone, phone
	}
	if err != nil {
		return nil, err
	}
	enrollment.DisplayName = req.DisplayName
	enrollment.EnrolledAt = f.now().UTC().Format("2006-01-02T15:04:05.000Z")
	for {
		enrollment.MFAEnrollmentID = f.randomString(28, alnum)
		if !slices.ContainsFunc(t.user.MFAInfo, func(m MFAEnrollment) bool { return m.MFAEnrollmentID == enrollment.MFAEnrollmentID }) {
			break
		}
	}
	if secret != "" {
		sc.space.setTOTP(secretKey(t.user.LocalID, enrollment.MFAEnrollmentID), &TOTPRecord{LocalID: t.user.LocalID, Secret: secret})
	}
	nu := t.user.clone()
	nu.MFAInfo = append(nu.MFAInfo, enrollment)
	nu = sc.space.put(nu, nil, nil)
	f.emit(c, sc, OpUserUpdate, nu.LocalID, t.user, nu, map[string]any{"reason": "mfa_enroll"})
	_, toks := f.issueTokensMFA(sc, nu, t.provider, nil, &secondFactor{Identifier: enrollment.MFAEnrollmentID, Provider: factorProvider(enrollment)})
	return &MFAFinalizeResponse{IDToken: toks.IDToken, RefreshToken: toks.RefreshToken}, nil
}

// verifyTOTPEnrollment checks the code of the pending TOTP enrollment
// (used up when right) and returns its secret.
func (f mfaFlow) verifyTOTPEnrollment(sc scope, req MFAEnrollmentFinalizeRequest) (*parsedIDToken, string, error) {
	if !sc.totpMFA() {
		return nil, "", badRequest("OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
	}
	t, err := f.mfaUser(sc, req.IDToken)
	if err != nil {
		return nil, "", err
	}
	v := req.TOTPVerificationInfo
	if v.SessionInfo == "" {
		return nil, "", badRequest("MISSING_SESSION_INFO")
	}
	if v.VerificationCode == "" {
		return nil, "", badRequest("MISSING_CODE")
	}
	pend, ok := sc.space.totpRecord(sessionKey(v.SessionInfo))
	if !ok || pend.LocalID != t.user.LocalID {
		return nil, "", badRequest("INVALID_SESSION_INFO")
	}
	if !f.totpValid(sc, pend.Secret, v.VerificationCode) {
		return nil, "", badRequest("INVALID_CODE : The TOTP verification code is invalid.")
	}
	sc.space.setTOTP(sessionKey(v.SessionInfo), nil)
	return t, pend.Secret, nil
}

// verifySMSEnrollment redeems the code texted to the number being
// enrolled and returns the number.
func (f mfaFlow) verifySMSEnrollment(sc scope, req MFAEnrollmentFinalizeRequest) (*parsedIDToken, string, error) {
	if !sc.smsMFA() {
		return nil, "", errSMSMFADisabled
	}
	t, err := f.mfaUser(sc, req.IDToken)
	if err != nil {
		return nil, "", err
	}
	v := req.PhoneVerificationInfo
	if v == nil {
		return nil, "", badRequest("INVALID_ARGUMENT : ((Missing phoneVerificationInfo.))")
	}
	phone, err := v.verify(sc)
	if err != nil {
		return nil, "", err
	}
	if slices.ContainsFunc(t.user.MFAInfo, func(m MFAEnrollment) bool { return m.UnobfuscatedPhoneInfo == phone }) {
		return nil, "", errSecondFactorExists
	}
	return t, phone, nil
}

func factorProvider(m MFAEnrollment) string {
	if m.TOTPInfo != nil {
		return "totp"
	}
	return ProviderPhone
}

// MFAEnrollmentWithdrawRequest is accounts/mfaEnrollment:withdraw.
type MFAEnrollmentWithdrawRequest struct {
	IDToken         string `json:"idToken,omitempty"`
	MFAEnrollmentID string `json:"mfaEnrollmentId,omitempty"`
	TenantID        string `json:"tenantId,omitempty"`
}

// MFAEnrollmentWithdraw removes a factor and signs the session in again.
func (e *Engine) MFAEnrollmentWithdraw(c Call, req MFAEnrollmentWithdrawRequest) (_ *Tokens, err error) {
	defer e.begin()(&err)
	return e.mfa.enrollmentWithdraw(c, req)
}

func (e mfaFlow) enrollmentWithdraw(c Call, req MFAEnrollmentWithdrawRequest) (*Tokens, error) {
	sc, err := e.enabledScope(c, req.TenantID, req.IDToken, nil)
	if err != nil {
		return nil, err
	}
	if req.IDToken == "" {
		return nil, badRequest("MISSING_ID_TOKEN")
	}
	t, err := e.parseIDToken(sc, req.IDToken)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(t.user.MFAInfo, func(m MFAEnrollment) bool { return m.MFAEnrollmentID == req.MFAEnrollmentID })
	if i < 0 {
		return nil, badRequest("MFA_ENROLLMENT_NOT_FOUND")
	}
	nu := t.user.clone()
	nu.MFAInfo = slices.Delete(nu.MFAInfo, i, i+1)
	if _, ok := sc.space.totpRecord(secretKey(nu.LocalID, req.MFAEnrollmentID)); ok {
		sc.space.setTOTP(secretKey(nu.LocalID, req.MFAEnrollmentID), nil)
	}
	nu = sc.space.put(nu, nil, nil)
	e.emit(c, sc, OpUserUpdate, nu.LocalID, t.user, nu, map[string]any{"reason": "mfa_withdraw"})
	_, toks := e.issueTokens(sc, nu, t.provider, nil)
	return &toks, nil
}

// MFASignInStartRequest is accounts/mfaSignIn:start.
type MFASignInStartRequest struct {
	MFAPendingCredential string     `json:"mfaPendingCredential,omitempty"`
	MFAEnrollmentID      string     `json:"mfaEnrollmentId,omitempty"`
	PhoneSignInInfo      *PhoneInfo `json:"phoneSignInInfo,omitempty"`
	TenantID             string     `json:"tenantId,omitempty"`
}

// MFASignInStartResponse carries the SMS session.
type MFASignInStartResponse struct {
	PhoneResponseInfo *SendVerificationCodeResponse `json:"phoneResponseInfo,omitempty"`
}

// MFASignInStart texts a code to an SMS factor of a pending sign-in.
func (e *Engine) MFASignInStart(c Call, req MFASignInStartRequest) (_ *MFASignInStartResponse, err error) {
	defer e.begin()(&err)
	return e.mfa.signInStart(c, req)
}

func (e mfaFlow) signInStart(c Call, req MFASignInStartRequest) (*MFASignInStartResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if !sc.smsMFA() {
		return nil, errSMSMFADisabled
	}
	if req.MFAPendingCredential == "" {
		return nil, badRequest("MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.")
	}
	if req.MFAEnrollmentID == "" {
		return nil, badRequest("MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
	}
	u, _, err := parsePending(sc, req.MFAPendingCredential)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(u.MFAInfo, func(m MFAEnrollment) bool { return m.MFAEnrollmentID == req.MFAEnrollmentID })
	if i < 0 {
		return nil, badRequest("MFA_ENROLLMENT_NOT_FOUND")
	}
	phone := u.MFAInfo[i].UnobfuscatedPhoneInfo
	if phone == "" {
		return nil, badRequest("INVALID_ARGUMENT : MFA provider not supported!")
	}
	if err := e.block.send(sc, BeforeSendSms, map[string]any{"sms_type": "MULTI_FACTOR_SIGN_IN", "phone_number": phone}); err != nil {
		return nil, err
	}
	code := e.newCode(sc, phone)
	e.emit(c, sc, OpCodeSent, phone, nil, nil, map[string]any{"reason": "code_for_mfa_sign_in"})
	return &MFASignInStartResponse{PhoneResponseInfo: &SendVerificationCodeResponse{SessionInfo: code.SessionInfo}}, nil
}

// MFASignInFinalizeRequest is accounts/mfaSignIn:finalize.
type MFASignInFinalizeRequest struct {
	MFAPendingCredential  string                 `json:"mfaPendingCredential,omitempty"`
	MFAEnrollmentID       string                 `json:"mfaEnrollmentId,omitempty"`
	PhoneVerificationInfo *PhoneVerificationInfo `json:"phoneVerificationInfo,omitempty"`
	TOTPVerificationInfo  *TOTPVerificationInfo  `json:"totpVerificationInfo,omitempty"`
	TenantID              string                 `json:"tenantId,omitempty"`
}

// MFASignInFinalize completes a pending sign-in with the second factor.
func (e *Engine) MFASignInFinalize(c Call, req MFASignInFinalizeRequest) (_ *MFAFinalizeResponse, err error) {
	defer e.begin()(&err)
	return e.mfa.signInFinalize(c, req)
}

func (f mfaFlow) signInFinalize(c Call, req MFASignInFinalizeRequest) (*MFAFinalizeResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if req.MFAPendingCredential == "" {
		return nil, badRequest("MISSING_CREDENTIAL : Please set MFA Pending Credential.")
	}
	var (
		u        *User
		provider string
		factor   MFAEnrollment
	)
	if req.TOTPVerificationInfo != nil {
		u, provider, factor, err = f.totpFactor(sc, req)
	} else {
		u, provider, factor, err = f.smsFactor(sc, req)
	}
	if err != nil {
		return nil, err
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	u, extra, err := f.block.beforeSignIn(c, sc, u, blockingOpts{signInMethod: provider, signInSecondFactor: factorProvider(factor)})
	if err != nil {
		return nil, err
	}
	if u.isDisabled() {
		return nil, ErrUserDisabled
	}
	nu := u.clone()
	nu.LastLoginAt = f.millis()
	nu = sc.space.put(nu, nil, nil)
	after, toks := f.issueTokensMFA(sc, nu, provider, extra, &secondFactor{Identifier: factor.MFAEnrollmentID, Provider: factorProvider(factor)})
	f.emit(c, sc, OpSignIn, after.LocalID, u, after, map[string]any{"provider": provider, "reason": "second_factor_" + factorProvider(factor)})
	return &MFAFinalizeResponse{IDToken: toks.IDToken, RefreshToken: toks.RefreshToken}, nil
}

// totpFactor checks a TOTP code against the pending sign-in's enrolled
// authenticator: the account, its first factor and the factor passed.
func (f mfaFlow) totpFactor(sc scope, req MFASignInFinalizeRequest) (*User, string, MFAEnrollment, error) {
	if !sc.totpMFA() {
		return nil, "", MFAEnrollment{}, badRequest("OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
	}
	if req.TOTPVerificationInfo.VerificationCode == "" {
		return nil, "", MFAEnrollment{}, badRequest("MISSING_CODE")
	}
	u, provider, err := parsePending(sc, req.MFAPendingCredential)
	if err != nil {
		return nil, "", MFAEnrollment{}, err
	}
	i := slices.IndexFunc(u.MFAInfo, func(m MFAEnrollment) bool { return m.MFAEnrollmentID == req.MFAEnrollmentID && m.TOTPInfo != nil })
	rec, ok := sc.space.totpRecord(secretKey(u.LocalID, req.MFAEnrollmentID))
	if i < 0 || !ok {
		return nil, "", MFAEnrollment{}, badRequest("MFA_ENROLLMENT_NOT_FOUND")
	}
	if !f.totpValid(sc, rec.Secret, req.TOTPVerificationInfo.VerificationCode) {
		return nil, "", MFAEnrollment{}, badRequest("INVALID_CODE : The TOTP verification code is invalid.")
	}
	return u, provider, u.MFAInfo[i], nil
}

// smsFactor redeems an SMS code of the pending sign-in: the account, its
// first factor and the enrolled number the code went to.
func (f mfaFlow) smsFactor(sc scope, req MFASignInFinalizeRequest) (*User, string, MFAEnrollment, error) {
	if !sc.smsMFA() {
		return nil, "", MFAEnrollment{}, errSMSMFADisabled
	}
	v := req.PhoneVerificationInfo
	if v == nil {
		return nil, "", MFAEnrollment{}, badRequest("INVALID_ARGUMENT : MFA provider not supported!")
	}
	phone, err := v.verify(sc)
	if err != nil {
		return nil, "", MFAEnrollment{}, err
	}
	u, provider, err := parsePending(sc, req.MFAPendingCredential)
	if err != nil {
		return nil, "", MFAEnrollment{}, err
	}
	i := slices.IndexFunc(u.MFAInfo, func(m MFAEnrollment) bool {
		return m.UnobfuscatedPhoneInfo != "" && (m.UnobfuscatedPhoneInfo == phone || obfuscatePhone(m.UnobfuscatedPhoneInfo) == phone)
	})
	if i < 0 {
		return nil, "", MFAEnrollment{}, badRequest("MFA_ENROLLMENT_NOT_FOUND")
	}
	return u, provider, u.MFAInfo[i], nil
}

// ---- records ----

func (s *space) loadExtra(kind, id string, v []byte) error {
	switch kind {
	case kindCode:
		var c VerificationCode
		if err := json.Unmarshal(v, &c); err != nil {
			return err
		}
		if len(id) != 8 {
			return fmt.Errorf("bad sequence")
		}
		c.seq = binary.BigEndian.Uint64([]byte(id))
		s.codes = append(s.codes, &c)
		s.codeSeq = max(s.codeSeq, c.seq+1)
	case kindProof:
		var p TemporaryProof
		if err := json.Unmarshal(v, &p); err != nil {
			return err
		}
		s.proofs[id] = p
	case kindPending:
		var r TOTPRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		s.totp[id] = r
	case kindIdp:
		return s.loadIdp(id, v)
	default:
		return fmt.Errorf("unknown record kind %q", kind)
	}
	return nil
}

func (s *space) writeExtraRecords(put func(k []byte, v any) error) error {
	for _, c := range s.codes {
		if err := put(seqKey(s.project, s.tenant, kindCode, c.seq), c); err != nil {
			return err
		}
	}
	for k, p := range s.proofs {
		if err := put(recordKey(s.project, s.tenant, kindProof, k), p); err != nil {
			return err
		}
	}
	for k, r := range s.totp {
		if err := put(recordKey(s.project, s.tenant, kindPending, k), r); err != nil {
			return err
		}
	}
	return s.writeIdps(put)
}
