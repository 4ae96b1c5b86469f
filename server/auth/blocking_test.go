package authserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
)

// fakeFunction stands in for a deployed blocking function: it records the
// decoded event JWT of every call and answers what answer says.
type fakeFunction struct {
	*httptest.Server
	mu     sync.Mutex
	calls  []map[string]any
	answer func(claims map[string]any) (int, string)
}

func newFakeFunction(t *testing.T, answer func(map[string]any) (int, string)) *fakeFunction {
	f := &fakeFunction{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Data struct {
				JWT string `json:"jwt"`
			} `json:"data"`
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad request", 400)
			return
		}
		parts := strings.Split(body.Data.JWT, ".")
		if len(parts) != 3 || parts[2] != "" {
			http.Error(w, "not an unsigned JWT", 400)
			return
		}
		header, _ := base64.RawURLEncoding.DecodeString(parts[0])
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var claims map[string]any
		if json.Unmarshal(payload, &claims) != nil || !strings.Contains(string(header), `"alg":"none"`) {
			http.Error(w, "bad JWT", 400)
			return
		}
		f.mu.Lock()
		f.calls = append(f.calls, claims)
		f.mu.Unlock()
		status, text := f.answer(claims)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, text)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeFunction) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, fmt.Sprint(c["event_type"]))
	}
	return out
}

func newBlockingServer(t *testing.T, timeout time.Duration) *httptest.Server {
	ts := httptest.NewServer(New(auth.New(auth.Options{BlockingTimeout: timeout}), Options{DefaultProject: "p"}))
	t.Cleanup(ts.Close)
	return ts
}

func configureBlocking(t *testing.T, ts *httptest.Server, events map[string]string) {
	t.Helper()
	triggers := map[string]any{}
	for ev, uri := range events {
		triggers[ev] = map[string]any{"functionUri": uri}
	}
	b, _ := json.Marshal(map[string]any{"blockingFunctions": map[string]any{"triggers": triggers}})
	st, m := do(t, ts, "PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/config?updateMask=blockingFunctions", "Bearer owner", "application/json", string(b))
	if st != 200 {
		t.Fatalf("config: %d %v", st, m)
	}
}

