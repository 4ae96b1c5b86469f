package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
)

// syncBuffer is a log sink tests read while workers write.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{} // closed at the next Write; nil: nobody waits
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew != nil {
		close(s.grew)
		s.grew = nil
	}
	return s.b.Write(p)
}

// waitFor waits until the buffer holds sub, woken by each Write, and
// reports whether it did within d.
func (s *syncBuffer) waitFor(sub string, d time.Duration) bool {
	timeout := time.After(d)
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), sub) {
			s.mu.Unlock()
			return true
		}
		if s.grew == nil {
			s.grew = make(chan struct{})
		}
		grew := s.grew
		s.mu.Unlock()
		select {
		case <-grew:
		case <-timeout:
			return false
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startJS starts an engine over e2e/functions/js with Node 22.
func startJS(t *testing.T, bus *event.Bus, logs *syncBuffer) *functions.Engine {
	t.Helper()
	path := e2etest.NeedFunctions(t)
	t.Setenv("PATH", path)
	cbs, err := functions.ParseConfig(json.RawMessage(`{"source":"js","codebase":"js"}`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	var em event.Emitter = event.Discard
	if bus != nil {
		em = bus
	}
	e, err := functions.New(functions.Options{Codebases: cbs, Log: logs, Poll: -1}, service.Env{Project: "demo-fn", Events: em})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Start(functions.RuntimeEnv("demo-fn", map[string]string{"firestore": "127.0.0.1:1"})); err != nil {
		t.Fatal(err)
	}
	if len(e.Endpoints()) == 0 {
		t.Fatalf("no functions loaded; log:\n%s", logs)
	}
	return e
}

func call(t *testing.T, e *functions.Engine, id, method, path, ctype, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://127.0.0.1:5001/demo-fn/us-central1/"+id+path, strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	e.ServeFunction(w, r, id, r.URL.Path[len("/demo-fn/us-central1/"+id):])
	return w
}

func TestEngineRunsJSCodebase(t *testing.T) {
	logs := &syncBuffer{}
	bus := event.NewBus(event.Options{})
	e := startJS(t, bus, logs)
	ids := map[string]functions.Endpoint{}
	for _, ep := range e.Endpoints() {
		ids[ep.ID] = ep
	}
	for _, want := range []string{"hello", "helloV1", "whoami", "add", "writeDoc", "group-inner", "onNote", "hangs"} {
		if _, ok := ids[want]; !ok {
			t.Errorf("endpoint %s missing; have %v", want, ids)
		}
	}
	if ep := ids["helloV1"]; ep.Platform != functions.GCFv1 || ep.Regions[0] != "europe-west1" || ep.HTTPS == nil {
		t.Errorf("helloV1 = %+v", ep)
	}
	if ep := ids["onNote"]; ep.Event == nil || ep.Event.EventType != "google.cloud.firestore.document.v1.created" || ep.Event.EventFilterPathPatterns["document"] != "notes/{id}" {
		t.Errorf("onNote = %+v", ep.Event)
	}
	if ep := ids["hangs"]; ep.Timeout != 2*time.Second {
		t.Errorf("hangs timeout = %v", ep.Timeout)
	}
	if ep := ids["group-inner"]; ep.EntryPoint != "group.inner" {
		t.Errorf("group-inner entry point = %q", ep.EntryPoint)
	}

	w := call(t, e, "hello", "POST", "/sub/path?x=1", "application/json", `{"a":1}`)
	var got struct {
		Method, Path, URL string
		Query             map[string]string
		Body              map[string]any
		Greeting          string
		Env               map[string]string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("hello: %d %s", w.Code, w.Body)
	}
	if got.Path != "/sub/path" || got.URL != "/sub/path?x=1" || got.Query["x"] != "1" || got.Body["a"] != float64(1) {
		t.Errorf("hello saw %+v", got)
	}
	if got.Greeting != "hello from .env" || got.Env["LOCAL_ONLY"] != "from .env.local" || got.Env["FUNCTIONS_EMULATOR"] != "true" ||
		got.Env["TZ"] != "UTC" || got.Env["GCLOUD_PROJECT"] != "demo-fn" || got.Env["K_SERVICE"] != "hello" ||
		got.Env["FIRESTORE_EMULATOR_HOST"] != "127.0.0.1:1" || !strings.Contains(got.Env["CLOUD_RUNTIME_CONFIG"], "runtime-config") {
		t.Errorf("hello env %+v greeting %q", got.Env, got.Greeting)
	}
	// The invocation's event follows its response; its log lines were
	// printed before it.
	var inv *event.Invocation
	for deadline := time.Now().Add(10 * time.Second); inv == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, ev := range bus.History() {
			if ev.Kind == event.KindInvocation && ev.Invocation.Function == "hello" {
				inv = ev.Invocation
			}
		}
	}
	if !strings.Contains(logs.String(), "functions[hello]: hello called") {
		t.Errorf("log lacks the prefixed logger line:\n%s", logs)
	}
	if inv == nil || inv.Outcome != "ok" || inv.HTTPStatus != 200 || len(inv.Logs) == 0 || inv.Logs[0].Text != "hello called" {
		t.Errorf("invocation event = %+v", inv)
	}

	// An event delivery names its cause; a throwing event function is a
	// *ScriptError and an error event.
	ctx := event.WithCause(context.Background(), "evt-7")
	if err := e.DeliverEvent(ctx, "onNote", []byte(`{"specversion":"1.0","id":"c1","source":"s","type":"google.cloud.firestore.document.v1.created"}`)); err != nil {
		t.Errorf("onNote: %v", err)
	}
	err := e.DeliverEvent(ctx, "customThrows", []byte(`{"specversion":"1.0","id":"c2","source":"s","type":"pyric.test.v1","data":{}}`))
	var se *functions.ScriptError
	if !errors.As(err, &se) || se.Message != "custom event c2 threw" || !strings.Contains(se.Stack, "index.js") {
		t.Errorf("customThrows: %#v", err)
	}
	byFn := map[string]*event.Event{}
	for _, ev := range bus.History() {
		if ev.Kind == event.KindInvocation {
			byFn[ev.Invocation.Function] = &ev
		}
	}
	if ev := byFn["onNote"]; ev == nil || ev.Invocation.CauseEventID != "evt-7" || ev.Invocation.Outcome != "ok" ||
		ev.Invocation.TriggerType != "google.cloud.firestore.document.v1.created" || ev.Method != "event" {
		t.Errorf("onNote event %+v", ev)
	}
	if ev := byFn["customThrows"]; ev == nil || ev.Invocation.Outcome != "error" || ev.Err == nil || ev.Err.Message != "custom event c2 threw" {
		t.Errorf("customThrows event %+v: invocation %+v, error %+v", ev, ev.Invocation, ev.Err)
	}
}

func TestEngineIsolation(t *testing.T) {
	logs := &syncBuffer{}
	e := startJS(t, nil, logs)
	cases := []struct {
		id     string
		status int
		body   string
	}{
		// firebase-functions' own error handler answers a thrown
		// onRequest as production does.
		{"throws", 500, "Internal Server Error"},
		{"rejects", 500, "Internal Server Error"},
		{"exits", 500, functions.CrashBody},
		{"hangs", 504, functions.TimeoutMessage},
	}
	for _, c := range cases {
		start := time.Now()
		w := call(t, e, c.id, "GET", "/", "", "")
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.body) {
			t.Errorf("%s: %d %q, want %d containing %q", c.id, w.Code, w.Body, c.status, c.body)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s took %s", c.id, d)
		}
		t.Logf("%s answered in %s", c.id, time.Since(start))
		// Still serving afterwards.
		if w := call(t, e, "group-inner", "GET", "/", "", ""); w.Code != 200 || w.Body.String() != "inner" {
			t.Errorf("after %s: %d %q", c.id, w.Code, w.Body)
		}
	}
	// An event function that throws reports the error; the next event runs.
	err := e.DeliverEvent(context.Background(), "onNote", []byte(`{"specversion":"1.0","id":"1","source":"s","type":"google.cloud.firestore.document.v1.created","params":{"id":"n1"}}`))
	if err != nil {
		t.Errorf("DeliverEvent: %v", err)
	}
	if err := e.DeliverEvent(context.Background(), "hello", nil); !errors.Is(err, functions.ErrNotEvent) {
		t.Errorf("DeliverEvent to an HTTPS function: %v", err)
	}
}

// An event in flight on a worker that another invocation crashes is
// delivered again on a fresh worker: no event is lost.
func TestEventSurvivesAnotherInvocationsCrash(t *testing.T) {
	logs := &syncBuffer{}
	e := startJS(t, nil, logs)
	errc := make(chan error, 1)
	go func() {
		errc <- e.DeliverEvent(context.Background(), "slowEvent", []byte(`{"specversion":"1.0","id":"e1","type":"google.cloud.firestore.document.v1.created","source":"s"}`))
	}()
	if !logs.waitFor("functions[slowEvent]: slowEvent started", 30*time.Second) {
		t.Fatalf("slowEvent never started:\n%s", logs)
	}
	if w := call(t, e, "exits", "GET", "/", "", ""); w.Code != 500 || w.Body.String() != functions.CrashBody {
		t.Errorf("exits: %d %q", w.Code, w.Body)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("the event was lost: %v\n%s", err, logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("DeliverEvent did not return")
	}
	if !strings.Contains(logs.String(), "functions[slowEvent]: slowEvent done") {
		t.Errorf("slowEvent never finished:\n%s", logs)
	}
	// The event function that throws reports its error.
	err := e.DeliverEvent(context.Background(), "onNote", []byte(`{"specversion":"1.0","id":"e2","type":"t","source":"s","data":null}`))
	if err != nil {
		t.Errorf("onNote without data: %v", err)
	}
}

// A change to the codebase reloads it; a module that throws at load is
// reported with its file and the previous version keeps serving.
func TestHotReload(t *testing.T) {
	path := e2etest.NeedFunctions(t)
	t.Setenv("PATH", path)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(e2etest.FunctionsDir(), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"main":"index.js"}`)
	write("index.js", `const {onRequest} = require("firebase-functions/v2/https"); exports.a = onRequest((q, s) => s.send("one"));`)
	logs := &syncBuffer{}
	e, err := functions.New(functions.Options{Codebases: []functions.Codebase{{Name: "hot", Source: dir, Ignore: functions.DefaultIgnore}}, Log: logs, Poll: 100 * time.Millisecond},
		service.Env{Project: "demo-fn"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Start(functions.RuntimeEnv("demo-fn", nil)); err != nil {
		t.Fatal(err)
	}
	if w := call(t, e, "a", "GET", "/", "", ""); w.Body.String() != "one" {
		t.Fatalf("a: %d %q\n%s", w.Code, w.Body, logs)
	}
	changed := e.Changed()
	write("index.js", `const {onRequest} = require("firebase-functions/v2/https"); exports.a = onRequest((q, s) => s.send("two")); exports.b = onRequest((q, s) => s.send("bee"));`)
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("no reload:\n%s", logs)
	}
	if w := call(t, e, "a", "GET", "/", "", ""); w.Body.String() != "two" {
		t.Errorf("a after reload: %d %q", w.Code, w.Body)
	}
	if w := call(t, e, "b", "GET", "/", "", ""); w.Body.String() != "bee" {
		t.Errorf("b after reload: %d %q", w.Code, w.Body)
	}
	write("index.js", "exports.a = 1;\nthrow new Error('broken at load');\n")
	logs.waitFor("keeps serving its previous version", 30*time.Second)
	out := logs.String()
	if !strings.Contains(out, "Error: broken at load") || !strings.Contains(out, filepath.Join(dir, "index.js")+":2") {
		t.Errorf("the load failure does not name the error and its file:\n%s", out)
	}
	if w := call(t, e, "a", "GET", "/", "", ""); w.Body.String() != "two" {
		t.Errorf("a after a failed reload: %d %q", w.Code, w.Body)
	}
}

// A v2 function runs concurrent invocations in one worker; a v1 function
// (one request per instance) never runs two at once in a worker.
func TestConcurrency(t *testing.T) {
	e := startJS(t, nil, &syncBuffer{})
	type run struct{ Pid, Start, End int64 }
	both := func(id string) [2]run {
		var out [2]run
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := call(t, e, id, "GET", "/", "", "")
				if err := json.Unmarshal(w.Body.Bytes(), &out[i]); err != nil {
					t.Errorf("%s: %d %q", id, w.Code, w.Body)
				}
			}()
		}
		wg.Wait()
		return out
	}
	overlap := func(r [2]run) bool { return r[0].Start < r[1].End && r[1].Start < r[0].End }
	if r := both("pidV2"); r[0].Pid != r[1].Pid || !overlap(r) {
		t.Errorf("pidV2 runs %+v: want both at once in one worker", r)
	}
	if r := both("pidV1"); r[0].Pid == r[1].Pid && overlap(r) {
		t.Errorf("pidV1 runs %+v: two at once in one worker", r)
	}
}

// StartLoading returns while the codebase loads; an engine closed
// during the load ends it (Loaded closes, the loading worker is killed)
// without reporting it as a load failure, and an engine closed without
// starting closes Loaded too, so nothing waits on it forever.
func TestCloseDuringLoad(t *testing.T) {
	path := e2etest.NeedFunctions(t)
	t.Setenv("PATH", path)
	cbs, err := functions.ParseConfig(json.RawMessage(`{"source":"js","codebase":"js"}`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	e, err := functions.New(functions.Options{Codebases: cbs, Log: logs, Poll: -1}, service.Env{Project: "demo-fn"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.StartLoading(functions.RuntimeEnv("demo-fn", nil)); err != nil {
		t.Fatal(err)
	}
	if err := e.StartLoading(functions.RuntimeEnv("demo-fn", nil)); err == nil {
		t.Error("a second StartLoading was accepted")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.Loaded():
	default:
		t.Fatal("Loaded is still open after Close")
	}
	if out := logs.String(); strings.Contains(out, "failed to load") {
		t.Errorf("closing during the load was reported as a failure:\n%s", out)
	}

	never, err := functions.New(functions.Options{Codebases: cbs, Poll: -1}, service.Env{Project: "demo-fn"})
	if err != nil {
		t.Fatal(err)
	}
	never.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := never.WaitLoaded(ctx); err != nil {
		t.Fatalf("WaitLoaded on an engine closed without starting: %v", err)
	}
}
