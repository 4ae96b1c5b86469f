package authe2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	fbauth "firebase.google.com/go/v4/auth"
	"google.golang.org/api/iterator"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// TestAdminGoMFAUsers: firebase-admin-go creates, reads and updates users
// with SMS second factors, and the client's password sign-in then needs
// the second factor.
func TestAdminGoMFAUsers(t *testing.T) {
	const project = "demo-admin-mfa"
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	a := adminClient(t, srv, project)
	ctx := context.Background()
	u, err := a.CreateUser(ctx, (&fbauth.UserToCreate{}).UID("m1").Email("m1@example.com").EmailVerified(true).Password("secret123").
		MFASettings(fbauth.MultiFactorSettings{EnrolledFactors: []*fbauth.MultiFactorInfo{
			{DisplayName: "work", FactorID: "phone", Phone: &fbauth.PhoneMultiFactorInfo{PhoneNumber: "+15555550300"}},
		}}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.GetUser(ctx, u.UID)
	if err != nil {
		t.Fatal(err)
	}
	f := got.MultiFactor.EnrolledFactors
	if len(f) != 1 || f[0].FactorID != "phone" || f[0].Phone == nil || f[0].Phone.PhoneNumber != "+15555550300" || f[0].DisplayName != "work" ||
		f[0].UID == "" || f[0].EnrollmentTimestamp == 0 {
		t.Fatalf("GetUser factors = %+v", f)
	}
	// The client's first factor now needs the second.
	r := postStatus(t, srv.URL, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword", map[string]any{"email": "m1@example.com", "password": "secret123"})
	if r["mfaPendingCredential"] == nil || r["idToken"] != nil {
		t.Errorf("password sign-in of an MFA user = %v", r)
	}
	u, err = a.UpdateUser(ctx, "m1", (&fbauth.UserToUpdate{}).MFASettings(fbauth.MultiFactorSettings{EnrolledFactors: []*fbauth.MultiFactorInfo{
		{UID: f[0].UID, DisplayName: "work", FactorID: "phone", Phone: &fbauth.PhoneMultiFactorInfo{PhoneNumber: "+15555550300"}},
		{DisplayName: "home", FactorID: "phone", Phone: &fbauth.PhoneMultiFactorInfo{PhoneNumber: "+15555550301"}},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(u.MultiFactor.EnrolledFactors); n != 2 || u.MultiFactor.EnrolledFactors[0].UID != f[0].UID {
		t.Errorf("after update: %+v", u.MultiFactor.EnrolledFactors)
	}
	if _, err := a.CreateUser(ctx, (&fbauth.UserToCreate{}).Email("bad@example.com").MFASettings(fbauth.MultiFactorSettings{EnrolledFactors: []*fbauth.MultiFactorInfo{
		{FactorID: "phone", Phone: &fbauth.PhoneMultiFactorInfo{PhoneNumber: "5555"}}}})); err == nil {
		t.Error("created a factor with an invalid number")
	}
	u, err = a.UpdateUser(ctx, "m1", (&fbauth.UserToUpdate{}).MFASettings(fbauth.MultiFactorSettings{}))
	if err != nil || len(u.MultiFactor.EnrolledFactors) != 0 {
		t.Errorf("clearing factors: %v %+v", err, u)
	}
}

// TestAdminGoProviderConfigs: OIDC and SAML provider config CRUD through
// firebase-admin-go, at the project and in a tenant.
// conformance: auth.admin.provider-configs
func TestAdminGoProviderConfigs(t *testing.T) {
	const project = "demo-admin-idp"
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	a := adminClient(t, srv, project)
	ctx := context.Background()

	oc, err := a.CreateOIDCProviderConfig(ctx, (&fbauth.OIDCProviderConfigToCreate{}).ID("oidc.acme").DisplayName("Acme").Enabled(true).
		ClientID("client-1").Issuer("https://acme.example.com").IDTokenResponseType(true))
	if err != nil {
		t.Fatal(err)
	}
	if oc.ID != "oidc.acme" || oc.ClientID != "client-1" || oc.Issuer != "https://acme.example.com" || !oc.Enabled || oc.DisplayName != "Acme" {
		t.Errorf("created OIDC = %+v", oc)
	}
	if _, err := a.CreateOIDCProviderConfig(ctx, (&fbauth.OIDCProviderConfigToCreate{}).ID("oidc.acme").ClientID("c").Issuer("https://x.example.com")); err == nil {
		t.Error("created a duplicate OIDC config")
	}
	oc, err = a.UpdateOIDCProviderConfig(ctx, "oidc.acme", (&fbauth.OIDCProviderConfigToUpdate{}).DisplayName("Acme 2").Enabled(false))
	if err != nil || oc.DisplayName != "Acme 2" || oc.Enabled || oc.ClientID != "client-1" {
		t.Errorf("updated OIDC = %+v, %v", oc, err)
	}
	if got, err := a.OIDCProviderConfig(ctx, "oidc.acme"); err != nil || got.DisplayName != "Acme 2" {
		t.Errorf("get OIDC = %+v, %v", got, err)
	}
	sc, err := a.CreateSAMLProviderConfig(ctx, (&fbauth.SAMLProviderConfigToCreate{}).ID("saml.corp").DisplayName("Corp").Enabled(true).
		IDPEntityID("https://idp.corp.example").SSOURL("https://idp.corp.example/sso").X509Certificates([]string{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"}).
		RPEntityID("pyric-rp").CallbackURL("https://demo.firebaseapp.com/__/auth/handler"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.ID != "saml.corp" || sc.IDPEntityID != "https://idp.corp.example" || sc.SSOURL != "https://idp.corp.example/sso" || sc.RPEntityID != "pyric-rp" || len(sc.X509Certificates) != 1 {
		t.Errorf("created SAML = %+v", sc)
	}
	sc, err = a.UpdateSAMLProviderConfig(ctx, "saml.corp", (&fbauth.SAMLProviderConfigToUpdate{}).SSOURL("https://idp.corp.example/sso2"))
	if err != nil || sc.SSOURL != "https://idp.corp.example/sso2" || sc.IDPEntityID != "https://idp.corp.example" {
		t.Errorf("updated SAML = %+v, %v", sc, err)
	}
	it := a.OIDCProviderConfigs(ctx, "")
	n := 0
	for {
		_, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("listed %d OIDC configs", n)
	}
	if err := a.DeleteOIDCProviderConfig(ctx, "oidc.acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.OIDCProviderConfig(ctx, "oidc.acme"); !fbauth.IsConfigurationNotFound(err) {
		t.Errorf("after delete: %v, want configuration not found", err)
	}
	if err := a.DeleteSAMLProviderConfig(ctx, "saml.corp"); err != nil {
		t.Fatal(err)
	}

	// Per tenant: a config of the tenant is not the project's.
	tn, err := a.TenantManager.CreateTenant(ctx, (&fbauth.TenantToCreate{}).DisplayName("t"))
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := a.TenantManager.AuthForTenant(tn.ID)
	if _, err := tc.CreateOIDCProviderConfig(ctx, (&fbauth.OIDCProviderConfigToCreate{}).ID("oidc.tenant").ClientID("c").Issuer("https://t.example.com")); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.OIDCProviderConfig(ctx, "oidc.tenant"); err != nil {
		t.Errorf("tenant config: %v", err)
	}
	if _, err := a.OIDCProviderConfig(ctx, "oidc.tenant"); !fbauth.IsConfigurationNotFound(err) {
		t.Errorf("tenant config visible in the project: %v", err)
	}
}

// postStatus is post without failing on a non-200 answer.
func postStatus(t *testing.T, base, path string, body any) map[string]any {
	t.Helper()
	return postAny(t, base, path, body)
}

// TestAdminGoProjectMFAConfig: UpdateProjectConfig turns TOTP on and
// GetProjectConfig reads it back.
func TestAdminGoProjectMFAConfig(t *testing.T) {
	const project = "demo-admin-cfg"
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	a := adminClient(t, srv, project)
	ctx := context.Background()
	cfg, err := a.UpdateProjectConfig(ctx, (&fbauth.ProjectConfigToUpdate{}).MultiFactorConfig(fbauth.MultiFactorConfig{
		ProviderConfigs: []*fbauth.ProviderConfig{{State: fbauth.Enabled, TOTPProviderConfig: &fbauth.TOTPProviderConfig{AdjacentIntervals: 3}}}}))
	if err != nil {
		t.Fatal(err)
	}
	if pc := cfg.MultiFactorConfig.ProviderConfigs; len(pc) != 1 || pc[0].State != fbauth.Enabled || pc[0].TOTPProviderConfig.AdjacentIntervals != 3 {
		t.Fatalf("updated config = %+v", cfg.MultiFactorConfig)
	}
	got, err := a.GetProjectConfig(ctx)
	if err != nil || got.MultiFactorConfig == nil || got.MultiFactorConfig.ProviderConfigs[0].TOTPProviderConfig.AdjacentIntervals != 3 {
		t.Fatalf("GetProjectConfig = %+v, %v", got, err)
	}
}

// totpNow is RFC 6238's current code (SHA-1, 30 s, 6 digits) of a base32
// secret, computed as an authenticator app would.
func totpNow(t *testing.T, secret string) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimRight(strings.ToUpper(secret), "="))
	if err != nil {
		t.Fatalf("TOTP secret %q: %v", secret, err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(time.Now().Unix()/30))
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1000000)
}

// TestAdminGoSeesClientEnrolledFactors: second factors a client enrolls
// (SMS and TOTP, through mfaEnrollment:start/finalize) are what
// firebase-admin-go's GetUser reports, and withdrawing one removes it.
func TestAdminGoSeesClientEnrolledFactors(t *testing.T) {
	const project = "demo-admin-mfa-client"
	srv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	a := adminClient(t, srv, project)
	ctx := context.Background()
	if _, err := a.UpdateProjectConfig(ctx, (&fbauth.ProjectConfigToUpdate{}).MultiFactorConfig(fbauth.MultiFactorConfig{
		ProviderConfigs: []*fbauth.ProviderConfig{{State: fbauth.Enabled, TOTPProviderConfig: &fbauth.TOTPProviderConfig{AdjacentIntervals: 1}}}})); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateUser(ctx, (&fbauth.UserToCreate{}).UID("c1").Email("c1@example.com").EmailVerified(true).Password("secret123")); err != nil {
		t.Fatal(err)
	}
	const v2 = "/identitytoolkit.googleapis.com/v2/accounts/"
	tok := post(t, srv.URL, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
		map[string]any{"email": "c1@example.com", "password": "secret123", "returnSecureToken": true})["idToken"]

	start := post(t, srv.URL, v2+"mfaEnrollment:start", map[string]any{"idToken": tok, "phoneEnrollmentInfo": map[string]any{"phoneNumber": "+15555550400", "recaptchaToken": "fake"}})
	session := start["phoneSessionInfo"].(map[string]any)["sessionInfo"].(string)
	resp, err := http.Get(srv.URL + "/emulator/v1/projects/" + project + "/verificationCodes")
	if err != nil {
		t.Fatal(err)
	}
	var codes struct {
		VerificationCodes []struct{ SessionInfo, Code string } `json:"verificationCodes"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&codes)
	resp.Body.Close()
	code := ""
	for _, c := range codes.VerificationCodes {
		if c.SessionInfo == session {
			code = c.Code
		}
	}
	tok = post(t, srv.URL, v2+"mfaEnrollment:finalize", map[string]any{"idToken": tok, "displayName": "phone",
		"phoneVerificationInfo": map[string]any{"sessionInfo": session, "code": code}})["idToken"]

	ts := post(t, srv.URL, v2+"mfaEnrollment:start", map[string]any{"idToken": tok, "totpEnrollmentInfo": map[string]any{}})["totpSessionInfo"].(map[string]any)
	post(t, srv.URL, v2+"mfaEnrollment:finalize", map[string]any{"idToken": tok, "displayName": "app",
		"totpVerificationInfo": map[string]any{"sessionInfo": ts["sessionInfo"], "verificationCode": totpNow(t, ts["sharedSecretKey"].(string))}})

	u, err := a.GetUser(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	f := u.MultiFactor.EnrolledFactors
	if len(f) != 2 {
		t.Fatalf("GetUser factors = %+v", f)
	}
	if f[0].FactorID != "phone" || f[0].Phone == nil || f[0].Phone.PhoneNumber != "+15555550400" || f[0].DisplayName != "phone" || f[0].UID == "" || f[0].EnrollmentTimestamp == 0 {
		t.Errorf("SMS factor = %+v", f[0])
	}
	if f[1].FactorID != "totp" || f[1].TOTP == nil || f[1].DisplayName != "app" || f[1].UID == "" || f[1].EnrollmentTimestamp == 0 {
		t.Errorf("TOTP factor = %+v", f[1])
	}
	post(t, srv.URL, v2+"mfaEnrollment:withdraw", map[string]any{"idToken": tok, "mfaEnrollmentId": f[0].UID})
	if u, err = a.GetUser(ctx, "c1"); err != nil || len(u.MultiFactor.EnrolledFactors) != 1 || u.MultiFactor.EnrolledFactors[0].FactorID != "totp" {
		t.Errorf("after withdrawing the SMS factor: %v %+v", err, u.MultiFactor)
	}
}