func tokenClaims(t *testing.T, idToken string) map[string]any {
	t.Helper()
	parts := strings.Split(idToken, ".")
	if len(parts) < 2 {
		t.Fatalf("not a JWT: %q", idToken)
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const signUpPath = "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k"
const signInPath = "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k"

// TestBlockingFunctionsApplied: beforeCreate and beforeSignIn are called
// with the emulator's event JWT and their changes (profile, custom and
// session claims) reach the account and the ID token.
func TestBlockingFunctionsApplied(t *testing.T) {
	t.Parallel()
	ts := newBlockingServer(t, 0)
	fn := newFakeFunction(t, func(c map[string]any) (int, string) {
		if c["event_type"] == auth.BeforeCreate {
			return 200, `{"userRecord":{"displayName":"From Fn","customClaims":{"role":"admin"},"updateMask":"displayName,customClaims"}}`
		}
		return 200, `{"userRecord":{"sessionClaims":{"sess":1},"photoURL":"http://p/x.png","updateMask":"sessionClaims,photoURL"}}`
	})
	configureBlocking(t, ts, map[string]string{auth.BeforeCreate: fn.URL + "/create", auth.BeforeSignIn: fn.URL + "/signin"})

	st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"Ann@Example.com","password":"secret1","returnSecureToken":true}`)
	if st != 200 {
		t.Fatalf("signUp: %d %v", st, m)
	}
	if m["displayName"] != "From Fn" {
		t.Errorf("signUp displayName = %v, want the function's", m["displayName"])
	}
	if got := fn.events(); fmt.Sprint(got) != "[beforeCreate beforeSignIn]" {
		t.Fatalf("calls %v", got)
	}
	claims := tokenClaims(t, m["idToken"].(string))
	for k, want := range map[string]any{"role": "admin", "sess": float64(1), "name": "From Fn", "picture": "http://p/x.png"} {
		if claims[k] != want {
			t.Errorf("ID token %s = %v, want %v", k, claims[k], want)
		}
	}
	// The event JWT: the emulator's claims.
	c := fn.calls[0]
	uid := m["localId"].(string)
	rec, _ := c["user_record"].(map[string]any)
	for k, want := range map[string]any{"iss": "https://securetoken.google.com/p", "aud": fn.URL + "/create", "event_type": "beforeCreate",
		"sign_in_method": "password", "sub": uid, "ip_address": "127.0.0.1", "locale": "en", "user_agent": "NotYetSupportedInFirebaseAuthEmulator"} {
		if c[k] != want {
			t.Errorf("event claim %s = %v, want %v", k, c[k], want)
		}
	}
	if rec["uid"] != uid || rec["email"] != "ann@example.com" {
		t.Errorf("user_record %v", rec)
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 600 {
		t.Errorf("exp-iat = %v, want 600", exp-iat)
	}
	if id, _ := c["event_id"].(string); len(id) != 16 {
		t.Errorf("event_id %q", id)
	}
	// The sign-in event sees the account as beforeCreate left it.
	rec2, _ := fn.calls[1]["user_record"].(map[string]any)
	if rec2["display_name"] != "From Fn" || fmt.Sprint(rec2["custom_claims"]) != "map[role:admin]" {
		t.Errorf("beforeSignIn user_record %v", rec2)
	}

	// A later sign-in calls beforeSignIn only; its session claims are in
	// that sign-in's token.
	st, m = do(t, ts, "POST", signInPath, "", "application/json", `{"email":"ann@example.com","password":"secret1","returnSecureToken":true}`)
	if st != 200 {
		t.Fatalf("signIn: %d %v", st, m)
	}
	if got := fn.events(); fmt.Sprint(got) != "[beforeCreate beforeSignIn beforeSignIn]" {
		t.Fatalf("calls %v", got)
	}
	if claims := tokenClaims(t, m["idToken"].(string)); claims["sess"] != float64(1) || claims["role"] != "admin" {
		t.Errorf("sign-in token claims %v", claims)
	}
}

// TestBlockingFunctionErrors: an HttpsError the function throws, a
// disabled account, a function past its deadline and an unreachable one
// answer as the emulator answers; a slow function stalls no one else.
func TestBlockingFunctionErrors(t *testing.T) {
	t.Parallel()
	ts := newBlockingServer(t, 300*time.Millisecond)
	// What firebase-functions' wrapHandler answers for
	// `throw new HttpsError("invalid-argument", "Unauthorized email")`.
	httpsError := `{"error":{"message":"Unauthorized email","status":"INVALID_ARGUMENT"}}`
	slowCalled := make(chan struct{}, 1) // a call to the slow function began
	fn := newFakeFunction(t, func(c map[string]any) (int, string) {
		rec, _ := c["user_record"].(map[string]any)
		switch rec["email"] {
		case "bad@x.com":
			return 400, httpsError
		case "off@x.com":
			return 200, `{"userRecord":{"disabled":true,"updateMask":"disabled"}}`
		case "slow@x.com":
			select {
			case slowCalled <- struct{}{}:
			default:
			}
			// The function outlasting the 300ms deadline is what is tested.
			time.Sleep(time.Second)
		case "nomask@x.com":
			return 200, `{"userRecord":{"displayName":"x"}}`
		case "notjson@x.com":
			return 200, `<html>`
		}
		return 200, `{}`
	})
	uri := fn.URL + "/beforeCreate"
	configureBlocking(t, ts, map[string]string{auth.BeforeCreate: uri})

	cases := []struct {
		email  string
		status int
		msg    string
	}{
		{"bad@x.com", 400, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((HTTP request to " + uri + " returned HTTP error 400: " + httpsError + "))"},
		{"off@x.com", 400, "USER_DISABLED"},
		{"slow@x.com", 500, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Deadline exceeded making request to " + uri + ".))"},
		{"nomask@x.com", 400, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Response UserRecord is missing updateMask.))"},
		{"notjson@x.com", 500, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Response body is not valid JSON.))"},
	}
	for _, c := range cases {
		st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"`+c.email+`","password":"secret1"}`)
		if st != c.status || errMsg(m) != c.msg {
			t.Errorf("%s: %d %q, want %d %q", c.email, st, errMsg(m), c.status, c.msg)
		}
	}
	// A rejected beforeCreate created nothing; a disabled one did.
	for email, want := range map[string]string{"bad@x.com": "EMAIL_NOT_FOUND", "off@x.com": "USER_DISABLED"} {
		_, m := do(t, ts, "POST", signInPath, "", "application/json", `{"email":"`+email+`","password":"secret1"}`)
		if errMsg(m) != want {
			t.Errorf("sign in %s: %q, want %q", email, errMsg(m), want)
		}
	}
	// While a call waits on the slow function, other requests proceed.
	select { // the call the cases made
	case <-slowCalled:
	default:
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"slow@x.com","password":"secret1"}`)
	}()
	select {
	case <-slowCalled:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow blocking function was never called")
	}
	start := time.Now()
	if st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{}`); st != 200 {
		t.Errorf("anonymous sign-up during a slow blocking call: %d %v", st, m)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("an unrelated request waited %v for the blocking call", d)
	}
	<-done
	// An unreachable function.
	fn.Close()
	st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"gone@x.com","password":"secret1"}`)
	if want := "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Failed to make request to " + uri + ".))"; st != 500 || errMsg(m) != want {
		t.Errorf("unreachable: %d %q, want 500 %q", st, errMsg(m), want)
	}
}

// TestBlockingConfigChecked: the config update refuses what the emulator
// refuses, with its messages.
func TestBlockingConfigChecked(t *testing.T) {
	t.Parallel()
	ts := newBlockingServer(t, 0)
	for body, want := range map[string]string{
		`{"blockingFunctions":{"triggers":{"beforeDelete":{"functionUri":"http://x/y"}}}}`: "INVALID_BLOCKING_FUNCTION : ((Event type is invalid.))",
		`{"blockingFunctions":{"triggers":{"beforeCreate":{"functionUri":"/relative"}}}}`:  "INVALID_BLOCKING_FUNCTION : ((Expected an absolute URI with valid scheme and host.))",
	} {
		st, m := do(t, ts, "PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/config?updateMask=blockingFunctions", "Bearer owner", "application/json", body)
		if st != 400 || errMsg(m) != want {
			t.Errorf("%s: %d %q, want 400 %q", body, st, errMsg(m), want)
		}
	}
}

// TestBlockingFederatedSignIn: an IdP sign-in tells the functions the
// provider, its raw user info and (when forwarded) the OAuth ID token;
// the account the function sees carries the identity it is about to get.
func TestBlockingFederatedSignIn(t *testing.T) {
	t.Parallel()
	ts := newBlockingServer(t, 0)
	fn := newFakeFunction(t, func(c map[string]any) (int, string) {
		return 200, `{"userRecord":{"displayName":"Fed","updateMask":"displayName"}}`
	})
	b := `{"blockingFunctions":{"triggers":{"beforeCreate":{"functionUri":"` + fn.URL + `/c"},"beforeSignIn":{"functionUri":"` + fn.URL + `/s"}},"forwardInboundCredentials":{"idToken":true}}}`
	if st, m := do(t, ts, "PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/config?updateMask=blockingFunctions", "Bearer owner", "application/json", b); st != 200 {
		t.Fatalf("config: %d %v", st, m)
	}
	idTok := `{"sub":"g-123","email":"gina@example.com","email_verified":true,"name":"Gina"}`
	body := `{"requestUri":"http://localhost","postBody":"providerId=google.com&id_token=` + strings.ReplaceAll(idTok, `"`, `%22`) + `","returnSecureToken":true}`
	st, m := do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=k", "", "application/json", body)
	if st != 200 {
		t.Fatalf("signInWithIdp: %d %v", st, m)
	}
	if got := fn.events(); fmt.Sprint(got) != "[beforeCreate beforeSignIn]" {
		t.Fatalf("calls %v", got)
	}
	c := fn.calls[0]
	if c["sign_in_method"] != "google.com" || c["raw_user_info"] == nil || c["oauth_id_token"] == nil || c["oauth_access_token"] != nil {
		t.Errorf("event claims %v", c)
	}
	rec, _ := c["user_record"].(map[string]any)
	pd, _ := rec["provider_data"].([]any)
	if len(pd) != 1 || pd[0].(map[string]any)["provider_id"] != "google.com" || pd[0].(map[string]any)["uid"] != "g-123" {
		t.Errorf("provider_data %v", rec["provider_data"])
	}
	if claims := tokenClaims(t, m["idToken"].(string)); claims["name"] != "Fed" {
		t.Errorf("token name %v", claims["name"])
	}
}

