package authserver

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/pyric/pyric/auth"
)

// op decodes the body into a Req, applies a body targetProjectId and runs fn.
func op[Req any, Resp any](req *request, form bool, fn func(auth.Call, Req) (Resp, error)) {
	var in Req
	raw, err := decodeBody(req.r.Header.Get("Content-Type"), req.body, form, &in, "targetProjectId")
	if err != nil {
		writeError(req.w, err)
		return
	}
	if p := bodyString(raw, "targetProjectId"); p != "" && req.call.Project != "" && !req.pathProject {
		if err := req.targetProject(p); err != nil {
			writeError(req.w, err)
			return
		}
	}
	out, err := fn(req.call, in)
	respond(req, out, err)
}

func notImplemented(req *request, opID string) {
	writeError(req.w, auth.NotImplemented(opID+" is not implemented in the Auth Emulator."))
}

// accountOp runs an accounts:<name> operation (client or admin).
func (h *Handler) accountOp(req *request, name string) {
	e := h.eng
	if req.r.Method != http.MethodPost {
		methodNotAllowed(req)
		return
	}
	switch name {
	case "signUp", "":
		op(req, false, e.SignUp)
	case "signInWithPassword":
		op(req, false, e.SignInWithPassword)
	case "signInWithCustomToken":
		op(req, false, e.SignInWithCustomToken)
	case "signInWithIdp":
		op(req, false, e.SignInWithIdp)
	case "signInWithEmailLink":
		op(req, false, e.SignInWithEmailLink)
	case "lookup":
		op(req, false, e.Lookup)
	case "update":
		op(req, false, e.Update)
	case "delete":
		op(req, false, e.Delete)
	case "sendOobCode":
		op(req, false, e.SendOOBCode)
	case "resetPassword":
		op(req, false, e.ResetPassword)
	case "createAuthUri":
		op(req, false, e.CreateAuthURI)
	case "batchCreate":
		op(req, false, e.BatchCreate)
	case "batchDelete":
		op(req, false, e.BatchDelete)
	case "query":
		op(req, false, e.Query)
	case "sendVerificationCode":
		op(req, false, e.SendVerificationCode)
	case "signInWithPhoneNumber":
		op(req, false, e.SignInWithPhoneNumber)
	case "signInWithGameCenter", "issueSamlResponse", "verifyIosClient":
		notImplemented(req, "identitytoolkit.accounts."+name)
	default:
		writeError(req.w, auth.NotFound())
	}
}

// clientAccountOps are the accounts:<name> operations served without a
// project in the path.
var clientAccountOps = map[string]bool{"createAuthUri": true, "delete": true, "issueSamlResponse": true, "lookup": true,
	"resetPassword": true, "sendOobCode": true, "sendVerificationCode": true, "signInWithCustomToken": true,
	"signInWithEmailLink": true, "signInWithGameCenter": true, "signInWithIdp": true, "signInWithPassword": true,
	"signInWithPhoneNumber": true, "signUp": true, "update": true, "verifyIosClient": true}

// projectAccountOps are the projects/{p}/accounts:<name> operations.
var projectAccountOps = map[string]bool{"": true, "batchCreate": true, "batchDelete": true, "batchGet": true, "delete": true,
	"lookup": true, "query": true, "sendOobCode": true, "update": true}

