package authe2e

import (
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
	"disabled provider": `{"error":"auth/operation-not-allowed","listed":["ada@example.com"]}`,
}

// TestBrowserFederatedSignIn signs in with OIDC and SAML provider configs
// through signInWithPopup and signInWithRedirect of the JS SDK's browser
// build in headless Chromium, choosing accounts on pyric's fake IdP page
// (/emulator/auth/handler) as a user does.
func TestBrowserFederatedSignIn(t *testing.T) {
	bin := e2etest.Chromium(t)
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: "demo-idp"})
	dir, _ := filepath.Abs("testdata")
	steps := e2etest.RunSteps(t, 5*time.Minute, dir, "browser_idp.cjs", "AUTH_URL="+srv.URL, "PROJECT=demo-idp", "CHROMIUM="+bin)
	seen := map[string]bool{}
	for _, s := range steps {
		seen[s.Step] = true
		t.Logf("%s: %s %s", s.Step, s.Got, s.Error)
		want, ok := browserIdpWant[s.Step]
		switch {
		case !ok:
			t.Errorf("unexpected step %q: ok=%v %s %s", s.Step, s.OK, s.Got, s.Error)
		case !s.OK:
			t.Errorf("step %q failed: %s", s.Step, s.Error)
		case !e2etest.SameJSON(s.Got, want):
			t.Errorf("step %q:\n got %s\nwant %s", s.Step, s.Got, want)
		}
	}
	for name := range browserIdpWant {
		if !seen[name] {
			t.Errorf("step %q did not run", name)
		}
	}
}
