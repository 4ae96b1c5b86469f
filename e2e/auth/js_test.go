package authe2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// runSDKScript runs a testdata script of the JS SDK against a fresh pyric
// serving project and returns the JSON object of its last output line, the
// line, and the server.
func runSDKScript(t *testing.T, script, project string) (map[string]any, string, *authtest.Server) {
	t.Helper()
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, script, "AUTH_URL="+srv.URL, "PROJECT="+project,
		"NODE_PATH="+filepath.Join(jsDir(), "node_modules"))
	line := out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]
	var got map[string]any
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("bad output: %v\n%s", err, out)
	}
	return got, line, srv
}

// pathCheck expects the value at a dotted path of a script's output.
type pathCheck struct {
	path string
	want any
}

// checkPaths reports every check whose value differs.
func checkPaths(t *testing.T, got map[string]any, checks []pathCheck) {
	t.Helper()
	for _, c := range checks {
		var v any = got
		for _, k := range strings.Split(c.path, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if !reflect.DeepEqual(v, c.want) {
			t.Errorf("%s = %#v, want %#v", c.path, v, c.want)
		}
	}
}

// TestJSSDK runs every client flow through firebase@12.19.0 against pyric.
func TestJSSDK(t *testing.T) {
	needNode(t)
	got, line, srv := runSDKScript(t, "js_sdk.cjs", "demo-js")
	checks := []pathCheck{
		{"signUp.op", "signIn"},
		{"signUp.isNew", true},
		{"signUpToken.provider", "password"},
		{"signUpToken.email", "js@example.com"},
		{"signUpToken.verified", false},
		{"signUpToken.iss", "https://securetoken.google.com/demo-js"},
		{"signUpToken.aud", "demo-js"},
		{"errors.duplicate", "auth/email-already-in-use"},
		{"errors.weak", "auth/weak-password"},
		{"errors.invalidEmail", "auth/invalid-email"},
		{"profile.name", "JS User"},
		{"profile.photo", "http://x/p.png"},
		{"refreshed", true},
		{"refreshedName", "JS User"},
		{"verifyLinkMode", "verifyEmail"},
		{"emailVerified", true},
		{"errors.reuseActionCode", "auth/invalid-action-code"},
		{"afterSignOut", nil},
		{"errors.wrongPassword", "auth/wrong-password"},
		{"errors.unknownUser", "auth/user-not-found"},
		{"signIn.verified", true},
		{"signIn.isNew", false},
		{"resetEmail", "js@example.com"},
		{"errors.weakReset", "auth/weak-password"},
		{"anon.isAnonymous", true},
		{"anon.provider", "anonymous"},
		{"linked.sameUid", true},
		{"linked.isAnonymous", false},
		{"linked.email", "linked@example.com"},
		{"linked.providers", []any{"password"}},
		{"custom.uid", "js-custom"},
		{"custom.role", "admin"},
		{"custom.level", float64(3)},
		{"custom.provider", "custom"},
		{"errors.badCustomToken", "auth/invalid-custom-token"},
		{"google.name", "G JS"},
		{"google.email", "gjs@example.com"},
		{"google.provider", "google.com"},
		{"google.providers", []any{"google.com"}},
		{"google.isNew", true},
		{"google.identities", map[string]any{"email": []any{"gjs@example.com"}, "google.com": []any{"google-js-1"}}},
		{"googleAgain.sameUid", true},
		{"googleAgain.isNew", false},
		{"github", "github.com"},
		{"isEmailLink", true},
		{"emailLink.email", "link@example.com"},
		{"emailLink.verified", true},
		{"emailLink.isNew", true},
		{"afterDelete", nil},
		{"errors.deletedSignIn", "auth/wrong-password"},
	}
	checkPaths(t, got, checks)
	if got["signIn"].(map[string]any)["uid"] != got["signUp"].(map[string]any)["uid"] || got["afterReset"] != got["signUp"].(map[string]any)["uid"] {
		t.Errorf("sign-ins returned different uids: %s", line)
	}
	// onAuthStateChanged fired once per transition, starting with null.
	states, _ := got["states"].([]any)
	if len(states) < 8 || states[0] != nil || states[1] != "js@example.com" {
		t.Errorf("auth states = %v", states)
	}
	// Every sign-in left its user in the engine.
	users := srv.Engine.Users("demo-js", "")
	if len(users) < 5 {
		t.Errorf("engine has %d users after the JS flows", len(users))
	}
}
