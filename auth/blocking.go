package auth

// Blocking functions (beforeCreate, beforeSignIn), called as the Auth
// emulator calls them: the project config's blockingFunctions.triggers
// name each event's functionUri; the engine POSTs {"data":{"jwt": …}}
// with an unsigned JWT describing the event and applies the userRecord
// changes the function answers. The call is made with the engine's lock
// released (what the operation did so far committed first), so a slow
// function stalls only its own sign-in.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Blocking function events: the keys of blockingFunctions.triggers.
// The emulator accepts only beforeCreate and beforeSignIn; production
// (and firebase-functions 7.4.0's beforeEmailSent/beforeSmsSent) also has
// the two before a code is sent, called here too.
const (
	BeforeCreate    = "beforeCreate"
	BeforeSignIn    = "beforeSignIn"
	BeforeSendEmail = "beforeSendEmail"
	BeforeSendSms   = "beforeSendSms"
)

// DefaultBlockingTimeout bounds one blocking function call, as the
// emulator's fetchBlockingFunction does (60 s).
const DefaultBlockingTimeout = 60 * time.Second

// maxBlockingResponse bounds the body read from a blocking function.
const maxBlockingResponse = 4 << 20

// checkBlockingConfig validates blockingFunctions of a config update with
// the emulator's messages.
func checkBlockingConfig(bf map[string]any) error {
	triggers, _ := bf["triggers"].(map[string]any)
	for ev, v := range triggers {
		if ev != BeforeCreate && ev != BeforeSignIn && ev != BeforeSendEmail && ev != BeforeSendSms {
			return badRequest("INVALID_BLOCKING_FUNCTION : ((Event type is invalid.))")
		}
		t, _ := v.(map[string]any)
		uri, _ := t["functionUri"].(string)
		if u, err := url.Parse(uri); err != nil || u.Scheme == "" || u.Host == "" {
			return badRequest("INVALID_BLOCKING_FUNCTION : ((Expected an absolute URI with valid scheme and host.))")
		}
	}
	return nil
}

// blockingURI is the function configured for event, "" for none. Tenants
// use their project's, as in the emulator.
func blockingURI(p *project, event string) string {
	triggers, _ := p.config.BlockingFunctions["triggers"].(map[string]any)
	t, _ := triggers[event].(map[string]any)
	uri, _ := t["functionUri"].(string)
	return uri
}

func forwardCredential(p *project, kind string) bool {
	f, _ := p.config.BlockingFunctions["forwardInboundCredentials"].(map[string]any)
	b, _ := f[kind].(bool)
	return b
}

// blocker calls the project's blocking functions for the flows (as
// core.block): it builds the event token, makes the call with the
// engine's lock released and applies the answer.
type blocker struct{ *core }

// blockingOpts describe the sign-in a blocking function is told about.
type blockingOpts struct {
	signInMethod       string
	signInSecondFactor string
	signInAttributes   any
	rawUserInfo        string
	oauth              map[string]any // oauth_access_token, oauth_id_token, … as received
	// uniqueEmail: the account's email must still be free after the call
	// (not for IdP sign-ins of projects allowing duplicate emails).
	uniqueEmail bool
}

// blockingResult is what a blocking function changes.
type blockingResult struct {
	updates     map[string]any // User JSON field → value (nil clears)
	extraClaims map[string]any // sessionClaims (beforeSignIn)
}

// eventClaims are the claims every blocking event token has.
func (e blocker) eventClaims(sc scope, event, uri string) map[string]any {
	iat := e.now().Unix()
	claims := map[string]any{
		"iss": "https://securetoken.google.com/" + sc.project.id, "aud": uri, "iat": iat,
		"exp":      iat + int64(e.timeout()/time.Millisecond)/100,
		"event_id": e.randomString(16, base64url), "event_type": event,
		"user_agent": "NotYetSupportedInFirebaseAuthEmulator", "ip_address": "127.0.0.1", "locale": "en",
	}
	if tid := sc.tenantID(); tid != "" {
		claims["tenant_id"] = tid
	}
	return claims
}

