package studio_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/studio"
)

// toy is a service this package knows nothing about: it has a Studio
// page by implementing service.Studio, and nothing in studio/ names it.
type toy struct{ state string }

func (t *toy) Name() string                       { return "toy" }
func (t *toy) Reset() error                       { t.state = `{"n":0}`; return nil }
func (t *toy) Snapshot() (json.RawMessage, error) { return json.RawMessage(t.state), nil }
func (t *toy) Restore(s json.RawMessage) error    { t.state = string(s); return nil }
func (t *toy) StudioPages() []service.StudioPage {
	return []service.StudioPage{
		{Path: "/toy", Label: "Toy", Key: "y"},
		{Path: "/toy/queues", Label: "Toy queues", Page: "toyqueues"},
		// Left out: taken paths and the API's.
		{Path: "/traffic", Label: "Not the traffic"},
		{Path: "/api/toy", Label: "Not a page"},
		{Path: "toy", Label: "Not absolute"},
	}
}

var toyRegistration = service.Registration{Name: "toy", New: func(service.Env) (service.Service, error) {
	return &toy{state: `{"widgets":["a","b"]}`}, nil
}}

// beside is a service served beside the sandbox, as Hosting is.
type beside struct{}

func (beside) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/beside/", Label: "Beside", Page: "beside", Key: "h"}}
}

type route struct {
	Path, Label, Service, Page, Key string
}

func routesOf(t *testing.T, e *env) []route {
	t.Helper()
	var got struct{ Routes []route }
	if c := e.do(t, "GET", "/api/services", nil, &got); c != 200 {
		t.Fatalf("/api/services: %d", c)
	}
	return got.Routes
}

// TestRouteTableFromServices: the route table is Home, the pages of the
// running services that implement service.Studio in the sandbox's
// order, then Traffic and Rules. A toy service registered with the
// sandbox gets its page (and the generic state view) with no edit in
// studio/.
func TestRouteTableFromServices(t *testing.T) {
	e := startWith(t, backend.Options{Sandbox: sandbox.Options{Services: []service.Registration{toyRegistration}}}, backend.Firestore, backend.Auth)
	got := routesOf(t, e)
	var paths []string
	for _, r := range got {
		paths = append(paths, r.Path)
	}
	// Every service of the sandbox is in it, served on a port or not
	// (the Studio reaches the engines in process).
	want := []string{"/", "/firestore", "/auth", "/database", "/storage", "/ai", "/messaging", "/pubsub", "/toy", "/toy/queues", "/traffic", "/rules", "/conformance"}
	want = slices.DeleteFunc(want, func(p string) bool {
		svc := strings.TrimPrefix(p, "/")
		return !slices.ContainsFunc(e.b.Sandbox.Services(), func(s service.Service) bool { return s.Name() == svc }) &&
			!slices.Contains([]string{"", "traffic", "rules", "conformance", "toy/queues"}, svc)
	})
	if !slices.Equal(paths, want) {
		t.Fatalf("routes %q, want %q", paths, want)
	}
	toyAt := slices.IndexFunc(got, func(r route) bool { return r.Path == "/toy" })
	if r := got[toyAt]; r != (route{Path: "/toy", Label: "Toy", Service: "toy", Key: "y"}) {
		t.Fatalf("toy route %+v", r)
	}
	if r := got[toyAt+1]; r.Service != "toy" || r.Page != "toyqueues" || r.Label != "Toy queues" {
		t.Fatalf("second toy route %+v", r)
	}
	if r := got[0]; r.Service != "" || r.Page != "home" || r.Key != "h" {
		t.Fatalf("home route %+v", r)
	}
	if r := got[1]; r.Service != "firestore" || r.Page != "firestore" || r.Label != "Firestore" {
		t.Fatalf("firestore route %+v", r)
	}
	// The generic view reads the toy's state.
	var st struct {
		Service string
		State   map[string][]string
	}
	if c := e.do(t, "GET", "/api/service/toy", nil, &st); c != 200 || st.Service != "toy" || !slices.Equal(st.State["widgets"], []string{"a", "b"}) {
		t.Fatalf("/api/service/toy: %d %+v", c, st)
	}
}

// TestRouteTableBeside: a service served beside the sandbox (Hosting)
// joins the table through Options.Beside; its trailing slash is dropped
// and a key already taken (h is Home's) is not given twice.
func TestRouteTableBeside(t *testing.T) {
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	srv := httptest.NewServer(studio.New(studio.Options{Sandbox: sb, Beside: map[string]service.Studio{"beside": beside{}}}))
	t.Cleanup(srv.Close)
	got := routesOf(t, &env{srv: srv})
	at := slices.IndexFunc(got, func(r route) bool { return r.Service == "beside" })
	if at < 0 || got[at] != (route{Path: "/beside", Label: "Beside", Service: "beside", Page: "beside"}) {
		t.Fatalf("beside: %+v", got)
	}
	if got[len(got)-3].Path != "/traffic" || got[len(got)-2].Path != "/rules" || got[len(got)-1].Path != "/conformance" || at != len(got)-4 {
		t.Fatalf("order: %+v", got)
	}
}

