package studio_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
)

// startFunctions serves e2e/functions/js with Firestore and Auth.
func startFunctions(t *testing.T) *env {
	t.Helper()
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`{"source":"js","codebase":"js"}`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	e := startWith(t, backend.Options{Sandbox: sandbox.Options{Project: "demo-fn-studio"},
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Poll: -1}}},
		backend.Firestore, backend.Auth, backend.Functions)
	if e.b.Functions() == nil || len(e.b.Functions().Endpoints()) < 5 {
		t.Fatal("the functions did not load")
	}
	return e
}

type fnPage struct {
	Project   string `json:"project"`
	URL       string `json:"url"`
	Functions []struct {
		functions.Summary
		Invocations []struct {
			ID           string  `json:"id"`
			Function     string  `json:"function"`
			TriggerType  string  `json:"triggerType"`
			CauseEventID string  `json:"causeEventId"`
			Outcome      string  `json:"outcome"`
			InvocationMs float64 `json:"invocationMs"`
			Error        string  `json:"error"`
			Logs         []struct{ Severity, Text string }
		} `json:"invocations"`
		InvocationCount int `json:"invocationCount"`
	} `json:"functions"`
}

func (p fnPage) fn(t *testing.T, id string) int {
	t.Helper()
	for i, f := range p.Functions {
		if f.ID == id {
			return i
		}
	}
	t.Fatalf("function %s not listed: %+v", id, p.Functions)
	return -1
}

