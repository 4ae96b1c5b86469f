package authe2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// TestJSAccountChangesDifferential runs testdata/js_account.cjs (the JS
// SDK changing a user's email at once and after verification,
// re-authenticating with right and wrong credentials, reading the
// password policy, changing the password, recovering the first email
// with the code sent to it) against firebase-tools' Auth
// emulator and against pyric, and wants the same observations from both.
func TestJSAccountChangesDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("differential test starts the reference emulator (~15 s)")
	}
	needNode(t)
	// The reference is the package's. Its accounts are cleared before and
	// after, but the out-of-band codes this test makes stay (the
	// emulator's DELETE of accounts keeps them), which would change what
	// TestDifferentialAgainstEmulator's outbox steps list: this file's
	// name sorts after diff_test.go's, so go test runs this test after it.
	ref := startReference(t, diffProject)
	clearAccounts(t, ref, diffProject)
	t.Cleanup(func() { clearAccounts(t, ref, diffProject) })
	want := runAccountScript(t, ref)
	ours := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: diffProject})
	got := runAccountScript(t, ours.URL)
	// The password policy is the one known difference: the emulator does
	// not serve getPasswordPolicy; pyric answers production's default (no
	// policy configured: at least 6 characters, as sign-up enforces).
	if e := want["errors"].(map[string]any)["validatePassword"]; e != "auth/identitytoolkit.getpasswordpolicy-is-not-implemented-in-the-auth-emulator." {
		t.Errorf("the emulator's validatePassword gave %v; drop the known difference", e)
	}
	checkPaths(t, got, []pathCheck{
		{"errors.validatePassword", "no error"},
		{"policy.isValid", false},
		{"policy.minLength", false},
		{"policy.min", 6.0},
	})
	for _, side := range []map[string]any{want, got} {
		delete(side["errors"].(map[string]any), "validatePassword")
		delete(side, "policy")
	}
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", "  ")
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("observations differ:\nemulator: %s\npyric:    %s", w, g)
	}
	// The observations must say something: the changes took effect.
	checkPaths(t, got, []pathCheck{
		{"updated.email", "second@example.com"},
		{"newEmailSignIn", true},
		{"errors.oldEmailSignIn", "auth/user-not-found"},
		{"beforeApply.email", "second@example.com"},
		{"afterApply.email", "third@example.com"},
		{"afterApply.verified", true},
		{"reauth.same", true},
		{"errors.reauthWrongPassword", "auth/wrong-password"},
		{"errors.reauthOtherUser", "auth/user-mismatch"},
		{"errors.oldPassword", "auth/wrong-password"},
		{"recoverMail.mode", "recoverEmail"},
		{"recovered.email", "first@example.com"},
		{"recovered.same", true},
	})
}

// runAccountScript runs js_account.cjs against base and decodes its
// observations.
func runAccountScript(t *testing.T, base string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, "js_account.cjs", "AUTH_URL="+base, "PROJECT="+diffProject,
		"NODE_PATH="+filepath.Join(jsDir(), "node_modules"))
	line := out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]
	var got map[string]any
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("bad output from %s: %v\n%s", base, err, out)
	}
	return got
}

// clearAccounts deletes every account of project on the emulator at base
// (the reference is shared by the package's tests).
func clearAccounts(t *testing.T, base, project string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, base+"/emulator/v1/projects/"+project+"/accounts", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("clearing the reference's accounts: %s", resp.Status)
	}
}