// TestBlockingBeforeSend: beforeSendEmail and beforeSendSms (production's,
// firebase-functions' beforeEmailSent/beforeSmsSent) are told what is
// about to be sent, and their error stops it.
func TestBlockingBeforeSend(t *testing.T) {
	t.Parallel()
	ts := newBlockingServer(t, 0)
	fn := newFakeFunction(t, func(c map[string]any) (int, string) {
		if c["email"] == "deny@x.com" || c["phone_number"] == "+15555550199" {
			return 403, `{"error":{"message":"not now","status":"PERMISSION_DENIED"}}`
		}
		return 200, `{}`
	})
	if st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"ok@x.com","password":"secret1"}`); st != 200 {
		t.Fatalf("signUp: %d %v", st, m)
	}
	if st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"deny@x.com","password":"secret1"}`); st != 200 {
		t.Fatalf("signUp: %d %v", st, m)
	}
	configureBlocking(t, ts, map[string]string{auth.BeforeSendEmail: fn.URL + "/email", auth.BeforeSendSms: fn.URL + "/sms"})
	oob := "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=k"
	if st, m := do(t, ts, "POST", oob, "", "application/json", `{"requestType":"PASSWORD_RESET","email":"ok@x.com"}`); st != 200 {
		t.Fatalf("sendOobCode: %d %v", st, m)
	}
	st, m := do(t, ts, "POST", oob, "", "application/json", `{"requestType":"PASSWORD_RESET","email":"deny@x.com"}`)
	if want := "BLOCKING_FUNCTION_ERROR_RESPONSE : ((HTTP request to " + fn.URL + "/email returned HTTP error 403: " + `{"error":{"message":"not now","status":"PERMISSION_DENIED"}}))`; st != 400 || errMsg(m) != want {
		t.Errorf("denied email: %d %q", st, errMsg(m))
	}
	sms := "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=k"
	if st, m := do(t, ts, "POST", sms, "", "application/json", `{"phoneNumber":"+15555550100"}`); st != 200 {
		t.Fatalf("sendVerificationCode: %d %v", st, m)
	}
	if st, _ := do(t, ts, "POST", sms, "", "application/json", `{"phoneNumber":"+15555550199"}`); st != 400 {
		t.Errorf("denied SMS: %d", st)
	}
	// Only the allowed sends left a code.
	_, m = do(t, ts, "GET", "/emulator/v1/projects/p/oobCodes", "", "", "")
	if codes, _ := m["oobCodes"].([]any); len(codes) != 1 {
		t.Errorf("oob codes %v", m["oobCodes"])
	}
	_, m = do(t, ts, "GET", "/emulator/v1/projects/p/verificationCodes", "", "", "")
	if codes, _ := m["verificationCodes"].([]any); len(codes) != 1 {
		t.Errorf("verification codes %v", m["verificationCodes"])
	}
	fn.mu.Lock()
	defer fn.mu.Unlock()
	if len(fn.calls) != 4 {
		t.Fatalf("%d calls", len(fn.calls))
	}
	for i, want := range []map[string]any{
		{"event_type": "beforeSendEmail", "email_type": "PASSWORD_RESET", "email": "ok@x.com"},
		{"event_type": "beforeSendSms", "sms_type": "SIGN_IN_OR_SIGN_UP", "phone_number": "+15555550100"},
	} {
		c := fn.calls[2*i]
		for k, v := range want {
			if c[k] != v {
				t.Errorf("call %d %s = %v, want %v", 2*i, k, c[k], v)
			}
		}
		if c["user_record"] != nil {
			t.Errorf("a send event carries a user_record")
		}
	}
}

