package authserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/pyric/pyric/server"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/pyric/pyric/auth"
)

func newServer(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(server.Guard(New(auth.New(auth.Options{}), Options{DefaultProject: "p", APIKeys: map[string]string{"key-q": "q"}}), nil)) // as on its port
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, ts *httptest.Server, method, path, authz, ctype, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
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

func errMsg(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestRouting(t *testing.T) {
	ts := newServer(t)
	const j = "application/json"
	tests := []struct {
		name, method, path, authz, ctype, body string
		status                                 int
		msg                                    string
	}{
		{"health", "GET", "/", "", "", "", 200, ""},
		{"no key", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp", "", j, "{}", 403, "The request is missing a valid API key."},
		{"key header", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp", "", j, "{}", 200, ""},
		{"bad bearer", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "Bearer x", j, "{}", 401, ""},
		{"owner", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts", "Bearer owner", j, `{"localId":"a"}`, 200, ""},
		{"project with key", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:lookup?key=k", "", j, "{}", 400, "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id."},
		{"unknown op", "POST", "/identitytoolkit.googleapis.com/v1/accounts:nope?key=k", "", j, "{}", 404, "Not Found"},
		{"wrong method", "GET", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", "", "", 405, ""},
		{"text/plain", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", "text/plain", "{}", 400, "Invalid content-type: text/plain"},
		{"array body", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", j, "[1]", 400, "Invalid JSON payload received. must be object"},
		{"enum index", "POST", "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=k", "", j, `{"requestType":1,"email":"x@y.z"}`, 400, "EMAIL_NOT_FOUND"},
		{"null field", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:update", "Bearer owner", j, `{"localId":null}`, 400, "Invalid JSON payload received. /localId must be string"},
		{"nested type", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:lookup", "Bearer owner", j, `{"localId":[{}]}`, 400, "Invalid JSON payload received. /localId/0 must be string"},
		{"snake case", "POST", "/securetoken.googleapis.com/v1/token?key=k", "", j, `{"grant_type":"password"}`, 400, "INVALID_GRANT_TYPE"},
		{"legacy", "POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyPassword?key=k", "", j, `{"email":"x@y.z","password":"secret1"}`, 400, "EMAIL_NOT_FOUND"},
		{"emulator clear", "DELETE", "/emulator/v1/projects/p/accounts", "", "", "", 200, ""},
		{"v2 unimplemented", "GET", "/identitytoolkit.googleapis.com/v2/projects/p/defaultSupportedIdpConfigs", "Bearer owner", "", "", 501, ""},
		{"action without key", "GET", "/emulator/action?mode=verifyEmail&oobCode=x", "", "", "", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			req, _ := http.NewRequest(tt.method, ts.URL+path, strings.NewReader(tt.body))
			if tt.name == "key header" {
				req.Header.Set("X-Goog-Api-Key", "k")
			}
			if tt.authz != "" {
				req.Header.Set("Authorization", tt.authz)
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			if resp.StatusCode != tt.status || (tt.msg != "" && errMsg(m) != tt.msg) {
				t.Errorf("%d %v, want %d %q", resp.StatusCode, m, tt.status, tt.msg)
			}
		})
	}
}

func TestAPIKeyProjects(t *testing.T) {
	ts := newServer(t)
	_, m := do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=key-q", "", "application/json", `{}`)
	tok, _ := m["idToken"].(string)
	if !strings.Contains(tok, ".") {
		t.Fatalf("signUp: %v", m)
	}
	_, m = do(t, ts, "GET", "/identitytoolkit.googleapis.com/v1/projects/q/accounts:batchGet", "Bearer owner", "", "")
	if users, _ := m["users"].([]any); len(users) != 1 {
		t.Errorf("project q users = %v", m)
	}
	_, m = do(t, ts, "GET", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:batchGet", "Bearer owner", "", "")
	if users, _ := m["users"].([]any); len(users) != 0 {
		t.Errorf("project p users = %v", m)
	}
}

func TestCORS(t *testing.T) {
	ts := newServer(t)
	req, _ := http.NewRequest("OPTIONS", ts.URL+"/identitytoolkit.googleapis.com/v1/accounts:signUp", nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-client-version")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		resp.Header.Get("Access-Control-Allow-Headers") != "content-type,x-client-version" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

type sample struct {
	Email    *string                `json:"email,omitempty"`
	Names    []string               `json:"localId,omitempty"`
	Flag     *bool                  `json:"flag,omitempty"`
	Type     string                 `json:"requestType,omitempty"`
	Provider *auth.ProviderUserInfo `json:"linkProviderUserInfo,omitempty"`
}

func FuzzDecodeBody(f *testing.F) {
	f.Add("application/json", `{"email":"a@b.c","localId":["x"],"flag":true,"requestType":1}`)
	f.Add("application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=abc")
	f.Add("application/json", `{"linkProviderUserInfo":{"providerId":5}}`)
	f.Add("", `[`)
	f.Fuzz(func(t *testing.T, ctype, body string) {
		var s sample
		if _, err := DecodeBody(ctype, []byte(body), true, &s); err != nil {
			if _, ok := err.(*auth.Error); !ok {
				t.Fatalf("untyped error %T", err)
			}
		}
	})
}

// FuzzHandler sends arbitrary requests: the answer is always a JSON
// envelope and never a 500.
func FuzzHandler(f *testing.F) {
	f.Add("POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"a@b.c","password":"secret1"}`)
	f.Add("POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:update", "Bearer owner", `{"localId":"a","customAttributes":"{"}`)
	f.Add("POST", "/securetoken.googleapis.com/v1/token?key=k", "", `{"grantType":"refresh_token","refreshToken":"e30="}`)
	f.Add("PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/tenants/t?updateMask=mfaConfig.state", "Bearer owner", `{"mfaConfig":{"state":"ENABLED"}}`)
	f.Add("GET", "/emulator/action?mode=signIn&oobCode=x&apiKey=k&continueUrl=%zz", "", ``)
	f.Add("POST", "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=k", "", `{"phoneNumber":"+1555"}`)
	f.Add("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber?key=k", "", `{"temporaryProof":"x","phoneNumber":"+1"}`)
	f.Add("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start?key=k", "", `{"idToken":"a.b.","totpEnrollmentInfo":{}}`)
	f.Add("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize?key=k", "", `{"mfaPendingCredential":"e30=","totpVerificationInfo":{"verificationCode":"1"}}`)
	f.Add("POST", "/identitytoolkit.googleapis.com/v2/projects/p/oauthIdpConfigs?oauthIdpConfigId=oidc.a", "Bearer owner", `{"clientId":"c","issuer":"x"}`)
	f.Add("PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/tenants/t/inboundSamlConfigs/saml.a?updateMask=idpConfig.ssoUrl", "Bearer owner", `{"idpConfig":{"ssoUrl":1}}`)
	f.Add("PATCH", "/identitytoolkit.googleapis.com/v2/projects/p/config?updateMask=mfa", "Bearer owner", `{"mfa":{"providerConfigs":[{"state":"ENABLED","totpProviderConfig":{"adjacentIntervals":99}}]}}`)
	f.Add("GET", "/emulator/auth/handler?apiKey=k&providerId=oidc.%3Cscript%3Ex%3C/script%3E&appName=a&tid=t1", "", ``)
	f.Add("GET", "/emulator/auth/iframe?apiKey=k&appName=a", "", ``)
	h := New(auth.New(auth.Options{}), Options{})
	f.Fuzz(func(t *testing.T, method, target, authz, body string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://x"+target, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 && w.Code != 501 {
			t.Fatalf("%s %s -> %d %s", method, target, w.Code, w.Body)
		}
		// The fake IdP page escapes what the query names.
		if pid := req.URL.Query().Get("providerId"); w.Code == 200 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") &&
			strings.ContainsAny(pid, "<>\"'&") && strings.Contains(w.Body.String(), pid) {
			t.Fatalf("%s: providerId %q appears unescaped", target, pid)
		}
	})
}

// decodeJSONStreaming is the plain json.Decoder parse that decodeJSON
// replaces for its memory: the two must agree on every body. (The parse it
// replaced checked trailing input with d.More() and so let "{} }" through;
// both refuse it, as JSON.parse does.)
func decodeJSONStreaming(body []byte) (any, error) {
	var root any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&root); err != nil {
		return nil, parseError(jsonErrorText(err))
	}
	// Not d.More(), which is false before a stray '}' or ']' ("{} }").
	if len(bytes.TrimLeft(body[d.InputOffset():], " \t\r\n")) > 0 {
		return nil, parseError("Unexpected non-whitespace character after JSON")
	}
	switch root.(type) {
	case map[string]any, []any:
	default:
		return nil, parseError(fmt.Sprintf("Unexpected token, %q is not valid JSON", strings.TrimSpace(string(body))))
	}
	return root, nil
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"x","b":1,"c":[1,{"d":null}]}`, `{bad`, `{"a":1} x`, `{"a":1}{"b":2}`, `[1,2]`, `"s"`, `null`, `1e400`,
		`{"n":12345678901234567890}`, `{"s":"\ud83d\ude00\n"}`, `{"a":1,"a":"2"}`, ` {"a" : "b" } `, `{"a":"\x00"}`, `{"a":"unterminated}`, `{} }`, `[1]]`,
		`{"t":true,"f":false,"n":null,"s":"plain"}`, "{\"bad\":\"\xff\xfe\"}", `{"e":"a\"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gerr := decodeJSON(body)
		want, werr := decodeJSONStreaming(body)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: decodeJSON %v, %v; json.Decoder %v, %v", body, got, gerr, want, werr)
		}
		// The texts may differ in Go's own wording (a truncated body is
		// "unexpected end of JSON input at position N" rather than
		// "unexpected EOF"), never in the envelope.
		if gerr != nil && !strings.HasPrefix(gerr.Error(), "Invalid JSON payload received. ") {
			t.Fatalf("%q: decodeJSON says %q", body, gerr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodeJSON %#v; json.Decoder %#v", body, got, want)
		}
	})
}