// v1 routes /identitytoolkit.googleapis.com/v1/<rest>.
func (h *Handler) v1(req *request, rest string) {
	switch {
	case strings.HasPrefix(rest, "accounts:"):
		name := strings.TrimPrefix(rest, "accounts:")
		if !clientAccountOps[name] {
			writeError(req.w, auth.NotFound())
			return
		}
		if h.authenticate(req, true) {
			h.accountOp(req, name)
		}
		return
	case rest == "projects" || rest == "recaptchaParams" || rest == "sessionCookiePublicKeys":
		if req.r.Method != http.MethodGet {
			methodNotAllowed(req)
			return
		}
		if !h.authenticate(req, true) {
			return
		}
		switch rest {
		case "projects":
			api.JSON(req.w, 200, map[string]any{"projectId": auth.ProjectNumber, "authorizedDomains": []string{"localhost"}})
		case "recaptchaParams":
			api.JSON(req.w, 200, map[string]any{"kind": "identitytoolkit#GetRecaptchaParamResponse",
				"recaptchaStoken":  "This-is-a-fake-token__Dont-send-this-to-the-Recaptcha-service__The-Auth-Emulator-does-not-support-Recaptcha",
				"recaptchaSiteKey": "Fake-key__Do-not-send-this-to-Recaptcha_"})
		default:
			notImplemented(req, "identitytoolkit.getSessionCookiePublicKeys")
		}
		return
	case strings.HasPrefix(rest, "projects/"):
	default:
		writeError(req.w, auth.NotFound())
		return
	}
	// projects/{p}[/tenants/{t}](/accounts[:op] | :op)
	rest = strings.TrimPrefix(rest, "projects/")
	project, tail := splitSegment(rest)
	var tenantID string
	if strings.HasPrefix(tail, "/tenants/") {
		tenantID, tail = splitSegment(strings.TrimPrefix(tail, "/tenants/"))
		if tenantID == "" {
			writeError(req.w, auth.NotFound())
			return
		}
	}
	if project == "" {
		writeError(req.w, auth.NotFound())
		return
	}
	var name string
	accounts := false
	switch {
	case tail == "/accounts":
		accounts = true
	case strings.HasPrefix(tail, "/accounts:"):
		accounts, name = true, strings.TrimPrefix(tail, "/accounts:")
		if !projectAccountOps[name] {
			writeError(req.w, auth.NotFound())
			return
		}
	case tail == ":createSessionCookie" || (tail == ":queryAccounts" && tenantID == ""):
		name = strings.TrimPrefix(tail, ":")
	default:
		writeError(req.w, auth.NotFound())
		return
	}
	if !h.authenticate(req, true) {
		return
	}
	if err := req.targetProject(project); err != nil {
		// The emulator validates the body before refusing the project, so
		// a malformed body still gets its own error first.
		if _, derr := DecodeBody(req.r.Header.Get("Content-Type"), req.body, false, &struct{}{}); derr != nil && req.r.Method == http.MethodPost {
			writeError(req.w, derr)
			return
		}
		writeError(req.w, err)
		return
	}
	req.pathProject = true
	req.call.Tenant = tenantID
	if accounts {
		if name == "batchGet" {
			h.batchGet(req)
			return
		}
		h.accountOp(req, name)
		return
	}
	if req.r.Method != http.MethodPost {
		methodNotAllowed(req)
		return
	}
	switch name {
	case "createSessionCookie":
		op(req, false, h.eng.CreateSessionCookie)
	case "queryAccounts":
		op(req, false, h.eng.Query)
	}
}

func (h *Handler) batchGet(req *request) {
	if req.r.Method != http.MethodGet {
		methodNotAllowed(req)
		return
	}
	q := req.r.URL.Query()
	out, err := h.eng.BatchGet(req.call, auth.BatchGetRequest{MaxResults: q.Get("maxResults"), NextPageToken: q.Get("nextPageToken"), TenantID: q.Get("tenantId")})
	respond(req, out, err)
}

