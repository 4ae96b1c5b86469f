package functionsserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/functions"
)

// fakeEngine records what the adapter asked of it.
type fakeEngine struct {
	mu        sync.Mutex
	loaded    chan struct{} // nil: loaded
	eps       []functions.Endpoint
	served    string // id + " " + path
	delivered string // id + " " + body
}

func (f *fakeEngine) Project() string { return "demo-x" }
func (f *fakeEngine) Codebases() []functions.Codebase {
	return []functions.Codebase{{Name: "default", Source: "/app/functions"}}
}
func (f *fakeEngine) Loaded() <-chan struct{} {
	if f.loaded == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return f.loaded
}
func (f *fakeEngine) Endpoints() []functions.Endpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.eps
}
func (f *fakeEngine) ServeFunction(w http.ResponseWriter, r *http.Request, id, path string) {
	f.served = id + " " + path
	w.WriteHeader(299)
}
func (f *fakeEngine) DeliverEvent(ctx context.Context, id string, payload []byte) error {
	f.delivered = id + " " + string(payload)
	return nil
}

func newFake() *fakeEngine {
	return &fakeEngine{eps: []functions.Endpoint{
		{ID: "hello", Regions: []string{"us-central1"}, HTTPS: &functions.HTTPSTrigger{}},
		{ID: "group-inner", Regions: []string{"us-central1", "europe-west1"}, Callable: &functions.CallableTrigger{}},
		{ID: "onNote", Regions: []string{"us-central1"}, Event: &functions.EventTrigger{EventType: "t"}},
	}}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	const valid = "valid functions are: us-central1-hello, us-central1-group-inner, europe-west1-group-inner, us-central1-onNote"
	cases := []struct {
		name, method, url string
		status            int
		body, served      string
		delivered         string
	}{
		{name: "function root", method: "GET", url: "/demo-x/us-central1/hello", status: 299, served: "hello /"},
		{name: "trailing slash", method: "GET", url: "/demo-x/us-central1/hello/", status: 299, served: "hello /"},
		{name: "subpath and query", method: "POST", url: "/demo-x/us-central1/hello/a/b?x=1", status: 299, served: "hello /a/b"},
		{name: "group member other region", method: "POST", url: "/demo-x/europe-west1/group-inner", status: 299, served: "group-inner /"},
		{name: "missing function", method: "GET", url: "/demo-x/us-central1/nope", status: 404,
			body: "Function us-central1-nope does not exist, " + valid},
		{name: "wrong region", method: "GET", url: "/demo-x/europe-west1/hello", status: 404,
			body: "Function europe-west1-hello does not exist, " + valid},
		{name: "wrong project", method: "GET", url: "/other/us-central1/hello", status: 404, body: "Not Found"},
		{name: "too short", method: "GET", url: "/demo-x/us-central1", status: 404, body: "Not Found"},
		{name: "root", method: "GET", url: "/", status: 404, body: "Not Found"},
		{name: "event function URL", method: "POST", url: "/demo-x/us-central1/onNote", status: 200,
			body: `{"status":"acknowledged"}`, delivered: `onNote {"a":1}`},
		{name: "background route", method: "POST", url: "/functions/projects/demo-x/triggers/us-central1-onNote", status: 200,
			body: `{"status":"acknowledged"}`, delivered: `onNote {"a":1}`},
		{name: "background route unknown", method: "POST", url: "/functions/projects/demo-x/triggers/us-central1-nope", status: 404,
			body: "Function us-central1-nope does not exist, " + valid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			w := httptest.NewRecorder()
			NewHandler(f).ServeHTTP(w, httptest.NewRequest(c.method, c.url, strings.NewReader(`{"a":1}`)))
			body, _ := io.ReadAll(w.Body)
			if w.Code != c.status || (c.body != "" && string(body) != c.body) {
				t.Errorf("%d %q, want %d %q", w.Code, body, c.status, c.body)
			}
			if f.served != c.served || f.delivered != c.delivered {
				t.Errorf("served %q delivered %q, want %q %q", f.served, f.delivered, c.served, c.delivered)
			}
		})
	}
}

// While the codebases load, the port answers its own routes at once and
// a request to a function waits for the load: served once the function
// loaded, the emulator's 404 when the load did not bring it.
func TestRequestDuringLoadWaitsForIt(t *testing.T) {
	t.Parallel()
	f := newFake()
	all := f.eps
	for i := range all {
		all[i].Codebase = "default"
	}
	f.eps = nil
	f.loaded = make(chan struct{})
	h := NewHandler(f)
	serve := func(method, url, body string) <-chan *httptest.ResponseRecorder {
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(method, url, strings.NewReader(body)))
			done <- rec
		}()
		return done
	}
	call := serve("POST", "/demo-x/us-central1/hello/x", "{}")
	missing := serve("GET", "/demo-x/us-central1/nope", "")
	event := serve("POST", "/functions/projects/demo-x/triggers/us-central1-onNote", `{"a":1}`)

	// The port's own routes do not wait.
	rec := <-serve("GET", "/backends", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"loading":true`) ||
		!strings.Contains(rec.Body.String(), `"directory":"/app/functions"`) || !strings.Contains(rec.Body.String(), `"functionTriggers":[]`) {
		t.Fatalf("GET /backends while loading: %d %s", rec.Code, rec.Body)
	}
	if rec := <-serve("GET", "/", ""); rec.Code != 404 {
		t.Fatalf("GET / while loading: %d %s", rec.Code, rec.Body)
	}
	select {
	case rec := <-call:
		t.Fatalf("a call answered before the load ended: %d %s", rec.Code, rec.Body)
	case rec := <-missing:
		t.Fatalf("a missing function answered before the load ended: %d %s", rec.Code, rec.Body)
	case <-time.After(50 * time.Millisecond): // they are waiting
	}

	f.mu.Lock()
	f.eps = all
	f.mu.Unlock()
	close(f.loaded)
	if rec := <-call; rec.Code != 299 || f.served != "hello /x" {
		t.Fatalf("call after the load: %d %s, served %q", rec.Code, rec.Body, f.served)
	}
	if rec := <-missing; rec.Code != 404 || !strings.Contains(rec.Body.String(), "Function us-central1-nope does not exist") {
		t.Fatalf("missing function after the load: %d %s", rec.Code, rec.Body)
	}
	if rec := <-event; rec.Code != 200 || f.delivered != `onNote {"a":1}` {
		t.Fatalf("event after the load: %d %s, delivered %q", rec.Code, rec.Body, f.delivered)
	}
	rec = <-serve("GET", "/backends", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"loading":false`) || !strings.Contains(rec.Body.String(), `"id":"hello"`) {
		t.Fatalf("GET /backends after the load: %d %s", rec.Code, rec.Body)
	}
}