// TestInspectorExplanation: the inspector's explanation of a denial is
// exactly what package explain renders, line for line the lines the app
// received in its PERMISSION_DENIED message (Firestore REST), and what
// the Studio's own app-lens write reports.
func TestInspectorExplanation(t *testing.T) {
	e := start(t, sandbox.Options{})
	doc := "http://" + e.b.Addr(backend.Firestore) + "/v1/projects/" + e.b.Project + "/databases/(default)/documents/posts/long"
	req, _ := http.NewRequest("PATCH", doc, strings.NewReader(`{"fields":{"title":{"stringValue":"`+strings.Repeat("t", 27)+`"}}}`))
	req.Header.Set("Authorization", "Bearer "+unsignedToken("alice"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var appErr struct {
		Error struct{ Message, Status string }
	}
	if err := json.Unmarshal(b, &appErr); err != nil || appErr.Error.Status != "PERMISSION_DENIED" {
		t.Fatalf("app write: %d %s", resp.StatusCode, b)
	}
	var p page
	e.do(t, "GET", "/api/events?service=firestore&verdict=deny&path=posts/long", nil, &p)
	if len(p.Events) != 1 {
		t.Fatalf("denials: %+v", p.Events)
	}
	ev := p.Events[0]
	var got struct {
		Event       event.Event
		Explanation []string
	}
	if c := e.do(t, "GET", "/api/events/"+ev.ID, nil, &got); c != 200 {
		t.Fatalf("event: %d", c)
	}
	want := explain.Lines(ev.Request.Decision, ev.Request.Trace)
	if len(want) == 0 || !slices.Equal(got.Explanation, want) {
		t.Fatalf("inspector explanation %q, explain renders %q", got.Explanation, want)
	}
	if want[0] != "request.resource.data.title.size() < 20 → 27 < 20 is false" {
		t.Fatalf("explanation %q", want)
	}
	lines := strings.Split(appErr.Error.Message, "\n")
	if len(lines) < len(want) || !slices.Equal(lines[len(lines)-len(want):], want) {
		t.Fatalf("the app's message %q does not end with the inspector's lines %q", appErr.Error.Message, want)
	}
	// The Studio's own write in the app lens says the same.
	var lens struct {
		Details struct{ Explanation []string }
	}
	if c := e.do(t, "PUT", "/api/firestore/document?path=posts/long2&as=alice", map[string]any{"data": map[string]any{"title": strings.Repeat("t", 27)}}, &lens); c != 403 ||
		!slices.Equal(lens.Details.Explanation, want) {
		t.Fatalf("app lens: %d %q", c, lens.Details.Explanation)
	}
	// An allowed request has no explanation.
	e.do(t, "GET", "/api/events?service=firestore&verdict=allow&studio=true", nil, &p)
	for _, a := range p.Events {
		var x map[string]any
		e.do(t, "GET", "/api/events/"+a.ID, nil, &x)
		if _, ok := x["explanation"]; ok {
			t.Fatalf("allowed %s has an explanation: %v", a.ID, x["explanation"])
		}
	}
}

// unsignedToken is an emulator ID token (alg none) for uid.
func unsignedToken(uid string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc([]byte(`{"sub":"`+uid+`","user_id":"`+uid+`"}`)) + "."
}

// TestInspectorExplanationDatabase: for a Realtime Database denial the
// inspector's lines are the ones the client's error message carries
// after production's wording (database.Denied.Message).
func TestInspectorExplanationDatabase(t *testing.T) {
	const rules = `{"rules": {"n": {".write": "auth != null && newData.val() < 3"}}}`
	e := startWith(t, backend.Options{DatabaseRules: rules}, backend.Firestore, backend.Database)
	db, _ := sandbox.Lookup[*database.Database](e.b.Sandbox)
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	_, err := db.Set(alice, database.DefaultNamespace(e.b.Project), "/n", 5, database.WriteOptions{})
	var denied *database.Denied
	if !errors.As(err, &denied) {
		t.Fatalf("set: %v", err)
	}
	var got struct{ Explanation []string }
	if c := e.do(t, "GET", "/api/events/"+lastRequest(t, e.b.Sandbox, "database", "set"), nil, &got); c != 200 {
		t.Fatalf("event: %d", c)
	}
	lines := strings.Split(denied.Message(), "\n")
	if len(got.Explanation) == 0 || !strings.Contains(got.Explanation[0], "5 < 3 is false") || !slices.Equal(lines[1:], got.Explanation) {
		t.Fatalf("inspector %q, the client's message %q", got.Explanation, lines)
	}
}

// TestFirestoreEndpointsWithoutFirestore: on a sandbox that runs no
// Firestore the Studio's Firestore endpoints answer 404 naming it, and the
// route table has no Firestore page.
func TestFirestoreEndpointsWithoutFirestore(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	srv := httptest.NewServer(studio.New(studio.Options{Sandbox: sb}))
	t.Cleanup(srv.Close)
	for _, target := range []string{"/api/firestore/collections", "/api/firestore/document?path=a/b", "/api/rules?service=firestore"} {
		resp, err := http.Get(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := "Firestore is not served"
		if strings.HasPrefix(target, "/api/rules") {
			want = `firestore\" with rules is served`
		}
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %s", target, resp.StatusCode, body)
		}
	}
	for _, r := range routesOf(t, &env{srv: srv}) {
		if r.Service == "firestore" {
			t.Errorf("a Firestore route without Firestore: %+v", r)
		}
	}
}
