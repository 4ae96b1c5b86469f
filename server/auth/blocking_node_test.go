package authserver_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/e2etest"
	authserver "github.com/pyric/pyric/server/auth"
)

func call(t *testing.T, ts *httptest.Server, method, path, authz, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// TestBlockingWithFirebaseFunctions: firebase-functions 7.4.0's own
// beforeUserCreated and beforeUserSignedIn (e2e/functions'
// sdk-harness.cjs) decode the event the engine sends, their answers are applied,
// and their HttpsError reaches the client as the emulator passes it on.
func TestBlockingWithFirebaseFunctions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e2etest.FunctionsSDKCommand(ctx, t, "p", "serve")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	port, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("harness did not start: %v\n%s", err, stderr.String())
	}
	base := "http://127.0.0.1:" + strings.TrimSpace(port)

	ts := httptest.NewServer(authserver.New(auth.New(auth.Options{}), authserver.Options{DefaultProject: "p"}))
	defer ts.Close()
	cfg := `{"blockingFunctions":{"triggers":{"beforeCreate":{"functionUri":"` + base + `/beforeCreate"},"beforeSignIn":{"functionUri":"` + base + `/beforeSignIn"}}}}`
	if st, m := call(t, ts, "PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/config?updateMask=blockingFunctions", "Bearer owner", cfg); st != 200 {
		t.Fatalf("config: %d %v", st, m)
	}

	st, m := call(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"ann@ok.example","password":"secret1","returnSecureToken":true}`)
	if st != 200 {
		t.Fatalf("signUp: %d %v\n%s", st, m, stderr.String())
	}
	if m["displayName"] != "Created ann@ok.example" {
		t.Errorf("displayName %v, want the function's", m["displayName"])
	}
	parts := strings.Split(m["idToken"].(string), ".")
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(b, &claims)
	if claims["tier"] != "gold" || claims["signedInWith"] != "providers/cloud.auth/eventTypes/user.beforeSignIn:password" {
		t.Errorf("ID token claims %v", claims)
	}

	st, m = call(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"bo@blocked.example","password":"secret1"}`)
	e, _ := m["error"].(map[string]any)
	want := "BLOCKING_FUNCTION_ERROR_RESPONSE : ((HTTP request to " + base + "/beforeCreate returned HTTP error 403: " +
		`{"error":{"message":"Sign-ups from blocked.example are not allowed.","status":"PERMISSION_DENIED"}}))`
	if st != 400 || e["message"] != want {
		t.Errorf("blocked sign-up: %d %q\nwant 400 %q", st, e["message"], want)
	}

	// beforeEmailSent and beforeSmsSent decode the send events.
	cfg = `{"blockingFunctions":{"triggers":{"beforeSendEmail":{"functionUri":"` + base + `/beforeSendEmail"},"beforeSendSms":{"functionUri":"` + base + `/beforeSendSms"}}}}`
	if st, m := call(t, ts, "PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/config?updateMask=blockingFunctions", "Bearer owner", cfg); st != 200 {
		t.Fatalf("config: %d %v", st, m)
	}
	for _, c := range []struct{ path, body, msg string }{
		{"sendOobCode", `{"requestType":"PASSWORD_RESET","email":"ann@ok.example"}`, ""},
		{"sendOobCode", `{"requestType":"PASSWORD_RESET","email":"deny@ok.example"}`, "no PASSWORD_RESET mail to deny@ok.example"},
		{"sendVerificationCode", `{"phoneNumber":"+15555550100"}`, ""},
		{"sendVerificationCode", `{"phoneNumber":"+15555550199"}`, "no SIGN_IN_OR_SIGN_UP SMS to +15555550199"},
	} {
		if strings.Contains(c.body, "deny@") {
			call(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"deny@ok.example","password":"secret1"}`)
		}
		st, m := call(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:"+c.path+"?key=k", "", c.body)
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if c.msg == "" && st != 200 || c.msg != "" && (st != 400 || !strings.Contains(msg, c.msg)) {
			t.Errorf("%s %s: %d %q, want the function's %q", c.path, c.body, st, msg, c.msg)
		}
	}
}
