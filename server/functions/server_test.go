package functionsserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/functions"
)

// fakeEngine records what the adapter asked of it.
type fakeEngine struct {
	eps       []functions.Endpoint
	served    string // id + " " + path
	delivered string // id + " " + body
}

func (f *fakeEngine) Project() string                 { return "demo-x" }
func (f *fakeEngine) Endpoints() []functions.Endpoint { return f.eps }
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