// TestFunctionsAPI drives the Functions page's API against real
// functions: the listing (trigger, resource, URL), invocations of an
// HTTPS function and a callable with a body, a trigger's invocation
// listed with its cause and logs, re-delivery of its recorded payload,
// and the errors of bad invocations.
func TestFunctionsAPI(t *testing.T) {
	e := startFunctions(t)
	var page fnPage
	if st := e.do(t, "GET", "/api/functions", nil, &page); st != 200 {
		t.Fatalf("GET /api/functions: %d", st)
	}
	base := "http://" + e.b.Addr(backend.Functions)
	if page.Project != "demo-fn-studio" || page.URL != base {
		t.Fatalf("project %q url %q, want demo-fn-studio %s", page.Project, page.URL, base)
	}
	hello := page.Functions[page.fn(t, "hello")]
	if hello.Kind != "https" || hello.URL != base+"/demo-fn-studio/us-central1/hello" {
		t.Errorf("hello: %+v", hello.Summary)
	}
	if v1 := page.Functions[page.fn(t, "helloV1")]; v1.URL != base+"/demo-fn-studio/europe-west1/helloV1" || v1.Platform != "gcfv1" {
		t.Errorf("helloV1: %+v", v1.Summary)
	}
	if g := page.Functions[page.fn(t, "group-inner")]; !strings.HasSuffix(g.URL, "/us-central1/group-inner") {
		t.Errorf("group-inner: %+v", g.Summary)
	}
	note := page.Functions[page.fn(t, "onNote")]
	if note.Kind != "event" || note.EventType != "google.cloud.firestore.document.v1.created" || !strings.Contains(note.Resource, "document=notes/{id}") || note.URL != "" {
		t.Errorf("onNote: %+v", note.Summary)
	}

	// An HTTPS function with a method, a path and a JSON body.
	var res functions.InvokeResult
	if st := e.do(t, "POST", "/api/functions/hello/invoke", map[string]any{"method": "PUT", "path": "/some/where?x=1", "body": map[string]any{"a": 1}}, &res); st != 200 {
		t.Fatalf("invoke hello: %d %+v", st, res)
	}
	var echoed struct {
		Method string         `json:"method"`
		Path   string         `json:"path"`
		Query  map[string]any `json:"query"`
		Body   map[string]any `json:"body"`
	}
	if err := json.Unmarshal(res.Body, &echoed); err != nil || res.Status != 200 || echoed.Method != "PUT" || echoed.Path != "/some/where" || echoed.Query["x"] != "1" || echoed.Body["a"] != float64(1) {
		t.Errorf("hello answered %d %s (%v)", res.Status, res.Body, err)
	}
	// A text answer comes back as a JSON string.
	if st := e.do(t, "POST", "/api/functions/helloV1/invoke", map[string]any{"path": "/p"}, &res); st != 200 || res.Status != 201 || string(res.Body) != `"v1 GET /p"` {
		t.Errorf("helloV1: %d %d %s", st, res.Status, res.Body)
	}
	// A callable with {data}, and its HttpsError.
	if st := e.do(t, "POST", "/api/functions/add/invoke", map[string]any{"data": map[string]any{"a": 2, "b": 3}}, &res); st != 200 || res.Status != 200 || string(res.Body) != `{"result":{"sum":5,"uid":null}}` {
		t.Errorf("add: %d %d %s", st, res.Status, res.Body)
	}
	if st := e.do(t, "POST", "/api/functions/add/invoke", map[string]any{"data": map[string]any{"a": "x"}}, &res); st != 200 || res.Status != 400 || !strings.Contains(string(res.Body), `"status":"INVALID_ARGUMENT"`) {
		t.Errorf("add with bad data: %d %d %s", st, res.Status, res.Body)
	}

	// Bad invocations.
	var ae struct{ Error string }
	for _, c := range []struct {
		path string
		body any
		want int
		msg  string
	}{
		{"/api/functions/nope/invoke", map[string]any{}, 404, "function not found: nope"},
		{"/api/functions/hello/invoke", map[string]any{"method": "BREW"}, 400, `method "BREW"`},
		{"/api/functions/onNote/invoke", map[string]any{}, 400, "no payload given"},
		{"/api/functions/hello/invoke", "not an object", 400, "invalid JSON body"},
	} {
		ae.Error = ""
		if st := e.do(t, "POST", c.path, c.body, &ae); st != c.want || !strings.Contains(ae.Error, c.msg) {
			t.Errorf("POST %s %v: %d %q, want %d %q", c.path, c.body, st, ae.Error, c.want, c.msg)
		}
	}
	if st := e.do(t, "GET", "/api/functions/onNote/payload", nil, &ae); st != 404 || !strings.Contains(ae.Error, "no payload was delivered") {
		t.Errorf("payload before any delivery: %d %q", st, ae.Error)
	}

	// A write fires onNote: its invocation is listed with the write as
	// its cause, its logs and outcome.
	if st := e.do(t, "PUT", "/api/firestore/document?path=notes/n1", map[string]any{"data": map[string]any{"text": "hi"}}, nil); st != 200 {
		t.Fatalf("write: %d", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.b.Functions().TriggersIdle(ctx); err != nil {
		t.Fatal(err)
	}
	var inv struct {
		ID, CauseEventID, Outcome string
		Logs                      []struct{ Severity, Text string }
	}
	await.Until(t, 30*time.Second, func() bool {
		page = fnPage{}
		e.do(t, "GET", "/api/functions", nil, &page)
		n := page.Functions[page.fn(t, "onNote")]
		if len(n.Invocations) == 0 {
			return false
		}
		i := n.Invocations[0]
		inv.ID, inv.CauseEventID, inv.Outcome, inv.Logs = i.ID, i.CauseEventID, i.Outcome, i.Logs
		if !n.HasPayload {
			t.Error("onNote ran but hasPayload is false")
		}
		return true
	}, "onNote's invocation to be listed")
	if inv.Outcome != "ok" {
		t.Errorf("onNote invocation: %+v", inv)
	}
	var cause struct {
		Event struct {
			Kind, Path string
		}
	}
	if inv.CauseEventID == "" || e.do(t, "GET", "/api/events/"+inv.CauseEventID, nil, &cause) != 200 || cause.Event.Kind != "commit" || !strings.HasSuffix(cause.Event.Path, "notes/n1") {
		t.Errorf("cause %q: %+v", inv.CauseEventID, cause)
	}

	// The events API finds the runs a write caused (the Traffic view's
	// chain), the Studio's write included.
	var caused struct {
		Events []struct {
			ID       string `json:"id"`
			Kind     string `json:"kind"`
			Function string `json:"function"`
		} `json:"events"`
	}
	if st := e.do(t, "GET", "/api/events?studio=true&cause="+inv.CauseEventID, nil, &caused); st != 200 || len(caused.Events) != 1 || caused.Events[0].ID != inv.ID || caused.Events[0].Function != "onNote" {
		t.Errorf("events caused by %s: %d %+v", inv.CauseEventID, st, caused.Events)
	}

	// Its payload is recorded; re-delivering it runs onNote again.
	var pl struct {
		Payload map[string]any `json:"payload"`
	}
	if st := e.do(t, "GET", "/api/functions/onNote/payload", nil, &pl); st != 200 || pl.Payload["type"] != "google.cloud.firestore.document.v1.created" {
		t.Fatalf("payload: %d %v", st, pl.Payload)
	}
	if st := e.do(t, "POST", "/api/functions/onNote/invoke", map[string]any{}, &res); st != 200 || res.Outcome != "ok" {
		t.Fatalf("re-deliver: %d %+v", st, res)
	}
	if st := e.do(t, "POST", "/api/functions/onNote/invoke", map[string]any{"payload": pl.Payload}, &res); st != 200 || res.Outcome != "ok" {
		t.Fatalf("deliver given: %d %+v", st, res)
	}
	page = fnPage{}
	e.do(t, "GET", "/api/functions", nil, &page)
	if n := page.Functions[page.fn(t, "onNote")]; n.InvocationCount != 3 || n.Invocations[0].CauseEventID != "" {
		t.Errorf("after re-delivery: %d invocations, newest %+v", n.InvocationCount, n.Invocations)
	}
	// A function's log lines reach each invocation's event.
	for _, i := range page.Functions[page.fn(t, "onNote")].Invocations {
		if len(i.Logs) == 0 || i.Logs[len(i.Logs)-1].Text != "note n1" {
			t.Errorf("onNote invocation %s without its log line: %+v", i.ID, i.Logs)
		}
	}
	if h := page.Functions[page.fn(t, "hello")]; h.InvocationCount != 1 || h.Invocations[0].Outcome != "ok" {
		t.Errorf("hello invocations: %+v", h.Invocations)
	}
}

// TestTrafficChain follows the events API's cause links the Traffic
// view follows: a client's write → the function run it caused → the
// write that run made through the Admin SDK, which names the run.
func TestTrafficChain(t *testing.T) {
	e := startFunctions(t)
	if st := e.do(t, "PUT", "/api/firestore/document?path=drafts/d1", map[string]any{"data": map[string]any{"text": "hi"}}, nil); st != 200 {
		t.Fatalf("write: %d", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.b.Functions().TriggersIdle(ctx); err != nil {
		t.Fatal(err)
	}
	type ev struct {
		ID           string   `json:"id"`
		Kind         string   `json:"kind"`
		Path         string   `json:"path"`
		Function     string   `json:"function"`
		InvocationID string   `json:"invocationId"`
		Writes       []string `json:"writes"`
		Actor        struct {
			Invocation string `json:"invocation"`
		} `json:"actor"`
	}
	var page struct{ Events []ev }
	if st := e.do(t, "GET", "/api/events?studio=true&kind=commit&path=drafts/d1", nil, &page); st != 200 || len(page.Events) != 1 {
		t.Fatalf("the draft's commit: %d %+v", st, page.Events)
	}
	draft := page.Events[0]
	page.Events = nil
	if st := e.do(t, "GET", "/api/events?studio=true&cause="+draft.ID, nil, &page); st != 200 || len(page.Events) != 1 || page.Events[0].Function != "publishDraft" {
		t.Fatalf("runs the draft caused: %d %+v", st, page.Events)
	}
	run := page.Events[0]
	if len(run.Writes) != 1 || run.InvocationID == "" {
		t.Fatalf("publishDraft's invocation lists writes %v", run.Writes)
	}
	page.Events = nil
	if st := e.do(t, "GET", "/api/events?cause="+run.ID, nil, &page); st != 200 || len(page.Events) != 1 {
		t.Fatalf("writes the run caused: %d %+v", st, page.Events)
	}
	w := page.Events[0]
	if w.ID != run.Writes[0] || w.Kind != "commit" || w.Path != "published/d1" || w.Actor.Invocation != run.InvocationID {
		t.Errorf("the run's write: %+v, want the commit of published/d1 by %s", w, run.InvocationID)
	}
	// The client's write names no run.
	if draft.Actor.Invocation != "" {
		t.Errorf("the draft's commit names invocation %q", draft.Actor.Invocation)
	}
}

// TestFunctionsAPIWithout answers 404 when no functions run.
func TestFunctionsAPIWithout(t *testing.T) {
	e := start(t, sandbox.Options{})
	var ae struct{ Error string }
	if st := e.do(t, "GET", "/api/functions", nil, &ae); st != 404 || !strings.Contains(ae.Error, "Cloud Functions is not running") {
		t.Errorf("%d %q", st, ae.Error)
	}
}
