package authserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/server"
)

// TestProductionLimits: inputs production refuses get its error codes.
func TestProductionLimits(t *testing.T) {
	ts := newServer(t)
	const j = "application/json"
	long := func(n int) string { return strings.Repeat("a", n) }
	imports := make([]string, 1001)
	for i := range imports {
		imports[i] = `{"localId":"u` + strings.Repeat("x", i%7) + `"}`
	}
	tests := []struct {
		name, method, path, authz, body string
		status                          int
		code                            string
	}{
		{"password too long", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"a@example.com","password":"` + long(4097) + `"}`, 400, "PASSWORD_DOES_NOT_MEET_REQUIREMENTS"},
		{"password at the limit", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"b@example.com","password":"` + long(4096) + `"}`, 200, ""},
		{"email with NUL", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"a\u0000b@example.com","password":"secret123"}`, 400, "INVALID_EMAIL"},
		{"email with control", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"a\nb@example.com","password":"secret123"}`, 400, "INVALID_EMAIL"},
		{"email too long", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", `{"email":"` + long(250) + `@example.com","password":"secret123"}`, 400, "INVALID_EMAIL"},
		{"sign-in email with NUL", "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k", "", `{"email":"a\u0000@example.com","password":"secret123"}`, 400, "INVALID_EMAIL"},
		{"import over 1000", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:batchCreate", "Bearer owner", `{"users":[` + strings.Join(imports, ",") + `]}`, 400, "MAXIMUM_USER_COUNT_EXCEEDED"},
		{"unknown hash", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:batchCreate", "Bearer owner", `{"hashAlgorithm":"ROT13","users":[{"localId":"h1"}]}`, 400, "INVALID_HASH_ALGORITHM"},
		{"known hash", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:batchCreate", "Bearer owner", `{"hashAlgorithm":"HMAC_SHA256","users":[{"localId":"h2"}]}`, 200, ""},
		{"negative maxResults", "GET", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:batchGet?maxResults=-5", "Bearer owner", "", 400, "INVALID_ARGUMENT"},
		{"display name too long", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts", "Bearer owner", `{"displayName":"` + long(257) + `"}`, 400, "INVALID_DISPLAY_NAME"},
		{"photo URL too long", "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:update", "Bearer owner", `{"localId":"h2","photoUrl":"http://x/` + long(2048) + `"}`, 400, "INVALID_PHOTO_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, m := do(t, ts, tt.method, tt.path, tt.authz, j, tt.body)
			msg := errMsg(m)
			if status != tt.status || (tt.code != "" && !strings.HasPrefix(msg, tt.code)) {
				t.Errorf("%d %q, want %d %s", status, msg, tt.status, tt.code)
			}
		})
	}
}

// TestHugePasswordIsCheap: a 20 MiB password is refused quickly and without
// hundreds of MB of allocation.
func TestHugePasswordIsCheap(t *testing.T) {
	ts := newServer(t)
	body := `{"email":"big@example.com","password":"` + strings.Repeat("p", 20<<20) + `"}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	status, m := do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", "application/json", body)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if status != 400 || !strings.HasPrefix(errMsg(m), "PASSWORD_DOES_NOT_MEET_REQUIREMENTS") {
		t.Fatalf("%d %v", status, errMsg(m))
	}
	alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
	t.Logf("20 MiB password: %v, %d MiB allocated (client and server)", elapsed, alloc)
	if alloc > 150 {
		t.Errorf("allocated %d MiB for one request", alloc)
	}
}

// TestOOBLinkIgnoresHostHeader: links point at the server, whatever Host
// the client sent.
func TestOOBLinkIgnoresHostHeader(t *testing.T) {
	ts := newServer(t)
	do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", "application/json", `{"email":"h@example.com","password":"secret123"}`)
	req, _ := http.NewRequest("POST", ts.URL+"/identitytoolkit.googleapis.com/v1/projects/p/accounts:sendOobCode",
		strings.NewReader(`{"requestType":"PASSWORD_RESET","email":"h@example.com","returnOobLink":true}`))
	req.Host = "localhost:1" // a host the port lets through (a foreign one is refused there)
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	link, _ := m["oobLink"].(string)
	if !strings.HasPrefix(link, ts.URL+"/emulator/action?") {
		t.Errorf("oobLink = %q, want it on %s", link, ts.URL)
	}
}

// BenchmarkHugePassword is the server's cost of refusing a sign-up with a
// 20 MiB password (the handler alone: the body is read, decoded and
// refused before anything is hashed).
func BenchmarkHugePassword(b *testing.B) {
	h := New(auth.New(auth.Options{}), Options{DefaultProject: "p"})
	body := []byte(`{"email":"big@example.com","password":"` + strings.Repeat("p", 20<<20) + `"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 400 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// TestOOBLinkFollowsLocalAddress: one handler served on two ports names,
// in each link, the port the request arrived at, however the requests
// alternate.
func TestOOBLinkFollowsLocalAddress(t *testing.T) {
	h := New(auth.New(auth.Options{}), Options{DefaultProject: "p"})
	a, b := httptest.NewServer(server.Guard(h, nil)), httptest.NewServer(server.Guard(h, nil))
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	do(t, a, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", "application/json", `{"email":"h@example.com","password":"secret123"}`)
	for _, ts := range []*httptest.Server{a, a, b, b, a, b} {
		_, m := do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:sendOobCode", "Bearer owner", "application/json",
			`{"requestType":"PASSWORD_RESET","email":"h@example.com","returnOobLink":true}`)
		if link, _ := m["oobLink"].(string); !strings.HasPrefix(link, ts.URL+"/emulator/action?") {
			t.Fatalf("oobLink = %q, want it on %s", link, ts.URL)
		}
	}
}
