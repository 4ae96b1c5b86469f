// Package claims checks Auth and Firestore together through a real
// `pyric serve`: a user signed in with the JS SDK, given a custom claim
// with firebase-admin-go, is allowed by Firestore rules that check the
// claim, and a user without it is denied; a FirebaseServerApp made from
// a user's ID token is that user.
package claims

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"

	"github.com/pyric/pyric/internal/e2etest"
)

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /admin/{doc} {
      allow read, write: if request.auth != null && request.auth.token.role == 'admin';
    }
    match /profiles/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
`

func TestCustomClaimGatesFirestore(t *testing.T) {
	e2etest.NeedNode(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "firestore.rules"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := e2etest.StartServe(t, dir, "--in-memory", "--project", "demo-claims")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script := filepath.Join(e2etest.Root(), "e2e", "claims", "claims.cjs")
	env := []string{"AUTH_HOST=" + srv.Auth, "FIRESTORE_HOST=" + srv.Firestore, "PROJECT=" + srv.Project}

	var uids map[string]string
	e2etest.LastJSONLine(t, e2etest.RunNode(t, ctx, script, append(env, "PHASE=signup")...), &uids)
	if uids["alice"] == "" || uids["bob"] == "" {
		t.Fatalf("sign-up output: %v", uids)
	}

	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", srv.Auth)
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: srv.Project})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := app.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.SetCustomUserClaims(ctx, uids["alice"], map[string]any{"role": "admin"}); err != nil {
		t.Fatalf("SetCustomUserClaims: %v", err)
	}

	var got map[string]map[string]any
	e2etest.LastJSONLine(t, e2etest.RunNode(t, ctx, script, append(env, "PHASE=check")...), &got)
	want := map[string]map[string]any{
		"alice": {"role": "admin", "adminWrite": "ok", "adminRead": "ok", "ownProfile": "ok", "otherProfile": "permission-denied"},
		"bob":   {"role": nil, "adminWrite": "permission-denied", "adminRead": "permission-denied", "ownProfile": "ok", "otherProfile": "permission-denied"},
	}
	checkUsers(t, got, want, srv)

	// A FirebaseServerApp built from each user's ID token (server-side
	// rendering) is that user to Auth and to Firestore's rules.
	e2etest.LastJSONLine(t, e2etest.RunNode(t, ctx, script, append(env, "PHASE=serverapp")...), &got)
	checkUsers(t, got, map[string]map[string]any{
		"alice": {"sameUser": true, "email": "alice@example.com", "ownProfile": "ok", "otherProfile": "permission-denied", "adminRead": "ok"},
		"bob":   {"sameUser": true, "email": "bob@example.com", "ownProfile": "ok", "otherProfile": "permission-denied", "adminRead": "permission-denied"},
	}, srv)
}

// checkUsers wants every field of want in got.
func checkUsers(t *testing.T, got, want map[string]map[string]any, srv *e2etest.Serve) {
	t.Helper()
	for user, fields := range want {
		for k, v := range fields {
			if got[user][k] != v {
				t.Errorf("%s.%s = %v, want %v\nserver stderr:\n%s", user, k, got[user][k], v, srv.Stderr())
			}
		}
	}
}
