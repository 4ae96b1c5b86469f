package authe2e

import (
	"testing"
)

// TestJSSDKPhoneMFAOIDC runs phone sign-in with the fake code, SMS and TOTP
// second factors and OIDC sign-in with a provider config through the
// firebase@12.19.0 JS SDK (its browser build, in Node).
func TestJSSDKPhoneMFAOIDC(t *testing.T) {
	needNode(t)
	got, _, _ := runSDKScript(t, "js_mfa.cjs", "demo-mfa")
	checks := []pathCheck{
		{"phone.number", "+15555550100"},
		{"phone.isNew", true},
		{"phone.provider", "phone"},
		{"phone.providers", []any{"phone"}},
		{"phoneAgain.sameUid", true},
		{"phoneAgain.isNew", false},
		{"errors.wrongCode", "auth/invalid-verification-code"},
		{"errors.reusedCode", "auth/invalid-verification-id"},
		{"linked.number", "+15555550111"},
		{"linked.providers", []any{"password", "phone"}},
		{"updated", "+15555550122"},
		{"unlinked.number", nil},
		{"unlinked.providers", []any{"password"}},
		{"errors.linkTaken", "auth/account-exists-with-different-credential"},
		{"smsEnrolled", []any{map[string]any{"factorId": "phone", "name": "my phone", "phone": "+15555550199"}}},
		{"smsEnrollToken", "phone"},
		{"smsRequired", "auth/multi-factor-auth-required"},
		{"afterFirstFactor", nil},
		{"smsHints", []any{map[string]any{"factorId": "phone", "name": "my phone", "phone": "+*******0199"}}},
		{"errors.smsWrongCode", "auth/invalid-verification-code"},
		{"smsSignIn.uid", true},
		{"smsSignIn.secondFactor", "phone"},
		{"smsSignIn.provider", "password"},
		{"smsRefreshKeepsFactor", "phone"},
		{"errors.totpDisabled", "auth/operation-not-allowed"},
		{"totpConfig", map[string]any{"providerConfigs": []any{map[string]any{"state": "ENABLED", "totpProviderConfig": map[string]any{"adjacentIntervals": 2.0}}}}},
		{"policy.short", false},
		{"policy.ok", true},
		{"policy.min", 6.0},
		{"policy.max", 4096.0},
		{"totpSecret.len", 6.0},
		{"totpSecret.period", 30.0},
		{"totpSecret.alg", "SHA1"},
		{"totpSecret.url", true},
		{"errors.totpWrongEnroll", "auth/invalid-verification-code"},
		{"totpEnrolled", []any{"phone", "totp"}},
		{"errors.totpWrongSignIn", "auth/invalid-verification-code"},
		{"totpSignIn", "totp"},
		{"afterUnenroll", 0.0},
		{"plainSignIn", true},
		{"oidc.provider", "oidc.acme"},
		{"oidc.email", "o@example.com"},
		{"oidc.name", "Oidc User"},
		{"oidc.isNew", true},
		{"oidc.signInProvider", "oidc.acme"},
		{"oidc.providers", []any{"oidc.acme"}},
		{"disabledConfig", false},
		{"errors.oidcDisabled", "auth/operation-not-allowed"},
	}
	checkPaths(t, got, checks)
}