// splitSegment splits "a/b/c" into "a" and "/b/c", and "a:op" into "a" and ":op".
func splitSegment(s string) (string, string) {
	i := strings.IndexAny(s, "/:")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// v2 routes /identitytoolkit.googleapis.com/v2/<rest>: second factors
// (accounts/mfaEnrollment, accounts/mfaSignIn), the password policy and
// reCAPTCHA config, project config, tenants and OIDC/SAML provider configs;
// passkeys are not implemented.
func (h *Handler) v2(req *request, rest string) {
	if !strings.HasPrefix(rest, "projects/") {
		e := h.eng
		mfa := map[string]func(){
			"accounts/mfaEnrollment:start":    func() { op(req, false, e.MFAEnrollmentStart) },
			"accounts/mfaEnrollment:finalize": func() { op(req, false, e.MFAEnrollmentFinalize) },
			"accounts/mfaEnrollment:withdraw": func() { op(req, false, e.MFAEnrollmentWithdraw) },
			"accounts/mfaSignIn:start":        func() { op(req, false, e.MFASignInStart) },
			"accounts/mfaSignIn:finalize":     func() { op(req, false, e.MFASignInFinalize) },
		}
		switch {
		case rest == "passwordPolicy" || rest == "recaptchaConfig":
			if req.r.Method != http.MethodGet {
				methodNotAllowed(req)
				return
			}
			if !h.authenticate(req, true) {
				return
			}
			req.call.Tenant = req.r.URL.Query().Get("tenantId")
			if rest == "passwordPolicy" {
				out, err := e.GetPasswordPolicy(req.call)
				respond(req, out, err)
				return
			}
			out, err := e.GetRecaptchaConfig(req.call)
			respond(req, out, err)
		case mfa[rest] != nil:
			if req.r.Method != http.MethodPost {
				methodNotAllowed(req)
				return
			}
			if h.authenticate(req, true) {
				mfa[rest]()
			}
		case strings.HasPrefix(rest, "accounts/") || strings.HasPrefix(rest, "accounts:") ||
			rest == "passwordPolicy" || rest == "recaptchaConfig" || rest == "defaultSupportedIdps":
			if h.authenticate(req, true) {
				notImplemented(req, "identitytoolkit.v2."+strings.ReplaceAll(rest, "/", "."))
			}
		default:
			writeError(req.w, auth.NotFound())
		}
		return
	}
	project, tail := splitSegment(strings.TrimPrefix(rest, "projects/"))
	if project == "" {
		writeError(req.w, auth.NotFound())
		return
	}
	if !h.authenticate(req, true) {
		return
	}
	if err := req.targetProject(project); err != nil {
		writeError(req.w, err)
		return
	}
	req.pathProject = true
	mask := req.r.URL.Query().Get("updateMask")
	e := h.eng
	switch {
	case tail == "/config":
		switch req.r.Method {
		case http.MethodGet:
			out, err := e.Config(req.call)
			respond(req, out, err)
		case http.MethodPatch:
			op(req, false, func(c auth.Call, in auth.ConfigPatch) (*auth.ProjectConfig, error) {
				return e.UpdateConfig(c, in, mask)
			})
		default:
			methodNotAllowed(req)
		}
	case tail == "/tenants":
		switch req.r.Method {
		case http.MethodPost:
			op(req, false, e.CreateTenant)
		case http.MethodGet:
			q := req.r.URL.Query()
			out, err := e.ListTenants(req.call, q.Get("pageSize"), q.Get("pageToken"))
			respond(req, out, err)
		default:
			methodNotAllowed(req)
		}
	case strings.HasPrefix(tail, "/tenants/"):
		tid, sub := splitSegment(strings.TrimPrefix(tail, "/tenants/"))
		if tid == "" {
			writeError(req.w, auth.NotFound())
			return
		}
		req.call.Tenant = tid
		if h.idpConfigs(req, sub) {
			return
		}
		if sub != "" {
			notImplemented(req, "identitytoolkit.projects.tenants"+strings.ReplaceAll(strings.ReplaceAll(sub, "/", "."), ":", "."))
			return
		}
		switch req.r.Method {
		case http.MethodGet:
			out, err := e.GetTenant(req.call)
			respond(req, out, err)
		case http.MethodPatch:
			op(req, false, func(c auth.Call, in auth.TenantRequest) (*auth.Tenant, error) { return e.UpdateTenant(c, in, mask) })
		case http.MethodDelete:
			respond(req, map[string]any{}, e.DeleteTenant(req.call))
		default:
			methodNotAllowed(req)
		}
	default:
		if h.idpConfigs(req, tail) {
			return
		}
		notImplemented(req, "identitytoolkit.projects"+strings.ReplaceAll(strings.ReplaceAll(tail, "/", "."), ":", "."))
	}
}

// idpConfigs serves /oauthIdpConfigs and /inboundSamlConfigs (create with
// ?oauthIdpConfigId= / ?inboundSamlConfigId=, list, get, patch, delete);
// it reports whether tail was one of them.
func (h *Handler) idpConfigs(req *request, tail string) bool {
	var kind auth.IdpKind
	var rest string
	switch {
	case strings.HasPrefix(tail, "/oauthIdpConfigs"):
		kind, rest = auth.OAuthIdp, strings.TrimPrefix(tail, "/oauthIdpConfigs")
	case strings.HasPrefix(tail, "/inboundSamlConfigs"):
		kind, rest = auth.SAMLIdp, strings.TrimPrefix(tail, "/inboundSamlConfigs")
	default:
		return false
	}
	e, q := h.eng, req.r.URL.Query()
	var body map[string]any
	decode := func() bool {
		raw, err := DecodeBody(req.r.Header.Get("Content-Type"), req.body, false, &struct{}{})
		if err != nil {
			writeError(req.w, err)
			return false
		}
		if raw == nil {
			raw = map[string]any{} // an empty body is an empty config
		}
		body = raw
		return true
	}
	switch {
	case rest == "":
		switch req.r.Method {
		case http.MethodPost:
			if !decode() {
				return true
			}
			id := q.Get(string(kind)[:len(kind)-1] + "Id")
			out, err := e.CreateIdpConfig(req.call, kind, id, body)
			respond(req, out, err)
		case http.MethodGet:
			out, err := e.ListIdpConfigs(req.call, kind, q.Get("pageSize"), q.Get("pageToken"))
			respond(req, out, err)
		default:
			methodNotAllowed(req)
		}
	case strings.HasPrefix(rest, "/") && !strings.Contains(rest[1:], "/"):
		id := rest[1:]
		switch req.r.Method {
		case http.MethodGet:
			out, err := e.GetIdpConfig(req.call, kind, id)
			respond(req, out, err)
		case http.MethodPatch:
			if !decode() {
				return true
			}
			out, err := e.UpdateIdpConfig(req.call, kind, id, body, q.Get("updateMask"))
			respond(req, out, err)
		case http.MethodDelete:
			respond(req, map[string]any{}, e.DeleteIdpConfig(req.call, kind, id))
		default:
			methodNotAllowed(req)
		}
	default:
		writeError(req.w, auth.NotFound())
	}
	return true
}

// token is securetoken /v1/token: API key only (a bearer is not consulted).
func (h *Handler) token(req *request) {
	if req.r.Method != http.MethodPost {
		methodNotAllowed(req)
		return
	}
	if !h.authenticate(req, false) {
		return
	}
	op(req, true, h.eng.GrantToken)
}

// legacyPaths maps v3 relyingparty operations to their v1 names.
var legacyPaths = map[string]string{"createAuthUri": "createAuthUri", "deleteAccount": "delete", "emailLinkSignin": "signInWithEmailLink",
	"getAccountInfo": "lookup", "getOobConfirmationCode": "sendOobCode", "resetPassword": "resetPassword",
	"setAccountInfo": "update", "signupNewUser": "signUp", "verifyAssertion": "signInWithIdp",
	"verifyCustomToken": "signInWithCustomToken", "verifyPassword": "signInWithPassword"}

func (h *Handler) legacy(req *request, name string) {
	switch {
	case name == "signOutUser":
		writeError(req.w, auth.NotImplemented("signOutUser is not implemented in the Auth Emulator."))
	case legacyPaths[name] != "":
		if h.authenticate(req, true) {
			h.accountOp(req, legacyPaths[name])
		}
	default:
		writeError(req.w, auth.NotFound())
	}
}

// emulator routes /emulator/v1/projects/{p}[/tenants/{t}]/<what>; they
// need no credentials.
func (h *Handler) emulator(req *request, rest string) {
	project, tail := splitSegment(rest)
	var tenantID string
	if strings.HasPrefix(tail, "/tenants/") {
		tenantID, tail = splitSegment(strings.TrimPrefix(tail, "/tenants/"))
	}
	if project == "" || (strings.HasPrefix(rest, project+"/tenants/") && tenantID == "") {
		writeError(req.w, auth.NotFound())
		return
	}
	req.call.Project, req.call.Tenant = project, tenantID
	req.call.Caller = adminCaller
	e := h.eng
	switch {
	case tail == "/accounts" && req.r.Method == http.MethodDelete:
		respond(req, map[string]any{}, e.ClearAccounts(req.call))
	case tail == "/oobCodes" && req.r.Method == http.MethodGet:
		out, err := e.ListOOBCodes(req.call)
		respond(req, out, err)
	case tail == "/verificationCodes" && req.r.Method == http.MethodGet:
		out, err := e.ListVerificationCodes(req.call)
		respond(req, out, err)
	case tail == "/config" && tenantID == "" && req.r.Method == http.MethodGet:
		out, err := e.EmulatorConfig(req.call)
		respond(req, out, err)
	case tail == "/config" && tenantID == "" && req.r.Method == http.MethodPatch:
		op(req, false, e.UpdateEmulatorConfig)
	case tail == "/accounts" || tail == "/oobCodes" || tail == "/verificationCodes" || tail == "/config":
		methodNotAllowed(req)
	default:
		writeError(req.w, auth.NotFound())
	}
}

// action serves the links in OOB messages (/emulator/action?mode=…), the
// page a user would open from the email.
func (h *Handler) action(req *request) {
	q := req.r.URL.Query()
	mode, code, apiKey, cont := q.Get("mode"), q.Get("oobCode"), q.Get("apiKey"), q.Get("continueUrl")
	fail := func(msg, instructions string) {
		api.JSON(req.w, 400, map[string]any{"authEmulator": map[string]any{"error": msg, "instructions": instructions}})
	}
	if apiKey == "" {
		fail("missing apiKey query parameter", "Please modify the URL to specify an apiKey, such as ...&apiKey=YOUR_API_KEY")
		return
	}
	if code == "" {
		fail("missing oobCode query parameter", "Please modify the URL to specify an oobCode, such as ...&oobCode=YOUR_OOB_CODE")
		return
	}
	req.call.Project = h.projectOfKey(apiKey)
	req.call.Tenant = q.Get("tenantId")
	done := func(status map[string]any) {
		if cont != "" {
			http.Redirect(req.w, req.r, cont, http.StatusSeeOther)
			return
		}
		api.JSON(req.w, 200, map[string]any{"authEmulator": status})
	}
	e := h.eng
	switch mode {
	case "resetPassword":
		info, err := e.ResetPassword(req.call, auth.ResetPasswordRequest{OOBCode: code})
		if err != nil || info.RequestType != "PASSWORD_RESET" {
			fail("Your request to reset your password has expired or the link has already been used.", "Try resetting your password again.")
			return
		}
		np := q.Get("newPassword")
		if np == "" || np == "NEW_PASSWORD_HERE" {
			fail("missing newPassword query parameter", "To reset the password for "+info.Email+", send an HTTP GET request to the following URL.")
			return
		}
		if _, err := e.ResetPassword(req.call, auth.ResetPasswordRequest{OOBCode: code, NewPassword: np}); err != nil {
			writeError(req.w, err)
			return
		}
		done(map[string]any{"success": "The password has been successfully updated.", "email": info.Email})
	case "verifyEmail", "verifyAndChangeEmail", "recoverEmail":
		out, err := e.Update(req.call, auth.UpdateRequest{OOBCode: code})
		if err != nil {
			fail("Your request to verify your email has expired or the link has already been used.", "Try verifying your email again.")
			return
		}
		switch mode {
		case "verifyEmail":
			done(map[string]any{"success": "The email has been successfully verified.", "email": out.Email})
		case "verifyAndChangeEmail":
			done(map[string]any{"success": "The email has been successfully changed.", "newEmail": out.NewEmail})
		default:
			done(map[string]any{"success": "The email has been successfully reset.", "email": out.Email})
		}
	case "signIn":
		if cont == "" {
			fail("Missing continueUrl query parameter", "To sign in, append &continueUrl=YOUR_APP_URL to the link.")
			return
		}
		to, err := url.Parse(cont)
		if err != nil {
			fail("Invalid continueUrl", "")
			return
		}
		tq := to.Query()
		for k, v := range q {
			if k != "continueUrl" {
				tq.Set(k, v[0])
			}
		}
		to.RawQuery = tq.Encode()
		http.Redirect(req.w, req.r, to.String(), http.StatusSeeOther)
	default:
		api.JSON(req.w, 400, map[string]any{"authEmulator": map[string]any{"error": "Invalid mode"}})
	}
}