// jwt builds the event token the emulator sends
// (generateBlockingFunctionJwt).
func (e blocker) jwt(sc scope, event, uri string, u *User, o blockingOpts) string {
	rec := blockingUserRecord(u)
	claims := e.eventClaims(sc, event, uri)
	claims["user_record"], claims["sub"], claims["sign_in_method"] = rec, u.LocalID, o.signInMethod
	if o.signInSecondFactor != "" {
		claims["sign_in_second_factor"] = o.signInSecondFactor
	}
	if o.signInAttributes != nil {
		claims["sign_in_attributes"] = o.signInAttributes
	}
	if o.rawUserInfo != "" {
		claims["raw_user_info"] = o.rawUserInfo
	}
	if tid := sc.tenantID(); tid != "" {
		rec["tenant_id"] = tid
	}
	forwardCredentials(sc.project, o.oauth, claims)
	return EncodeUnsignedJWT(claims)
}

// blockingUserRecord is the account as the event token's user_record
// describes it (firebase-functions' AuthUserRecord, snake_case).
func blockingUserRecord(u *User) map[string]any {
	rec := map[string]any{"uid": u.LocalID, "custom_claims": u.claims()}
	for k, v := range map[string]string{"email": u.Email, "display_name": u.DisplayName, "photo_url": u.PhotoURL, "phone_number": u.PhoneNumber} {
		if v != "" {
			rec[k] = v
		}
	}
	if u.EmailVerified != nil {
		rec["email_verified"] = *u.EmailVerified
	}
	if u.Disabled != nil {
		rec["disabled"] = *u.Disabled
	}
	providers := []any{}
	for _, p := range u.ProviderUserInfo {
		pd := map[string]any{"provider_id": p.ProviderID}
		for k, v := range map[string]string{"display_name": p.DisplayName, "photo_url": p.PhotoURL, "email": p.Email, "uid": p.RawID, "phone_number": p.PhoneNumber} {
			if v != "" {
				pd[k] = v
			}
		}
		providers = append(providers, pd)
	}
	rec["provider_data"] = providers
	if len(u.MFAInfo) > 0 {
		rec["multi_factor"] = map[string]any{"enrolled_factors": blockingFactors(u.MFAInfo)}
	}
	if u.LastLoginAt != "" || u.CreatedAt != "" {
		md := map[string]any{}
		if n, err := strconv.ParseInt(u.LastLoginAt, 10, 64); err == nil {
			md["last_sign_in_time"] = n
		}
		if n, err := strconv.ParseInt(u.CreatedAt, 10, 64); err == nil {
			md["creation_time"] = n
		}
		rec["metadata"] = md
	}
	return rec
}

// blockingFactors are the enrolled second factors of a user_record.
func blockingFactors(mfa []MFAEnrollment) []any {
	factors := []any{}
	for _, m := range mfa {
		if m.MFAEnrollmentID == "" {
			continue
		}
		f := map[string]any{"uid": m.MFAEnrollmentID, "factor_id": ProviderPhone}
		if m.DisplayName != "" {
			f["display_name"] = m.DisplayName
		}
		if m.EnrolledAt != "" {
			f["enrollment_time"] = m.EnrolledAt
		}
		if m.PhoneInfo != "" {
			f["phone_number"] = m.PhoneInfo
		}
		factors = append(factors, f)
	}
	return factors
}

// forwardCredentials copies the IdP credentials the project's
// blockingFunctions.forwardInboundCredentials asks for into the claims.
func forwardCredentials(p *project, oauth, claims map[string]any) {
	if forwardCredential(p, "accessToken") {
		for _, k := range []string{"oauth_access_token", "oauth_token_secret", "oauth_expires_in"} {
			if v, ok := oauth[k]; ok {
				claims[k] = v
			}
		}
	}
	if v, ok := oauth["oauth_id_token"]; ok && forwardCredential(p, "idToken") {
		claims["oauth_id_token"] = v
	}
	if v, ok := oauth["oauth_refresh_token"]; ok && forwardCredential(p, "refreshToken") {
		claims["oauth_refresh_token"] = v
	}
}

func (e blocker) timeout() time.Duration {
	if e.blockTimeout > 0 {
		return e.blockTimeout
	}
	return DefaultBlockingTimeout
}

// run calls the blocking function configured for event, if any,
// about user u. The caller holds the engine's lock (inside begin): what
// it changed so far is committed, the lock is released for the call and
// taken again; ok says a function was called, after which the caller must
// look up again what it read before (other operations ran meanwhile).
func (e blocker) run(sc scope, event string, u *User, o blockingOpts) (res blockingResult, ok bool, err error) {
	uri := blockingURI(sc.project, event)
	if uri == "" {
		waited, err := e.settle(sc)
		if err != nil || !waited {
			return blockingResult{}, false, err
		}
		// Others ran while the lock was released: the caller looks up
		// again, as after a call.
		if uri = blockingURI(sc.project, event); uri == "" {
			return blockingResult{}, true, nil
		}
	}
	res, err = e.call(sc, event, uri, e.jwt(sc, event, uri, u, o))
	return res, true, err
}

