package authserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/benchkit"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// BenchmarkHandler measures the calls e2e/authbench makes (sign-up,
// sign-in with a password, a token refresh, the Admin SDK's lookup: the
// revocation check of verifyIdToken) and a web app's lookup by ID token
// (after every sign-in) through the HTTP handler, body decoding and
// response encoding included, on the durable log pyric serve gives Auth;
// without the network, so that allocs/op is the adapter's and the
// engine's.
func BenchmarkHandler(b *testing.B) {
	eng, err := auth.Open(auth.Options{Log: authtest.TempLog(b)})
	if err != nil {
		b.Fatal(err)
	}
	h := authserver.New(eng, authserver.Options{DefaultProject: "p"})
	// post serves one request; the timed loops leave its answer undecoded,
	// so that allocs/op counts the server's work only.
	post := func(b *testing.B, path, authz, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w
	}
	const n = 500
	refresh, uids, ids := make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		var out map[string]any
		w := post(b, "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", fmt.Sprintf(`{"email":"seed%d@bench.example","password":"secret-1","returnSecureToken":true}`, i))
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			b.Fatal(err)
		}
		refresh[i], _ = out["refreshToken"].(string)
		uids[i], _ = out["localId"].(string)
		ids[i], _ = out["idToken"].(string)
	}
	made := 0
	run := func(name string, fn func(i int)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			start := benchkit.SelfCPU()
			for i := range b.N {
				fn(i % n)
			}
			b.ReportMetric(float64(benchkit.SelfCPU()-start)/float64(b.N), "cpu-ns/op")
		})
	}
	run("sign-up", func(int) {
		made++
		post(b, "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", fmt.Sprintf(`{"email":"new%d@bench.example","password":"secret-1","returnSecureToken":true}`, made))
	})
	run("sign-in", func(i int) {
		post(b, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k", "", fmt.Sprintf(`{"email":"seed%d@bench.example","password":"secret-1","returnSecureToken":true}`, i))
	})
	run("refresh", func(i int) {
		post(b, "/securetoken.googleapis.com/v1/token?key=k", "", `{"grant_type":"refresh_token","refresh_token":"`+refresh[i]+`"}`)
	})
	run("lookup", func(i int) {
		post(b, "/identitytoolkit.googleapis.com/v1/projects/p/accounts:lookup", "Bearer owner", `{"localId":["`+uids[i]+`"]}`)
	})
	// A web app's lookup of its own account after a sign-in.
	run("lookup-idtoken", func(i int) {
		post(b, "/identitytoolkit.googleapis.com/v1/accounts:lookup?key=k", "", `{"idToken":"`+ids[i]+`"}`)
	})
}
