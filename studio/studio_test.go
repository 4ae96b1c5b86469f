package studio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/studio"
)

const testRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow read: if true;
      allow create: if request.auth != null
        && request.resource.data.title.size() < 20;
    }
  }
}
`

type env struct {
	b   *backend.Backend
	srv *httptest.Server
}

func start(t testing.TB, opts sandbox.Options) *env {
	t.Helper()
	return startWith(t, backend.Options{Sandbox: opts}, backend.Firestore, backend.Auth)
}

// startWith starts pyric serving only the named services (all of them
// run in the sandbox; the others' ports are not opened).
func startWith(t testing.TB, bo backend.Options, services ...string) *env {
	t.Helper()
	return startFiles(t, nil, bo, services...)
}

// startFiles is startWith with rules files on disk by service, as `pyric
// serve` names them to the Studio.
func startFiles(t testing.TB, files map[string]string, bo backend.Options, services ...string) *env {
	t.Helper()
	ports := map[string]int{}
	for _, s := range backend.Catalog() {
		if !slices.Contains(services, s.Service) {
			ports[s.Service] = backend.Disabled
		}
	}
	bo.Ports, bo.Firestore = ports, backend.FirestoreOptions{Rules: testRules}
	b, err := backend.Start(bo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	h := studio.New(studio.Options{Sandbox: b.Sandbox, RulesFiles: files, Endpoints: func() []studio.Endpoint {
		var out []studio.Endpoint
		for _, e := range b.Endpoints() {
			se := studio.Endpoint{Service: e.Service, Addr: e.Addr, What: e.What}
			for _, v := range e.Env {
				se.Env = append(se.Env, studio.EnvVar{Name: v.Name, Value: v.Value})
			}
			out = append(out, se)
		}
		return out
	}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{b: b, srv: srv}
}

func (e *env) do(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

type page struct {
	Schema string        `json:"schema"`
	Events []event.Event `json:"events"`
	Next   uint64        `json:"next"`
}

func emit(sb *sandbox.Sandbox, n int, service string) {
	for i := 0; i < n; i++ {
		v := event.Allow
		if i%2 == 1 {
			v = event.Deny
		}
		sb.Events().Emit(event.Event{Kind: event.KindRequest, Service: service, Method: "get", Path: fmt.Sprintf("c/d%d", i),
			Identity: event.Identity{Lens: event.LensUser, UID: fmt.Sprintf("u%d", i%3)}, Request: &event.Request{Verdict: v}})
	}
}

func TestEventsFilterAndPage(t *testing.T) {
	e := start(t, sandbox.Options{})
	emit(e.b.Sandbox, 30, "firestore")
	emit(e.b.Sandbox, 5, "storage")
	var p page
	if c := e.do(t, "GET", "/api/events?service=firestore&verdict=deny&limit=4", nil, &p); c != 200 {
		t.Fatalf("status %d", c)
	}
	if p.Schema != event.Schema || len(p.Events) != 4 {
		t.Fatalf("page = %+v", p)
	}
	for _, ev := range p.Events {
		if ev.Service != "firestore" || ev.Verdict != event.Deny {
			t.Fatalf("unfiltered %+v", ev)
		}
	}
	var seen []string
	for after := uint64(0); ; {
		var q page
		e.do(t, "GET", fmt.Sprintf("/api/events?service=firestore&verdict=deny&limit=4&after=%d", after), nil, &q)
		if len(q.Events) == 0 {
			break
		}
		for i, ev := range q.Events {
			if i > 0 && ev.Seq <= q.Events[i-1].Seq {
				t.Fatal("not oldest first")
			}
			seen = append(seen, ev.Path)
		}
		after = q.Next
	}
	if len(seen) != 15 {
		t.Fatalf("paged %d denials, want 15", len(seen))
	}
	var u page
	e.do(t, "GET", "/api/events?uid=u1&path=c", nil, &u)
	if len(u.Events) != 12 { // 10 firestore + 2 storage
		t.Fatalf("uid filter: %d", len(u.Events))
	}
	for _, bad := range []string{"?limit=0", "?limit=x", "?after=evt-x", "?verdict=maybe", "?studio=2"} {
		var er map[string]any
		if c := e.do(t, "GET", "/api/events"+bad, nil, &er); c != 400 || er["error"] == "" {
			t.Errorf("%s: %d %v", bad, c, er)
		}
	}
	var one struct{ Event event.Event }
	if c := e.do(t, "GET", "/api/events/"+p.Events[0].ID, nil, &one); c != 200 || one.Event.ID != p.Events[0].ID {
		t.Fatalf("by id: %d %+v", c, one)
	}
	if c := e.do(t, "GET", "/api/events/evt-99999", nil, nil); c != 404 {
		t.Fatalf("missing id: %d", c)
	}
}

// sse reads one SSE stream.
type sse struct {
	resp *http.Response
	rd   *bufio.Reader
}

func openSSE(t *testing.T, url, lastID string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{resp: resp, rd: bufio.NewReaderSize(resp.Body, 1<<16)}
}

// next returns the next message's id and event.
func (s *sse) next(t *testing.T) (string, event.Event) {
	t.Helper()
	var id string
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "data: "):
			var e event.Event
			if err := json.Unmarshal([]byte(line[6:]), &e); err != nil {
				t.Fatal(err)
			}
			return id, e
		}
	}
}

func TestStreamResumeAndManySubscribers(t *testing.T) {
	e := start(t, sandbox.Options{})
	emit(e.b.Sandbox, 10, "firestore")
	// Resume after evt-4: the kept events 5..10 first, then live ones.
	s := openSSE(t, e.srv.URL+"/api/events/stream", "evt-4")
	var subs []*sse
	for i := 0; i < 8; i++ {
		subs = append(subs, openSSE(t, e.srv.URL+"/api/events/stream?service=firestore", "evt-10"))
	}
	for want := uint64(5); want <= 10; want++ {
		id, ev := s.next(t)
		if ev.Seq != want || id != ev.ID {
			t.Fatalf("replay: got %s seq %d, want %d", id, ev.Seq, want)
		}
	}
	emit(e.b.Sandbox, 3, "firestore")
	for i := 0; i < 3; i++ {
		if _, ev := s.next(t); ev.Seq != uint64(11+i) {
			t.Fatalf("live: seq %d", ev.Seq)
		}
	}
	for n, sub := range subs {
		for i := 0; i < 3; i++ {
			if _, ev := sub.next(t); ev.Seq != uint64(11+i) {
				t.Fatalf("subscriber %d: seq %d", n, ev.Seq)
			}
		}
	}
}

func TestStreamGapAfterHistoryDropped(t *testing.T) {
	e := start(t, sandbox.Options{History: 5})
	emit(e.b.Sandbox, 20, "firestore")
	s := openSSE(t, e.srv.URL+"/api/events/stream", "evt-2")
	_, ev := s.next(t)
	if ev.Kind != event.KindGap || ev.Gap == nil || ev.Missed != 13 {
		t.Fatalf("want a gap of 13 (events 3..15 dropped), got %+v", ev)
	}
	if _, ev := s.next(t); ev.Seq != 16 {
		t.Fatalf("after the gap: seq %d", ev.Seq)
	}
}

// TestSlowSubscriberNeverBlocks: a client that stops reading does not slow
// the engines; when it reads again it gets a gap marker for what it lost.
func TestSlowSubscriberNeverBlocks(t *testing.T) {
	e := start(t, sandbox.Options{History: 100})
	s := openSSE(t, e.srv.URL+"/api/events/stream", "")
	pad := strings.Repeat("x", 4096)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 20000; i++ {
			e.b.Sandbox.Events().Emit(event.Event{Kind: event.KindRequest, Service: "firestore", Method: "get", Path: pad, Request: &event.Request{Verdict: event.Allow}})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("emitting to a bus with a stalled SSE client blocked")
	}
	// The gap marker goes before the next event delivered after the loss,
	// so events keep coming while the client catches up.
	waitGap(t, s, func() {
		e.b.Sandbox.Events().Emit(event.Event{Kind: event.KindRequest, Service: "firestore", Method: "get", Path: "after", Request: &event.Request{Verdict: event.Allow}})
	})
}

// waitGap reads s until a gap marker arrives, calling more every 20ms
// meanwhile (a marker is delivered before the next event after a loss).
func waitGap(t *testing.T, s *sse, more func()) {
	t.Helper()
	found := make(chan bool, 1)
	go func() {
		for {
			line, err := s.rd.ReadString('\n')
			if err != nil {
				found <- false
				return
			}
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"kind":"gap"`) {
				found <- true
				return
			}
		}
	}()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ok := <-found:
			if !ok {
				t.Fatal("the stream ended without a gap marker")
			}
			return
		case <-deadline:
			t.Fatal("no gap marker within a minute of reading")
		case <-time.After(20 * time.Millisecond):
			more()
		}
	}
}

func TestHostAndOriginGuard(t *testing.T) {
	e := start(t, sandbox.Options{})
	cases := []struct {
		host, origin string
		want         int
	}{
		{"", "", 200},
		{"localhost:4000", "", 200},
		{"", "http://" + strings.TrimPrefix(e.srv.URL, "http://"), 200},
		{"evil.example:4000", "", 403},
		{"", "http://evil.example", 403},
		{"", "null", 403},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/services", nil)
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("host %q origin %q: %d, want %d", c.host, c.origin, resp.StatusCode, c.want)
		}
	}
}

func TestFirestoreLenses(t *testing.T) {
	e := start(t, sandbox.Options{})
	var d map[string]any
	if c := e.do(t, "PUT", "/api/firestore/document?path=posts/a", map[string]any{"data": map[string]any{"title": "hi", "n": 1,
		"at": map[string]any{"__type": "timestamp", "seconds": 1, "nanos": 0}}}, &d); c != 200 {
		t.Fatalf("put: %d %v", c, d)
	}
	if c := e.do(t, "PUT", "/api/firestore/document?path=posts/a/comments/c1", map[string]any{"data": map[string]any{"x": true}}, nil); c != 200 {
		t.Fatalf("put sub: %d", c)
	}
	var cols struct{ Collections []string }
	e.do(t, "GET", "/api/firestore/collections", nil, &cols)
	if len(cols.Collections) != 1 || cols.Collections[0] != "posts" {
		t.Fatalf("collections %v", cols)
	}
	e.do(t, "GET", "/api/firestore/collections?parent=posts/a", nil, &cols)
	if len(cols.Collections) != 1 || cols.Collections[0] != "comments" {
		t.Fatalf("subcollections %v", cols)
	}
	var docs struct {
		Documents []struct {
			Path string
			Data map[string]any
		}
	}
	e.do(t, "GET", "/api/firestore/documents?collection=posts", nil, &docs)
	if len(docs.Documents) != 1 || docs.Documents[0].Data["title"] != "hi" {
		t.Fatalf("docs %+v", docs)
	}
	if at, _ := docs.Documents[0].Data["at"].(map[string]any); at["__type"] != "timestamp" {
		t.Fatalf("typed value lost: %v", docs.Documents[0].Data["at"])
	}
	// App lens: alice's create is judged by the rules and explained.
	var den struct {
		Error   string
		Code    string
		Details struct {
			Reason      string
			Explanation []string
		}
	}
	c := e.do(t, "PUT", "/api/firestore/document?path=posts/b&as=alice", map[string]any{"data": map[string]any{"title": strings.Repeat("t", 27)}}, &den)
	if c != 403 || den.Code != "permission-denied" || den.Details.Reason != "false for 'create' @ L6" ||
		len(den.Details.Explanation) != 1 || den.Details.Explanation[0] != "request.resource.data.title.size() < 20 → 27 < 20 is false" {
		t.Fatalf("app lens denial: %d %+v", c, den)
	}
	if c := e.do(t, "PUT", "/api/firestore/document?path=posts/b&as=alice", map[string]any{"data": map[string]any{"title": "short"}}, nil); c != 200 {
		t.Fatalf("app lens allowed write: %d", c)
	}
	if c := e.do(t, "GET", "/api/firestore/document?path=posts/b&as=~anon", nil, nil); c != 200 {
		t.Fatalf("anon read: %d", c)
	}
	// Bad input.
	for _, bad := range []string{"/api/firestore/document?path=posts", "/api/firestore/documents?collection=posts/a", "/api/firestore/document?path=posts/a&as=x&claims=[1"} {
		if c := e.do(t, "GET", bad, nil, nil); c != 400 {
			t.Errorf("%s: %d, want 400", bad, c)
		}
	}
	if c := e.do(t, "PUT", "/api/firestore/document?path=posts/z", map[string]any{"nodata": 1}, nil); c != 400 {
		t.Errorf("no data: %d", c)
	}
	// Query.
	var qr struct{ Documents []map[string]any }
	if c := e.do(t, "POST", "/api/firestore/query", map[string]any{"query": map[string]any{"from": []any{map[string]any{"collectionId": "posts"}},
		"where": map[string]any{"fieldFilter": map[string]any{"field": map[string]any{"fieldPath": "title"}, "op": "EQUAL", "value": map[string]any{"stringValue": "short"}}}}}, &qr); c != 200 || len(qr.Documents) != 1 {
		t.Fatalf("query: %d %+v", c, qr)
	}
	// Recursive delete.
	var del map[string]int
	if c := e.do(t, "DELETE", "/api/firestore/document?path=posts/a&recursive=true", nil, &del); c != 200 || del["deleted"] != 2 {
		t.Fatalf("recursive delete: %d %v", c, del)
	}
	// The Studio's own requests are marked and hidden by default.
	var all, mine page
	e.do(t, "GET", "/api/events?kind=request", nil, &all)
	e.do(t, "GET", "/api/events?kind=request&studio=true", nil, &mine)
	if len(all.Events) != 0 || len(mine.Events) == 0 {
		t.Fatalf("studio requests: hidden %d, shown %d", len(all.Events), len(mine.Events))
	}
	for _, ev := range mine.Events {
		if ev.Actor.Kind != event.ActorStudio {
			t.Fatalf("not marked: %+v", ev.Actor)
		}
	}
}

func TestAuthUsers(t *testing.T) {
	e := start(t, sandbox.Options{})
	var u map[string]any
	if c := e.do(t, "POST", "/api/auth/users", map[string]any{"uid": "alice", "email": "alice@example.com", "password": "secret1", "customClaims": map[string]any{"role": "admin"}}, &u); c != 201 {
		t.Fatalf("create: %d %v", c, u)
	}
	if u["localId"] != "alice" || u["customAttributes"] != `{"role":"admin"}` || u["passwordHash"] != nil {
		t.Fatalf("user %v", u)
	}
	var er map[string]any
	if c := e.do(t, "PATCH", "/api/auth/users/alice", map[string]any{"customClaims": []int{1}}, &er); c != 400 || !strings.Contains(er["error"].(string), "JSON object") {
		t.Fatalf("array claims: %d %v", c, er)
	}
	if c := e.do(t, "PATCH", "/api/auth/users/alice", map[string]any{"customClaims": map[string]any{"sub": "x"}}, &er); c != 400 {
		t.Fatalf("reserved claim: %d %v", c, er)
	}
	if c := e.do(t, "PATCH", "/api/auth/users/alice", map[string]any{"disabled": true, "displayName": "Alice"}, &u); c != 200 || u["disabled"] != true || u["displayName"] != "Alice" {
		t.Fatalf("update: %d %v", c, u)
	}
	var list struct{ Users []map[string]any }
	e.do(t, "GET", "/api/auth/users", nil, &list)
	if len(list.Users) != 1 {
		t.Fatalf("list %v", list)
	}
	if c := e.do(t, "DELETE", "/api/auth/users/alice", nil, nil); c != 200 {
		t.Fatalf("delete: %d", c)
	}
	e.do(t, "GET", "/api/auth/users", nil, &list)
	if len(list.Users) != 0 {
		t.Fatalf("after delete %v", list)
	}
	var oob map[string][]any
	if c := e.do(t, "GET", "/api/auth/oob", nil, &oob); c != 200 || oob["oobCodes"] == nil {
		t.Fatalf("oob: %d %v", c, oob)
	}
}

func TestRulesAndRerun(t *testing.T) {
	e := start(t, sandbox.Options{})
	// A denied app write, recorded as an event.
	e.do(t, "PUT", "/api/firestore/document?path=posts/b&as=alice", map[string]any{"data": map[string]any{"title": strings.Repeat("t", 27)}}, nil)
	var p page
	e.do(t, "GET", "/api/events?verdict=deny&studio=true", nil, &p)
	if len(p.Events) != 1 {
		t.Fatalf("denials %d", len(p.Events))
	}
	ev := p.Events[0]
	if ev.Rule == nil || ev.Rule.Line != 6 || len(ev.Trace) == 0 {
		t.Fatalf("event lacks its rule/trace: %+v", ev.Request)
	}
	type result struct {
		Verdict     string
		Reason      string
		Explanation []string
		Rules       *struct{ Compiles bool }
	}
	var r result
	if c := e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{}, &r); c != 200 || r.Verdict != "deny" {
		t.Fatalf("rerun unchanged: %d %+v", c, r)
	}
	edited := strings.Replace(testRules, "size() < 20", "size() < 40", 1)
	if c := e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{"source": edited}, &r); c != 200 || r.Verdict != "allow" {
		t.Fatalf("rerun against edited rules: %d %+v", c, r)
	}
	if c := e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{"as": map[string]any{"anonymous": true}}, &r); c != 200 || r.Verdict != "deny" ||
		len(r.Explanation) != 1 || r.Explanation[0] != "request.auth != null → null != null is false" {
		t.Fatalf("rerun as anonymous: %d %+v", c, r)
	}
	if c := e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{"source": "rules_version = '2'; service cloud.firestore {"}, &r); c != 422 || r.Rules == nil || r.Rules.Compiles {
		t.Fatalf("rerun against broken rules: %d %+v", c, r)
	}
	// State untouched: the document still does not exist.
	if c := e.do(t, "GET", "/api/firestore/document?path=posts/b", nil, nil); c != 404 {
		t.Fatalf("rerun touched state: %d", c)
	}
	// Rules page data: source, lint findings, coverage from the history.
	var rules struct {
		Loaded bool
		Rules  struct {
			Source   string
			Compiles bool
			Lint     []map[string]any
		}
		Coverage []struct {
			Line  int
			Text  string
			False int
		}
	}
	e.do(t, "GET", "/api/rules", nil, &rules)
	if !rules.Loaded || !rules.Rules.Compiles || rules.Rules.Source != testRules {
		t.Fatalf("rules %+v", rules)
	}
	found := false
	for _, c := range rules.Coverage {
		found = found || (c.Text == "request.resource.data.title.size() < 20" && c.False == 1)
	}
	if !found {
		t.Fatalf("coverage lacks the failing comparison: %+v", rules.Coverage)
	}
	var chk struct {
		Compiles    bool
		Diagnostics []struct{ Where, SourceLine, Severity string }
	}
	e.do(t, "POST", "/api/rules/check", map[string]any{"source": "rules_version = '2';\nservice cloud.firestore {\n  match /x { allow read: if ; }\n}\n"}, &chk)
	if chk.Compiles || len(chk.Diagnostics) == 0 || !strings.HasPrefix(chk.Diagnostics[0].Where, "firestore.rules:3:") || chk.Diagnostics[0].SourceLine == "" {
		t.Fatalf("check: %+v", chk)
	}
	var svc struct {
		Endpoints []studio.Endpoint
		Rules     []map[string]any
	}
	e.do(t, "GET", "/api/services", nil, &svc)
	if len(svc.Endpoints) != 2 || svc.Endpoints[0].Env[0].Name != "FIRESTORE_EMULATOR_HOST" || len(svc.Rules) != 1 || svc.Rules[0]["state"] != "live" {
		t.Fatalf("services %+v", svc)
	}
}

// TestRulesFileThatDoesNotCompile: Home's rules status shows a broken
// rules file on disk with file:line:col and the source line.
func TestRulesFileThatDoesNotCompile(t *testing.T) {
	e := start(t, sandbox.Options{})
	path := filepath.Join(t.TempDir(), "firestore.rules")
	if err := os.WriteFile(path, []byte("rules_version = '2';\nservice cloud.firestore {\n  match /x { allow read: if ; }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := studio.New(studio.Options{Sandbox: e.b.Sandbox, RulesFiles: map[string]string{"firestore": path}, Endpoints: func() []studio.Endpoint {
		return []studio.Endpoint{{Service: "firestore"}}
	}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	r, err := http.Get(srv.URL + "/api/services")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var got struct {
		Rules []struct {
			Service, State string
			Errors         []struct{ Where, SourceLine string }
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != 1 || got.Rules[0].Service != "firestore" {
		t.Fatalf("rules status %+v", got.Rules)
	}
	if st := got.Rules[0]; st.State != "error" || len(st.Errors) == 0 || !strings.HasPrefix(st.Errors[0].Where, path+":3:") ||
		!strings.Contains(st.Errors[0].SourceLine, "allow read: if ;") {
		t.Fatalf("rules status %+v", got.Rules)
	}
}

// TestSlowSubscriberNeverBlocksAnEngine: with an SSE client that never
// reads, Firestore commits (each emitting a request and a commit event)
// all complete; the client then finds a gap marker for what it lost.
func TestSlowSubscriberNeverBlocksAnEngine(t *testing.T) {
	e := start(t, sandbox.Options{History: 100})
	s := openSSE(t, e.srv.URL+"/api/events/stream", "")
	fs, db := testfs.Of(e.b.Sandbox).Engine, testfs.Of(e.b.Sandbox).Default()
	pad := &pb.Value{ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("x", 16<<10)}}
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 3000; i++ {
			_, err := fs.Commit(context.Background(), identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(),
				Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(fmt.Sprintf("pads/p%d", i%50)),
					Fields: map[string]*pb.Value{"pad": pad, "i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}}}}}}}})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("commits with a stalled SSE client did not complete: the engine is blocked")
	}
	// 3000 commits of 32 KiB events overflow any socket buffers: the
	// stream must have dropped events, and says so with a gap marker.
	waitGap(t, s, func() {
		fs.Commit(context.Background(), identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(),
			Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("after/a")}}}}})
	})
}
