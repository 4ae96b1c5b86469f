package authe2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	fbauth "firebase.google.com/go/v4/auth"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// testClock is an engine clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// adminClient is firebase-admin-go pointed at srv.
func adminClient(t *testing.T, srv *authtest.Server, project string) *fbauth.Client {
	t.Helper()
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", srv.Host)
	ctx := context.Background()
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// refresh calls securetoken /v1/token and returns the status and error message.
func refresh(t *testing.T, base, rt string) (int, string, string) {
	t.Helper()
	resp, err := http.PostForm(base+"/securetoken.googleapis.com/v1/token?key=k", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		IDToken string `json:"id_token"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m.Error.Message, m.IDToken
}

// TestRevocationAsAdminSeesIt: after RevokeRefreshTokens, tokens issued
// before it are reported revoked by VerifyIDTokenAndCheckRevoked, the old
// refresh token answers TOKEN_EXPIRED (production; the emulator mints a
// fresh token that passes), and a new sign-in works.
// conformance: auth.token.revocation
func TestRevocationAsAdminSeesIt(t *testing.T) {
	const project = "demo-revoke"
	clk := &testClock{t: time.Now().Add(-time.Minute)}
	srv := authtest.Start(t, auth.Options{Clock: clk.now}, authserver.Options{DefaultProject: project})
	a := adminClient(t, srv, project)
	ctx := context.Background()

	su := post(t, srv.URL, "/identitytoolkit.googleapis.com/v1/accounts:signUp", map[string]any{"email": "r@example.com", "password": "secret123", "returnSecureToken": true})
	idToken, rt, uid := su["idToken"].(string), su["refreshToken"].(string), su["localId"].(string)
	if _, err := a.VerifyIDTokenAndCheckRevoked(ctx, idToken); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	if code, msg, _ := refresh(t, srv.URL, rt); code != 200 {
		t.Fatalf("refresh before revocation: %d %s", code, msg)
	}
	if err := a.RevokeRefreshTokens(ctx, uid); err != nil {
		t.Fatal(err)
	}
	if _, err := a.VerifyIDTokenAndCheckRevoked(ctx, idToken); !fbauth.IsIDTokenRevoked(err) {
		t.Errorf("ID token issued before revocation: %v, want revoked", err)
	}
	if code, msg, _ := refresh(t, srv.URL, rt); code != 400 || msg != "TOKEN_EXPIRED" {
		t.Errorf("revoked refresh token: %d %q, want 400 TOKEN_EXPIRED", code, msg)
	}
	u, err := a.GetUser(ctx, uid)
	if err != nil || u.TokensValidAfterMillis == 0 {
		t.Fatalf("GetUser: %v %+v", err, u)
	}

	clk.set(time.Now().Add(2 * time.Second)) // after the revocation second
	si := post(t, srv.URL, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword", map[string]any{"email": "r@example.com", "password": "secret123", "returnSecureToken": true})
	if _, err := a.VerifyIDTokenAndCheckRevoked(ctx, si["idToken"].(string)); err != nil {
		t.Errorf("token issued after revocation: %v", err)
	}
	code, msg, fresh := refresh(t, srv.URL, si["refreshToken"].(string))
	if code != 200 || !strings.Contains(fresh, ".") {
		t.Fatalf("new refresh token: %d %s", code, msg)
	}
	if _, err := a.VerifyIDTokenAndCheckRevoked(ctx, fresh); err != nil {
		t.Errorf("refreshed token: %v", err)
	}
}