// TestBlockingAwaitsRegistration: while the functions that register the
// blocking functions load (AwaitBlockingFunctions), a sign-up waits for
// them rather than creating the account unchecked; other operations run
// meanwhile, and once registered the sign-up meets the function.
func TestBlockingAwaitsRegistration(t *testing.T) {
	t.Parallel()
	eng := auth.New(auth.Options{})
	ts := httptest.NewServer(New(eng, Options{DefaultProject: "p"}))
	t.Cleanup(ts.Close)
	fn := newFakeFunction(t, func(c map[string]any) (int, string) {
		if c["event_type"] == auth.BeforeCreate {
			return 200, `{"userRecord":{"displayName":"From Fn","updateMask":"displayName"}}`
		}
		return 200, `{}`
	})
	ready := make(chan struct{})
	eng.AwaitBlockingFunctions(ready)
	type result struct {
		st int
		m  map[string]any
	}
	done := make(chan result, 1)
	go func() {
		st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"early@example.com","password":"secret1","returnSecureToken":true}`)
		done <- result{st, m}
	}()
	select {
	case r := <-done:
		t.Fatalf("the sign-up did not wait for the registration: %d %v", r.st, r.m)
	case <-time.After(300 * time.Millisecond):
	}
	// The engine's lock is free meanwhile: the registration itself (an
	// admin config update) goes through.
	configureBlocking(t, ts, map[string]string{auth.BeforeCreate: fn.URL + "/create"})
	close(ready)
	r := <-done
	if r.st != 200 || r.m["displayName"] != "From Fn" {
		t.Fatalf("sign-up during the load: %d %v, want the function's displayName", r.st, r.m)
	}
	if got := fn.events(); fmt.Sprint(got) != "[beforeCreate]" {
		t.Errorf("calls %v", got)
	}
	// Once ready, an operation with nothing configured does not wait.
	configureBlocking(t, ts, map[string]string{})
	start := time.Now()
	if st, m := do(t, ts, "POST", signUpPath, "", "application/json", `{"email":"late@example.com","password":"secret1","returnSecureToken":true}`); st != 200 || m["displayName"] != nil {
		t.Fatalf("sign-up after: %d %v", st, m)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a sign-up after the registration waited %v", d)
	}
}
