package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
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
		Query           map[string]string
		Body            map[string]any
		Greeting        string
		Env             map[string]string
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
	if !strings.Contains(logs.String(), "functions[hello]: hello called") {
		t.Errorf("log lacks the prefixed logger line:\n%s", logs)
	}
	var inv *event.Invocation
	for _, ev := range bus.History() {
		if ev.Kind == event.KindInvocation && ev.Invocation.Function == "hello" {
			inv = ev.Invocation
		}
	}
	if inv == nil || inv.Outcome != "ok" || inv.HTTPStatus != 200 || len(inv.Logs) == 0 || inv.Logs[0].Text != "hello called" {
		t.Errorf("invocation event = %+v", inv)
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
		{"exits", 500, "process.exit(3)"},
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
	_ = io.EOF
	_ = filepath.Join
	_ = http.StatusOK
}
