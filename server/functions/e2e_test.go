package functionsserver_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
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

// TestClientSDK drives the functions port with firebase@12.19.0's
// connectFunctionsEmulator + httpsCallable and an Auth-emulator user, the
// answers compared with what firebase-tools' functions emulator gives the
// same calls.
func TestClientSDK(t *testing.T) {
	b := startBackend(t)
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