// AwaitBlockingFunctions makes operations that find no blocking function
// configured wait, with the lock released, until ready is closed (at
// most the blocking timeout): the functions that may register some are
// still loading. pyric serve's ports answer while the functions load, and
// a sign-up then must still meet the beforeUserCreated the app defines.
func (e *Engine) AwaitBlockingFunctions(ready <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.blockingReady = ready
}

// settle waits, with the lock released, for the blocking functions to be
// registered (AwaitBlockingFunctions); waited says the lock was released.
func (e blocker) settle(sc scope) (waited bool, err error) {
	ready := e.blockingReady
	if ready == nil {
		return false, nil
	}
	select {
	case <-ready:
		return false, nil
	default:
	}
	if err := e.commit(); err != nil {
		return false, err
	}
	e.mu.Unlock()
	t := time.NewTimer(e.timeout())
	select {
	case <-ready:
	case <-t.C:
	}
	t.Stop()
	e.mu.Lock()
	e.j.open = true
	if !e.current(sc) {
		return true, badRequest("USER_NOT_FOUND")
	}
	return true, nil
}

// call posts an event token with the lock released (run).
func (e blocker) call(sc scope, event, uri, jwt string) (res blockingResult, err error) {
	if err := e.commit(); err != nil {
		return blockingResult{}, err
	}
	e.mu.Unlock()
	res, err = e.post(uri, event, jwt)
	e.mu.Lock()
	e.j.open = true
	if err == nil && !e.current(sc) {
		err = badRequest("USER_NOT_FOUND")
	}
	return res, err
}

// send runs beforeSendEmail or beforeSendSms, when configured,
// before a code is sent: its error stops the sending. what are the
// event's own claims (email_type and email, or sms_type and
// phone_number); the answer (a reCAPTCHA override) has no effect here.
func (e blocker) send(sc scope, event string, what map[string]any) error {
	uri := blockingURI(sc.project, event)
	if uri == "" {
		if waited, err := e.settle(sc); err != nil || !waited {
			return err
		}
		if uri = blockingURI(sc.project, event); uri == "" {
			return nil
		}
	}
	claims := e.eventClaims(sc, event, uri)
	for k, v := range what {
		claims[k] = v
	}
	_, err := e.call(sc, event, uri, EncodeUnsignedJWT(claims))
	return err
}

// current reports whether a scope still names live state after the lock
// was released (a restore or a tenant deletion replaces it).
func (e blocker) current(sc scope) bool {
	p := e.projects[sc.project.id]
	if p != sc.project {
		return false
	}
	return sc.tenant == nil || p.tenants[sc.tenantID()] == sc.tenant
}

// post makes the HTTP call and reads the answer with the
// emulator's errors (fetchBlockingFunction).
func (e blocker) post(uri, event, jwt string) (blockingResult, error) {
	body, _ := json.Marshal(map[string]any{"data": map[string]any{"jwt": jwt}})
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, bytes.NewReader(body))
	if err != nil {
		return blockingResult{}, internalBlocking("((Failed to make request to "+uri+".))", err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := e.blockClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	var text []byte
	if err == nil {
		text, err = io.ReadAll(io.LimitReader(resp.Body, maxBlockingResponse+1))
		resp.Body.Close()
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return blockingResult{}, internalBlocking("((Deadline exceeded making request to "+uri+".))", err)
		}
		return blockingResult{}, internalBlocking("((Failed to make request to "+uri+".))", err)
	}
	if len(text) > maxBlockingResponse {
		return blockingResult{}, internalBlocking("((Response body is larger than 4 MiB.))", errors.New("response too large"))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return blockingResult{}, badRequest(fmt.Sprintf("BLOCKING_FUNCTION_ERROR_RESPONSE : ((HTTP request to %s returned HTTP error %d: %s))", uri, resp.StatusCode, text))
	}
	var out struct {
		UserRecord map[string]any `json:"userRecord"`
	}
	if err := json.Unmarshal(text, &out); err != nil {
		return blockingResult{}, internalBlocking("((Response body is not valid JSON.))", err)
	}
	return blockingResponse(event, out.UserRecord)
}

func internalBlocking(msg string, cause error) *Error {
	return &Error{HTTP: 500, Status: "INTERNAL", Message: "BLOCKING_FUNCTION_ERROR_RESPONSE : " + msg, Reason: cause.Error(), cause: cause}
}

