package authe2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	fbauth "firebase.google.com/go/v4/auth"
	"google.golang.org/api/iterator"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/identity"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// post calls a client endpoint with the API key and decodes the answer.
func post(t *testing.T, base, path string, body any) map[string]any {
	t.Helper()
	return postWant(t, base, path, body, true)
}

// postAny is post that accepts any status.
func postAny(t *testing.T, base, path string, body any) map[string]any {
	t.Helper()
	return postWant(t, base, path, body, false)
}

func postWant(t *testing.T, base, path string, body any, want200 bool) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+path+"?key=fake-api-key", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if want200 && resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v", path, resp.StatusCode, out)
	}
	return out
}

// TestAdminGo drives the handler with firebase-admin-go v4.19.0 in
// emulator mode (FIREBASE_AUTH_EMULATOR_HOST).
func TestAdminGo(t *testing.T) {
	const project = "demo-admin"
	// Tokens are minted 5 s in the past so that a revocation (validSince =
	// admin's now, in seconds) is strictly after them.
	srv := authtest.Start(t, auth.Options{Clock: func() time.Time { return time.Now().Add(-5 * time.Second) }},
		authserver.Options{DefaultProject: project})
	ctx := context.Background()
	a := adminClient(t, srv, project)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	u, err := a.CreateUser(ctx, (&fbauth.UserToCreate{}).UID("ada").Email("Ada@Example.com").Password("secret123").DisplayName("Ada"))
	must("CreateUser", err)
	if u.UID != "ada" || u.Email != "ada@example.com" || u.DisplayName != "Ada" || len(u.ProviderUserInfo) != 1 {
		t.Errorf("created user = %+v", u.UserInfo)
	}
	_, err = a.CreateUser(ctx, (&fbauth.UserToCreate{}).UID("ada"))
	if !fbauth.IsUIDAlreadyExists(err) {
		t.Errorf("duplicate uid error = %v", err)
	}
	_, err = a.CreateUser(ctx, (&fbauth.UserToCreate{}).Email("ada@example.com"))
	if !fbauth.IsEmailAlreadyExists(err) {
		t.Errorf("duplicate email error = %v", err)
	}
	got, err := a.GetUserByEmail(ctx, "ada@example.com")
	must("GetUserByEmail", err)
	if got.UID != "ada" || got.UserMetadata.CreationTimestamp == 0 {
		t.Errorf("GetUserByEmail = %+v", got)
	}
	u, err = a.UpdateUser(ctx, "ada", (&fbauth.UserToUpdate{}).DisplayName("Ada L").EmailVerified(true).PhotoURL("http://x/a.png"))
	must("UpdateUser", err)
	if u.DisplayName != "Ada L" || !u.EmailVerified || u.PhotoURL != "http://x/a.png" {
		t.Errorf("updated user = %+v", u.UserInfo)
	}
	must("SetCustomUserClaims", a.SetCustomUserClaims(ctx, "ada", map[string]any{"admin": true, "tier": 2}))
	got, err = a.GetUser(ctx, "ada")
	must("GetUser", err)
	if got.CustomClaims["admin"] != true {
		t.Errorf("claims = %v", got.CustomClaims)
	}
	res, err := a.GetUsers(ctx, []fbauth.UserIdentifier{fbauth.UIDIdentifier{UID: "ada"}, fbauth.EmailIdentifier{Email: "nobody@example.com"}})
	must("GetUsers", err)
	if len(res.Users) != 1 || len(res.NotFound) != 1 {
		t.Errorf("GetUsers = %d found, %d not found", len(res.Users), len(res.NotFound))
	}

	// Custom token → client sign-in → ID token verified by the admin SDK
	// and read by the rules identity exactly the same way.
	ct, err := a.CustomTokenWithClaims(ctx, "ada", map[string]any{"session": "s1"})
	must("CustomToken", err)
	signed := post(t, srv.URL, "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken", map[string]any{"token": ct, "returnSecureToken": true})
	idToken := signed["idToken"].(string)
	tok, err := a.VerifyIDToken(ctx, idToken)
	must("VerifyIDToken", err)
	if tok.UID != "ada" || tok.Claims["admin"] != true || tok.Claims["session"] != "s1" || tok.Firebase.SignInProvider != "custom" {
		t.Errorf("verified token = %+v", tok)
	}
	id, err := identity.FromAuthorization("Bearer " + idToken)
	must("FromAuthorization", err)
	if id.UID != tok.UID || id.Token["admin"] != true || id.Token["email"] != "ada@example.com" {
		t.Errorf("rules identity = %+v", id)
	}
	fb, _ := id.Token["firebase"].(map[string]any)
	if fb["sign_in_provider"] != "custom" {
		t.Errorf("rules identity firebase claim = %v", fb)
	}
	_, err = a.VerifyIDTokenAndCheckRevoked(ctx, idToken)
	must("VerifyIDTokenAndCheckRevoked before revocation", err)

	cookie, err := a.SessionCookie(ctx, idToken, 24*time.Hour)
	must("SessionCookie", err)
	ctok, err := a.VerifySessionCookie(ctx, cookie)
	must("VerifySessionCookie", err)
	if ctok.UID != "ada" || ctok.Expires-ctok.IssuedAt != 24*3600 || !strings.HasPrefix(ctok.Issuer, "https://session.firebase.google.com/") {
		t.Errorf("session cookie token = %+v", ctok)
	}

	must("RevokeRefreshTokens", a.RevokeRefreshTokens(ctx, "ada"))
	if _, err := a.VerifyIDTokenAndCheckRevoked(ctx, idToken); !fbauth.IsIDTokenRevoked(err) {
		t.Errorf("after revocation: %v, want ID token revoked", err)
	}
	if _, err := a.VerifySessionCookieAndCheckRevoked(ctx, cookie); !fbauth.IsSessionCookieRevoked(err) {
		t.Errorf("session cookie after revocation: %v, want revoked", err)
	}

	link, err := a.PasswordResetLink(ctx, "ada@example.com")
	must("PasswordResetLink", err)
	if !strings.Contains(link, "mode=resetPassword") || !strings.HasPrefix(link, srv.URL+"/emulator/action") {
		t.Errorf("reset link = %s", link)
	}

	// Import, list with paging, delete in bulk.
	imp, err := a.ImportUsers(ctx, []*fbauth.UserToImport{
		(&fbauth.UserToImport{}).UID("imp1").Email("imp1@example.com").CustomClaims(map[string]any{"plan": "pro"}),
		(&fbauth.UserToImport{}).UID("imp2").Disabled(true),
		(&fbauth.UserToImport{}).UID("imp3").Email("imp1@example.com"), // duplicate email: refused
	})
	must("ImportUsers", err)
	if imp.SuccessCount != 2 || imp.FailureCount != 1 || imp.Errors[0].Index != 2 {
		t.Errorf("ImportUsers = %+v", imp)
	}
	var uids []string
	pager := iterator.NewPager(a.Users(ctx, ""), 2, "")
	for {
		var page []*fbauth.ExportedUserRecord
		next, err := pager.NextPage(&page)
		must("Users page", err)
		for _, r := range page {
			uids = append(uids, r.UID)
		}
		if next == "" {
			break
		}
	}
	if strings.Join(uids, ",") != "ada,imp1,imp2" {
		t.Errorf("Users = %v", uids)
	}
	it := a.Users(ctx, "")
	n := 0
	for {
		r, err := it.Next()
		if err == iterator.Done {
			break
		}
		must("Users iterator", err)
		if r.UID == "imp1" && r.CustomClaims["plan"] != "pro" {
			t.Errorf("imported claims = %v", r.CustomClaims)
		}
		n++
	}
	if n != 3 {
		t.Errorf("iterator saw %d users", n)
	}
	dr, err := a.DeleteUsers(ctx, []string{"imp1", "imp2", "missing"})
	must("DeleteUsers", err)
	if dr.SuccessCount != 3 || dr.FailureCount != 0 {
		t.Errorf("DeleteUsers = %+v", dr)
	}
	must("DeleteUser", a.DeleteUser(ctx, "ada"))
	if _, err := a.GetUser(ctx, "ada"); !fbauth.IsUserNotFound(err) {
		t.Errorf("GetUser after delete: %v", err)
	}

	// Tenants.
	tm := a.TenantManager
	tn, err := tm.CreateTenant(ctx, (&fbauth.TenantToCreate{}).DisplayName("acme").AllowPasswordSignUp(true))
	must("CreateTenant", err)
	tc, err := tm.AuthForTenant(tn.ID)
	must("AuthForTenant", err)
	tu, err := tc.CreateUser(ctx, (&fbauth.UserToCreate{}).Email("t@example.com").Password("secret123"))
	must("tenant CreateUser", err)
	if tu.TenantID != tn.ID {
		t.Errorf("tenant user tenant = %q, want %q", tu.TenantID, tn.ID)
	}
	if _, err := a.GetUser(ctx, tu.UID); !fbauth.IsUserNotFound(err) {
		t.Errorf("tenant user visible in the project: %v", err)
	}
	got2, err := tm.Tenant(ctx, tn.ID)
	must("Tenant", err)
	if got2.DisplayName != "acme" || !got2.AllowPasswordSignUp {
		t.Errorf("tenant = %+v", got2)
	}
	must("DeleteTenant", tm.DeleteTenant(ctx, tn.ID))
}
