package verify_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/verify"
)

// TestCaptureWithFunctions captures a session in which functions ran (a
// trigger fired by a write, a callable that writes through the Admin
// SDK): the fixture keeps the invocation events with their cause, they
// survive encoding, and verify replays the session ignoring them.
func TestCaptureWithFunctions(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`{"source":"js","codebase":"js"}`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]int{}
	for _, s := range backend.Catalog() {
		if s.Service != backend.Functions && s.Service != backend.Firestore && s.Service != backend.Auth {
			ports[s.Service] = backend.Disabled
		}
	}
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-fn-capture"}, Ports: ports,
		Firestore: backend.FirestoreOptions{Rules: "rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read: if true; } } }"},
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Poll: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := testfs.Of(b.Sandbox).Admin().SetDocument(ctx, "notes/n1", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	res, err := b.Functions().Invoke(ctx, "writeDoc", functions.InvokeRequest{Data: json.RawMessage(`{"id":"w1","value":7}`)})
	if err != nil || res.Status != 200 {
		t.Fatalf("writeDoc: %+v %v", res, err)
	}
	if err := b.Functions().TriggersIdle(ctx); err != nil {
		t.Fatal(err)
	}
	fx, err := capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History())
	if err != nil {
		t.Fatal(err)
	}
	data, err := capture.Encode(fx)
	if err != nil {
		t.Fatal(err)
	}
	fx, err = capture.DecodeWith(data, regs())
	if err != nil {
		t.Fatalf("the fixture does not decode: %v", err)
	}
	commits := map[string]string{}
	invoked := map[string]*event.Invocation{}
	for _, e := range fx.Events {
		switch e.Kind {
		case event.KindCommit:
			commits[e.ID] = e.Path
		case event.KindInvocation:
			invoked[e.Invocation.Function] = e.Invocation
		}
	}
	if inv := invoked["onNote"]; inv == nil || inv.Outcome != "ok" || commits[inv.CauseEventID] == "" {
		t.Errorf("onNote's invocation with its cause: %+v (commits %v)", inv, commits)
	}
	if inv := invoked["writeDoc"]; inv == nil || inv.Outcome != "ok" || inv.HTTPStatus != 200 {
		t.Errorf("writeDoc's invocation: %+v", inv)
	}
	wrote := false
	for _, p := range commits {
		wrote = wrote || p == "fromFunctions/w1" || len(p) > len("fromFunctions/w1") && p[len(p)-len("fromFunctions/w1"):] == "fromFunctions/w1"
	}
	if !wrote {
		t.Errorf("the function's write is not captured: %v", commits)
	}
	r, err := verify.Run(fx, verify.Options{Registrations: regs()})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !r.OK {
		t.Errorf("verify of a session with invocations: %+v", r)
	}
}