// blockingResponse reads a userRecord answer (processBlockingFunctionResponse).
func blockingResponse(event string, rec map[string]any) (blockingResult, error) {
	res := blockingResult{updates: map[string]any{}}
	if rec == nil {
		return res, nil
	}
	mask, _ := rec["updateMask"].(string)
	if mask == "" {
		return res, badRequest("BLOCKING_FUNCTION_ERROR_RESPONSE : ((Response UserRecord is missing updateMask.))")
	}
	for _, f := range strings.Split(mask, ",") {
		switch f {
		case "displayName":
			res.updates["displayName"] = coerceString(rec[f])
		case "photoUrl", "photoURL":
			// firebase-functions names it photoURL; the emulator matches
			// only photoUrl and drops it, production applies it.
			res.updates["photoUrl"] = coerceString(rec[f])
		case "disabled", "emailVerified":
			res.updates[f] = truthy(rec[f])
		case "customClaims":
			b, _ := json.Marshal(rec[f])
			if err := validateSerializedClaims(string(b)); err != nil {
				return res, err
			}
			res.updates["customAttributes"] = string(b)
		case "sessionClaims":
			if event != BeforeSignIn {
				continue
			}
			m, ok := rec[f].(map[string]any)
			if !ok && rec[f] != nil {
				return res, badRequest("BLOCKING_FUNCTION_ERROR_RESPONSE : ((Response has malformed session claims.))")
			}
			res.extraClaims = m
		}
	}
	return res, nil
}

// coerceString is the emulator's coercePrimitiveToString: a string,
// number or boolean as text, anything else clears the field ("").
func coerceString(v any) string {
	s, _ := primitiveString(v)
	return s
}

// applyBlocking returns u with a blocking function's updates.
func applyBlocking(u *User, upd map[string]any) *User {
	nu := u.clone()
	for k, v := range upd {
		s, _ := v.(string)
		switch k {
		case "displayName":
			nu.DisplayName = s
		case "photoUrl":
			nu.PhotoURL = s
		case "customAttributes":
			nu.CustomAttributes = s
		case "disabled":
			nu.Disabled = ptr(v.(bool))
		case "emailVerified":
			nu.EmailVerified = ptr(v.(bool))
		}
	}
	return nu
}

// beforeCreate runs beforeCreate, when configured, for the account u about
// to be created: u with the function's changes, or the function's error.
// After a call the account's id, email and phone are checked free again
// (others ran meanwhile).
// The function sees the account with links, the identities it is about
// to get.
func (e blocker) beforeCreate(sc scope, u *User, o blockingOpts, links ...ProviderUserInfo) (*User, error) {
	seen := u
	if len(links) > 0 {
		seen = u.clone()
		seen.ProviderUserInfo = append(seen.ProviderUserInfo, links...)
	}
	res, called, err := e.run(sc, BeforeCreate, seen, o)
	if err != nil || !called {
		return u, err
	}
	switch {
	case sc.space.get(u.LocalID) != nil:
		return nil, badRequest("DUPLICATE_LOCAL_ID")
	case o.uniqueEmail && u.Email != "" && sc.space.byEmailAddr(u.Email) != nil:
		return nil, ErrEmailExists
	case u.PhoneNumber != "" && sc.space.byPhone(u.PhoneNumber) != nil:
		return nil, badRequest("PHONE_NUMBER_EXISTS")
	}
	for _, l := range links {
		if sc.space.byProviderRawID(l.ProviderID, l.RawID) != nil {
			return nil, ErrFederatedUserIDLinked
		}
	}
	return applyBlocking(u, res.updates), nil
}

// beforeSignIn runs beforeSignIn, when configured, for the stored account
// u: the account as the function left it (its changes stored), the
// session claims it set, or its error. The caller checks disabled.
func (e blocker) beforeSignIn(c Call, sc scope, u *User, o blockingOpts) (*User, map[string]any, error) {
	res, called, err := e.run(sc, BeforeSignIn, u, o)
	if err != nil || !called {
		return u, nil, err
	}
	cur := sc.space.get(u.LocalID)
	if cur == nil {
		return nil, nil, ErrUserNotFound
	}
	if len(res.updates) > 0 {
		nu := sc.space.put(applyBlocking(cur, res.updates), nil, nil)
		e.emit(c, sc, OpUserUpdate, nu.LocalID, cur, nu, nil)
		cur = nu
	}
	return cur, res.extraClaims, nil
}
