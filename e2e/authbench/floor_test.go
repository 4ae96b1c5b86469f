package authbench

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// floorEnv, when set, makes the test binary the floor server listening
// on its value (host:port).
const floorEnv = "PYRIC_AUTH_BENCH_FLOOR"

// serveFloor answers the workload's calls with canned replies of the
// shape the clients read: one unsigned ID token (as the Auth emulator
// issues them) for one user, whatever is asked.
func serveFloor(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	now := time.Now().Unix()
	claims, _ := json.Marshal(map[string]any{
		"iss": "https://securetoken.google.com/" + project, "aud": project, "auth_time": now, "user_id": "floor-user",
		"sub": "floor-user", "iat": now, "exp": now + 3600, "email": "floor@bench.example", "email_verified": false,
		"firebase": map[string]any{"identities": map[string]any{"email": []string{"floor@bench.example"}}, "sign_in_provider": "password"},
	})
	enc := base64.RawURLEncoding.EncodeToString
	idToken := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(claims) + "."
	signIn, _ := json.Marshal(map[string]any{"kind": "identitytoolkit#VerifyPasswordResponse", "localId": "floor-user",
		"email": "floor@bench.example", "displayName": "", "idToken": idToken, "registered": true,
		"refreshToken": "floor-refresh", "expiresIn": "3600"})
	token, _ := json.Marshal(map[string]any{"id_token": idToken, "access_token": idToken, "refresh_token": "floor-refresh",
		"expires_in": "3600", "token_type": "Bearer", "user_id": "floor-user", "project_id": project})
	lookup, _ := json.Marshal(map[string]any{"kind": "identitytoolkit#GetAccountInfoResponse", "users": []any{map[string]any{
		"localId": "floor-user", "email": "floor@bench.example", "emailVerified": false, "passwordHash": "x",
		"validSince": fmt.Sprint(now - 60), "createdAt": fmt.Sprint(now * 1000), "lastLoginAt": fmt.Sprint(now * 1000),
		"providerUserInfo": []any{map[string]any{"providerId": "password", "email": "floor@bench.example", "federatedId": "floor@bench.example", "rawId": "floor@bench.example"}},
	}}})
	http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		switch p := r.URL.Path; {
		case p == "/":
			body = []byte(`{"authEmulator":{"ready":true}}`)
		case strings.HasSuffix(p, "/token"):
			body = token
		case strings.HasSuffix(p, ":lookup"):
			body = lookup
		default: // signUp, signInWithPassword
			body = signIn
		}
		r.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	os.Exit(0)
}
