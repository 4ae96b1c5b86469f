package authe2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/e2etest"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// browserIdpWant is what every step of testdata/browser_idp.cjs must
// return.
var browserIdpWant = map[string]string{
	"provider configs": `"created"`,
	"oidc popup: new account": `{"providerId":"oidc.acme","email":"ada@example.com","name":"Ada Lovelace","isNew":true,
		"signInProvider":"oidc.acme","providers":["oidc.acme"],"title":"Sign in with oidc.acme",
		"help":"No oidc.acme accounts exist in the emulator yet.","popupClosed":true}`,
	"oidc popup: existing account": `{"providerId":"oidc.acme","email":"ada@example.com","name":"Ada Lovelace","isNew":false,
		"signInProvider":"oidc.acme","providers":["oidc.acme"],"listed":["ada@example.com"],"popupClosed":true,"sameUid":true}`,
	"saml popup: new account": `{"providerId":"saml.corp","email":"grace@example.com","name":"Grace Hopper","isNew":true,
		"signInProvider":"saml.corp","providers":["saml.corp"],"title":"Sign in with saml.corp",
		"help":"No saml.corp accounts exist in the emulator yet.","popupClosed":true}`,
	"popup closed by the user": `{"error":"auth/popup-closed-by-user"}`,
	"oidc redirect: existing account": `{"providerId":"oidc.acme","email":"ada@example.com","name":"Ada Lovelace","isNew":false,
		"signInProvider":"oidc.acme","providers":["oidc.acme"],"listed":["ada@example.com"],"currentUserSet":true,"sameUid":true}`,
	"saml redirect: new account": `{"providerId":"saml.corp","email":"linus@example.com","name":"Linus","isNew":true,
		"signInProvider":"saml.corp","providers":["saml.corp"],"title":"Sign in with saml.corp",
		"help":"Choose an account the emulator already knows, or add a new one:","currentUserSet":true}`,
	"saml popup: chooser lists both accounts": `{"providerId":"saml.corp","email":"grace@example.com","name":"Grace Hopper","isNew":false,
		"signInProvider":"saml.corp","providers":["saml.corp"],"listed":["grace@example.com","linus@example.com"],"popupClosed":true,"sameUid":true}`,
	"tenant popup: new account": `{"providerId":"oidc.acme","email":"ada@example.com","name":"Ada in T1","isNew":true,
		"signInProvider":"oidc.acme","providers":["oidc.acme"],"title":"Sign in with oidc.acme",
		"help":"No oidc.acme accounts exist in the emulator yet.","popupClosed":true,"sameUidAsProjectAda":false,"tenantMatches":true}`,
	"disabled provider": `{"error":"auth/operation-not-allowed","listed":["ada@example.com"]}`,
}

// TestBrowserFederatedSignIn signs in with OIDC and SAML provider configs
// through signInWithPopup and signInWithRedirect of the JS SDK's browser
// build in headless Chromium, choosing accounts on pyric's fake IdP page
// (/emulator/auth/handler) as a user does.
func TestBrowserFederatedSignIn(t *testing.T) {
	runBrowser(t, "browser_idp.cjs", "demo-idp", browserIdpWant)
}

// browserPhoneWant is what every step of testdata/browser_phone.cjs must
// return.
var browserPhoneWant = map[string]string{
	"phone sign-in":                    `{"number":"+15555550100","isNew":true,"provider":"phone","providers":["phone"]}`,
	"phone sign-in, wrong code":        `"auth/invalid-verification-code"`,
	"link a number":                    `{"number":"+15555550111","providers":["password","phone"]}`,
	"update the number":                `"+15555550122"`,
	"unlink, then link a taken number": `{"unlinked":{"number":null,"providers":["password"]},"taken":"auth/account-exists-with-different-credential"}`,
	"SMS enrollment":                   `{"factors":[{"factorId":"phone","name":"my phone","phone":"+15555550199"}],"secondFactor":"phone"}`,
	"SMS sign-in": `{"required":"auth/multi-factor-auth-required","signedInAfterFirstFactor":false,
		"hint":{"factorId":"phone","name":"my phone","phone":"+*******0199"},"wrongCode":"auth/invalid-verification-code",
		"uid":"mfa1","provider":"password","secondFactor":"phone"}`,
}

// TestBrowserPhoneMFA: phone sign-in, linking and updating a number, and
// SMS second-factor enrollment and sign-in, with the SDK sending every code
// itself (RecaptchaVerifier, verifyPhoneNumber) as only its browser build
// can.
func TestBrowserPhoneMFA(t *testing.T) {
	runBrowser(t, "browser_phone.cjs", "demo-phone", browserPhoneWant)
}

// TestBrowserFederatedSignInReference runs the same popup and redirect
// flows against firebase-tools' Auth emulator: the SDK's outcomes are the
// same as with pyric. Only the pages' wording (title, help) is not
// compared, and the steps needing provider configs, which that emulator
// lacks, do not run.
func TestBrowserFederatedSignInReference(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the reference emulator")
	}
	bin := e2etest.Chromium(t)
	ref := startReference(t, diffProject)
	t.Cleanup(func() {
		// The differential test expects the emulator without accounts or
		// tenants.
		call := func(method, path string) map[string]any {
			req, _ := http.NewRequest(method, ref+path, nil)
			req.Header.Set("Authorization", "Bearer owner")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("cleaning the reference emulator: %v", err)
				return nil
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			return m
		}
		tenants, _ := call(http.MethodGet, "/identitytoolkit.googleapis.com/v2/projects/"+diffProject+"/tenants")["tenants"].([]any)
		for _, tn := range tenants {
			if id, _ := tn.(map[string]any)["tenantId"].(string); id != "" {
				call(http.MethodDelete, "/identitytoolkit.googleapis.com/v2/projects/"+diffProject+"/tenants/"+id)
			}
		}
		call(http.MethodDelete, "/emulator/v1/projects/"+diffProject+"/accounts")
	})
	want := map[string]string{}
	for name, w := range browserIdpWant {
		if name == "provider configs" || name == "disabled provider" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(w), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "title")
		delete(m, "help")
		b, _ := json.Marshal(m)
		want[name] = string(b)
	}
	runSteps(t, bin, "browser_idp.cjs", ref, diffProject, want, func(m map[string]any) { delete(m, "title"); delete(m, "help") }, "REFERENCE=1")
}

// runBrowser runs a browser step script of testdata against a fresh pyric
// serving project and checks every step against want.
func runBrowser(t *testing.T, script, project string, want map[string]string) {
	bin := e2etest.Chromium(t)
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	runSteps(t, bin, script, srv.URL, project, want, nil)
}

// runSteps runs a browser step script against the Auth endpoint at base
// and checks every step against want, after drop (if any) removed what is
// not compared from each object a step returned.
func runSteps(t *testing.T, bin, script, base, project string, want map[string]string, drop func(map[string]any), env ...string) {
	t.Helper()
	dir, _ := filepath.Abs("testdata")
	env = append(env, "AUTH_URL="+base, "PROJECT="+project, "CHROMIUM="+bin)
	steps := e2etest.RunSteps(t, 5*time.Minute, dir, script, env...)
	for _, s := range steps {
		t.Logf("%s: %s %s", s.Step, s.Got, s.Error)
	}
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: want, Listed: true,
		Normalize: func(_ string, got json.RawMessage) json.RawMessage {
			var m map[string]any
			if drop == nil || json.Unmarshal(got, &m) != nil || m == nil {
				return got
			}
			drop(m)
			b, _ := json.Marshal(m)
			return b
		}})
}
