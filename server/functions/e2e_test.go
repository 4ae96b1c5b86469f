package functionsserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
)

const project = "demo-pyric-fn"

// startBackend serves e2e/functions (its JavaScript and TypeScript
// codebases) with every other service, in memory, on free ports.
func startBackend(t *testing.T) *backend.Backend {
	t.Helper()
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`[{"source":"js","codebase":"js"},{"source":"ts","codebase":"ts"}]`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.Start(backend.Options{
		Sandbox:   sandbox.Options{Project: project},
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Log: &testLog{t: t}, Poll: -1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	if b.Functions() == nil || len(b.Functions().Endpoints()) < 10 {
		t.Fatalf("functions did not load: %+v", b.Functions())
	}
	return b
}

type testLog struct{ t *testing.T }

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestFunctionsPort serves e2e/functions and drives it with the client
// SDK and plain HTTP.
func TestFunctionsPort(t *testing.T) {
	b := startBackend(t)
	t.Run("client SDK", func(t *testing.T) { testClientSDK(t, b) })
	t.Run("plain HTTP", func(t *testing.T) { testPlainHTTP(t, b) })
}

// testClientSDK drives the functions port with firebase@12.19.0's
// connectFunctionsEmulator + httpsCallable and an Auth-emulator user, the
// answers compared with what firebase-tools' functions emulator gives the
// same calls.
func testClientSDK(t *testing.T, b *backend.Backend) {
	host, port, _ := net.SplitHostPort(b.Addr(backend.Functions))
	steps := e2etest.RunSteps(t, 90*time.Second, e2etest.FunctionsDir(), "client.mjs",
		"PROJECT="+project, "FUNCTIONS_HOST="+host, "FUNCTIONS_PORT="+port, "AUTH_URL=http://"+b.Addr(backend.Auth))
	// Every answer is the emulator's (observed with firebase-tools 15.34.2
	// running e2e/functions/js), but the timeout: the emulator's proxy
	// answers a hung function with a socket error (500, internal) where
	// production answers 504, which the SDK reads as deadline-exceeded.
	e2etest.CheckSteps(t, steps, e2etest.Want{Listed: true, Steps: map[string]string{
		"callable-unauthenticated":     `{"code":"functions/unauthenticated","message":"sign in first [401]","details":{"hint":"auth"}}`,
		"callable-v1-httpserror":       `{"code":"functions/invalid-argument","message":"a and b must be numbers [400]","details":{"got":{"a":1,"b":"x"}}}`,
		"callable-v1-result":           `{"sum":5,"uid":null}`,
		"callable-plain-error":         `{"code":"functions/internal","message":"INTERNAL [500]","details":null}`,
		"callable-missing":             `{"code":"functions/not-found","message":"not-found [404]","details":null}`,
		"callable-wrong-region":        `{"code":"functions/not-found","message":"not-found [404]","details":null}`,
		"callable-timeout-is-deadline": `{"code":"functions/deadline-exceeded","message":"deadline-exceeded [504]","details":null}`,
		"callable-secret":              `{"apiKey":"local-secret"}`,
		"callable-ts":                  `{"shouted":"HEY"}`,
		"sign-up":                      `{"email":"fn-user@example.com"}`,
		"callable-authenticated":       `{"uidMatches":true,"email":"fn-user@example.com","data":{"hello":"world"}}`,
		"callable-v1-auth":             `{"sum":2,"uidMatches":true}`,
		"callable-admin-write":         `{"written":{"by":"writeDoc","value":42}}`,
	}})
	// The function's Admin SDK write went through pyric's Firestore.
	var wrote, invoked bool
	for _, ev := range b.Sandbox.Events().History() {
		if ev.Kind == event.KindCommit && strings.HasSuffix(ev.Path, "fromFunctions/d1") {
			wrote = true
		}
		if ev.Kind == event.KindInvocation && ev.Invocation.Function == "writeDoc" && ev.Invocation.Outcome == "ok" {
			invoked = true
		}
	}
	if !wrote || !invoked {
		t.Errorf("commit of fromFunctions/d1 seen: %v, writeDoc invocation event: %v", wrote, invoked)
	}
}

// testPlainHTTP checks the answers to bad input and misbehaving functions
// over plain HTTP, each the emulator's status and body (observed with
// firebase-tools 15.34.2) unless noted, and that the port stays
// responsive after each.
func testPlainHTTP(t *testing.T, b *backend.Backend) {
	base := "http://" + b.Addr(backend.Functions)
	huge := strings.Repeat("a", 33<<20)
	cases := []struct {
		name, method, path, ctype, body string
		header                          map[string]string
		status                          int
		want                            string // the body, or a prefix ending in "…"
		wantHeader                      map[string]string
	}{
		{name: "missing function", method: "GET", path: "/demo-pyric-fn/us-central1/nope", status: 404,
			want: "Function us-central1-nope does not exist, valid functions are: …"},
		{name: "wrong region", method: "GET", path: "/demo-pyric-fn/europe-west1/hello", status: 404,
			want: "Function europe-west1-hello does not exist, valid functions are: …"},
		{name: "wrong project", method: "GET", path: "/demo-other/us-central1/hello", status: 404, want: "Not Found"},
		{name: "callable without data", method: "POST", path: "/demo-pyric-fn/us-central1/whoami", ctype: "application/json", body: `{"x":1}`,
			status: 400, want: `{"error":{"message":"Bad Request","status":"INVALID_ARGUMENT"}}`},
		{name: "callable not JSON", method: "POST", path: "/demo-pyric-fn/us-central1/whoami", ctype: "text/plain", body: "hi",
			status: 400, want: `{"error":{"message":"Bad Request","status":"INVALID_ARGUMENT"}}`},
		{name: "callable GET", method: "GET", path: "/demo-pyric-fn/us-central1/whoami",
			status: 400, want: `{"error":{"message":"Bad Request","status":"INVALID_ARGUMENT"}}`},
		{name: "callable throws", method: "POST", path: "/demo-pyric-fn/us-central1/callableThrows", ctype: "application/json", body: `{"data":{}}`,
			status: 500, want: `{"error":{"message":"INTERNAL","status":"INTERNAL"}}`},
		{name: "onRequest throws", method: "GET", path: "/demo-pyric-fn/us-central1/throws", status: 500, want: "Internal Server Error"},
		{name: "onRequest rejects", method: "GET", path: "/demo-pyric-fn/us-central1/rejects", status: 500, want: "Internal Server Error"},
		{name: "process.exit", method: "GET", path: "/demo-pyric-fn/us-central1/exits", status: 500, want: functions.CrashBody},
		// Production's answer past timeoutSeconds (the emulator's is 500
		// {"code":"ECONNRESET"}).
		{name: "hang past timeout", method: "GET", path: "/demo-pyric-fn/us-central1/hangs", status: 504, want: functions.TimeoutMessage + "\n"},
		{name: "huge body", method: "POST", path: "/demo-pyric-fn/us-central1/hello", ctype: "text/plain", body: huge,
			status: 413, want: "PayloadTooLargeError: request entity too large"},
		{name: "huge callable", method: "POST", path: "/demo-pyric-fn/us-central1/whoami", ctype: "application/json", body: `{"data":"` + huge + `"}`,
			status: 413, want: "PayloadTooLargeError: request entity too large"},
		{name: "CORS preflight", method: "OPTIONS", path: "/demo-pyric-fn/us-central1/hello",
			header: map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"},
			status: 204, want: "", wantHeader: map[string]string{"Access-Control-Allow-Origin": "http://localhost:3000", "Access-Control-Allow-Headers": "content-type"}},
		{name: "v1 in its region", method: "PUT", path: "/demo-pyric-fn/europe-west1/helloV1/x?y=1", status: 201, want: "v1 PUT /x?y=1"},
		{name: "group member", method: "GET", path: "/demo-pyric-fn/us-central1/group-inner", status: 200, want: "inner"},
		{name: "urlencoded and rawBody", method: "POST", path: "/demo-pyric-fn/us-central1/hello", ctype: "application/x-www-form-urlencoded", body: "a=1&b=two",
			status: 200, want: `{"method":"POST","path":"/","url":"/","query":{},"body":{"a":"1","b":"two"},"rawBody":"YT0xJmI9dHdv",…`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
			if c.ctype != "" {
				req.Header.Set("Content-Type", c.ctype)
			}
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ok := string(body) == c.want
			if prefix, cut := strings.CutSuffix(c.want, "…"); cut {
				ok = strings.HasPrefix(string(body), prefix)
			}
			if resp.StatusCode != c.status || !ok {
				t.Errorf("%d %.300q, want %d %q", resp.StatusCode, body, c.status, c.want)
			}
			for k, v := range c.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			// Pyric and the functions stay responsive.
			r2, err := http.Get(base + "/demo-pyric-fn/us-central1/group-inner")
			if err != nil {
				t.Fatal(err)
			}
			b2, _ := io.ReadAll(r2.Body)
			r2.Body.Close()
			if r2.StatusCode != 200 || string(b2) != "inner" {
				t.Errorf("afterwards: %d %q", r2.StatusCode, b2)
			}
		})
	}
}

// syncLog is a log sink the test reads while the workers write.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// With LoadInBackground the functions port serves before the codebases
// loaded: a callable posted at once waits for its codebase's load (the
// cold start) and gets its result; a codebase that throws at load is
// reported with its error and file, its functions answer the emulator's
// 404 once the loads ended, and /backends says when they did.
func TestCallDuringLoad(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	broken := t.TempDir()
	if err := os.Symlink(filepath.Join(e2etest.FunctionsDir(), "node_modules"), filepath.Join(broken, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "package.json"), []byte(`{"main":"index.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "index.js"), []byte("exports.gone = 1;\nthrow new Error('broken at load');\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cbs, err := functions.ParseConfig(json.RawMessage(`[{"source":"js","codebase":"js"}]`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	cbs = append(cbs, functions.Codebase{Name: "broken", Source: broken, Ignore: functions.DefaultIgnore})
	logs := &syncLog{}
	b, err := backend.Start(backend.Options{
		Sandbox: sandbox.Options{Project: project},
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Log: logs, Poll: -1},
			LoadInBackground: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	base := "http://" + b.Addr(backend.Functions)
	post := func(path, body string) (int, string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(got)
	}
	// A write made while the functions load fires the trigger they load
	// (held until then), as a test suite started beside serve expects.
	docs := "http://" + b.Addr(backend.Firestore) + "/v1/projects/" + project + "/databases/(default)/documents/"
	firestoreDo := func(method, path, body string) int {
		req, _ := http.NewRequest(method, docs+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer owner")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	select {
	case <-b.Functions().Loaded():
		t.Fatal("the functions loaded before the test's write: it proves nothing")
	default:
	}
	if st := firestoreDo("PATCH", "drafts/early", `{"fields":{"text":{"stringValue":"written during the load"}}}`); st != 200 {
		t.Fatalf("write during the load: %d", st)
	}
	if status, body := post("/"+project+"/us-central1/add", `{"data":{"a":2,"b":3}}`); status != 200 || body != `{"result":{"sum":5,"uid":null}}` {
		t.Fatalf("callable posted during the load: %d %s\n%s", status, body, logs)
	}
	if err := b.FunctionsLoaded(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !await.Poll(20*time.Second, func() bool { return firestoreDo("GET", "published/early", "") == 200 }) {
		t.Errorf("the write made during the load fired no trigger\n%s", logs)
	}
	if out := logs.String(); !strings.Contains(out, "Error: broken at load") || !strings.Contains(out, filepath.Join(broken, "index.js")+":2") {
		t.Errorf("the load failure does not name the error and its file:\n%s", out)
	}
	if status, body := post("/"+project+"/us-central1/gone", `{"data":{}}`); status != 404 || !strings.Contains(body, "Function us-central1-gone does not exist") {
		t.Errorf("a function of the broken codebase: %d %s", status, body)
	}
	resp, err := http.Get(base + "/backends")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var listed struct {
		Backends []struct {
			Codebase         string               `json:"codebase"`
			FunctionTriggers []functions.Endpoint `json:"functionTriggers"`
		} `json:"backends"`
		Loading bool `json:"loading"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, be := range listed.Backends {
		counts[be.Codebase] = len(be.FunctionTriggers)
	}
	if listed.Loading || len(counts) != 2 || counts["js"] < 10 || counts["broken"] != 0 {
		t.Errorf("GET /backends after the loads: loading %v, functions by codebase %v", listed.Loading, counts)
	}
}
