package aiserver

import (
	"bytes"
	"encoding/json"
	"github.com/pyric/pyric/server"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/sandbox/service"
)

func newServer(t *testing.T, opts ai.Options) (*httptest.Server, *ai.Engine) {
	t.Helper()
	eng, err := ai.New(service.Env{Project: "demo-ai"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.Guard(NewHandler(eng, Options{}), nil)) // as on its port
	t.Cleanup(srv.Close)
	return srv, eng
}

func post(t *testing.T, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", "test-key")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, url, b)
	}
	return resp.StatusCode, m
}

const hello = `{"contents":[{"role":"user","parts":[{"text":"count from one to ten please, slowly"}]}]}`

func TestParsePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path string
		want Route
		ok   bool
	}{
		{"/v1beta/projects/p1/models/gemini-2.5-flash:generateContent",
			Route{Version: "v1beta", Project: "p1", Model: "gemini-2.5-flash", Task: "generateContent", Backend: ai.BackendGoogleAI, Service: "firebasevertexai.googleapis.com"}, true},
		{"/v1beta/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
			Route{Version: "v1beta", Project: "p1", Location: "us-central1", Model: "gemini-2.5-flash", Task: "streamGenerateContent", Backend: ai.BackendVertexAI, Service: "firebasevertexai.googleapis.com"}, true},
		{"/v1beta/models/gemini-2.5-flash:countTokens",
			Route{Version: "v1beta", Model: "gemini-2.5-flash", Task: "countTokens", Backend: ai.BackendGoogleAI, Service: "generativelanguage.googleapis.com"}, true},
		{"/v1beta1/projects/p1/locations/global/publishers/google/models/m:generateContent",
			Route{Version: "v1beta1", Project: "p1", Location: "global", Model: "m", Task: "generateContent", Backend: ai.BackendVertexAI, Service: "aiplatform.googleapis.com"}, true},
		{"/v1/publishers/google/models/m:generateContent",
			Route{Version: "v1", Model: "m", Task: "generateContent", Backend: ai.BackendVertexAI, Service: "aiplatform.googleapis.com"}, true},
		{"/v2/models/m:generateContent", Route{}, false},
		{"/v1beta/models/m", Route{}, false},
		{"/v1beta/models/:generateContent", Route{}, false},
		{"/v1beta/models/m:", Route{}, false},
		{"/v1beta/projects/p/locations/l/models/m:generateContent", Route{}, false},
		{"/v1beta/things/m:generateContent", Route{}, false},
		{"/", Route{}, false},
	}
	for _, c := range cases {
		got, ok := ParsePath(c.path)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/v1beta/projects/p/models/m:generateContent", "/v1/publishers/google/models/m:x", "/v1beta1//:", "/v1beta/models/a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rt, ok := ParsePath(p)
		if ok && (rt.Model == "" || rt.Task == "" || rt.Backend == "") {
			t.Fatalf("%q: incomplete route %+v", p, rt)
		}
	})
}

// The framing of ai-generate-stream-framing on the wire: `data: ` events of
// complete JSON, CRLF CRLF separators, the captured spacing.
func TestSSEFraming(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ai.Options{})
	resp, body := post(t, srv.URL+"/v1beta/projects/demo-ai/models/gemini-flash-lite-latest:streamGenerateContent?alt=sse", hello)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !bytes.HasSuffix(body, []byte("\r\n\r\n")) {
		t.Fatalf("body does not end with CRLF CRLF: %q", body)
	}
	events := strings.Split(strings.TrimSuffix(string(body), "\r\n\r\n"), "\r\n\r\n")
	if len(events) < 2 {
		t.Fatalf("%d events", len(events))
	}
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.ContainsAny(data, "\r\n") {
			t.Fatalf("event %d: %q", i, ev)
		}
		if !strings.HasPrefix(data, `{"candidates": [{"content": {"parts": [{"text": `) {
			t.Errorf("event %d spacing: %s", i, data)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if m["usageMetadata"] == nil {
			t.Errorf("event %d lacks usageMetadata", i)
		}
		_, fin := m["candidates"].([]any)[0].(map[string]any)["finishReason"]
		if fin != (i == len(events)-1) {
			t.Errorf("event %d finishReason %v", i, fin)
		}
	}
	// Without alt=sse the stream is one JSON array.
	resp, body = post(t, srv.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent", hello)
	var arr []map[string]any
	if err := json.Unmarshal(body, &arr); err != nil || resp.StatusCode != 200 || len(arr) < 2 {
		t.Errorf("array stream %d %v: %s", resp.StatusCode, err, body)
	}
}

func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ai.Options{APIKeys: []string{"test-key"}})
	cases := []struct {
		name, path, body string
		hdr              []string
		status           int
		message          string
	}{
		{"unknown model", "/v1beta/projects/demo-ai/models/not-a-real-model:generateContent", hello, nil, 404, "models/not-a-real-model is not found"},
		{"retired", "/v1beta/projects/demo-ai/models/gemini-1.5-pro:streamGenerateContent?alt=sse", hello, nil, 404, "Gemini 1.5 models are retired"},
		{"bad key", "/v1beta/models/gemini-2.5-flash:generateContent", hello, []string{"x-goog-api-key", "nope"}, 400, "API key not valid. Please pass a valid API key."},
		{"key in query", "/v1beta/models/gemini-2.5-flash:countTokens?key=nope", hello, []string{"x-goog-api-key", ""}, 400, "API key not valid."},
		{"no key", "/v1beta/models/gemini-2.5-flash:generateContent", hello, []string{"x-goog-api-key", ""}, 403, "Method doesn't allow unregistered callers"},
		{"empty contents", "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[]}`, nil, 400, "contents is not specified"},
		{"bad json", "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":`, nil, 400, "Invalid JSON payload received."},
		{"unknown task", "/v1beta/models/gemini-2.5-flash:embedEverything", hello, nil, 404, "Method not found."},
		{"unknown path", "/v1beta/things", hello, nil, 404, "Requested entity was not found."},
	}
	for _, c := range cases {
		resp, body := post(t, srv.URL+c.path, c.body, c.hdr...)
		var env struct{ Error ai.Error }
		if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != c.status || env.Error.Code != c.status || !strings.Contains(env.Error.Message, c.message) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: content type %q", c.name, ct)
		}
	}
	// The bad-key envelope names the API the path belongs to.
	_, body := post(t, srv.URL+"/v1beta/projects/demo-ai/models/gemini-2.5-flash:generateContent", hello, "x-goog-api-key", "nope")
	if !strings.Contains(string(body), `"service": "firebasevertexai.googleapis.com"`) {
		t.Errorf("firebase bad key: %s", body)
	}
	code, _ := do(t, http.MethodGet, srv.URL+"/v1beta/models/gemini-2.5-flash:generateContent", "")
	if code != 404 {
		t.Errorf("GET on a model method: %d", code)
	}
}

func TestEmulatorEndpoints(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ai.Options{})
	base := srv.URL + "/emulator/v1/projects/demo-ai/ai"
	if code, m := do(t, http.MethodPut, base+"/script", `[{"text":"one"},{"match":{"contains":"two"},"text":"TWO"}]`); code != 200 || m["entries"] != float64(2) {
		t.Fatalf("PUT script: %d %v", code, m)
	}
	if code, m := do(t, http.MethodPost, base+"/script", `{"entries":[{"text":"three"}]}`); code != 200 || m["entries"] != float64(3) {
		t.Fatalf("POST script: %d %v", code, m)
	}
	code, m := do(t, http.MethodPut, base+"/script", `[{"text":"x","raw":{}}]`)
	if code != 400 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "entry 0: more than one answer") {
		t.Errorf("bad script: %d %v", code, m)
	}
	for _, want := range []string{"TWO", "one", "three"} {
		p := `{"contents":[{"parts":[{"text":"say two"}]}]}`
		if want != "TWO" {
			p = hello
		}
		_, body := post(t, srv.URL+"/v1beta/projects/demo-ai/models/gemini-2.5-flash:generateContent", p)
		var r ai.Response
		json.Unmarshal(body, &r)
		if got := r.Candidates[0].Content.Text(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if code, m := do(t, http.MethodGet, base+"/script", ""); code != 200 || len(m["entries"].([]any)) != 0 {
		t.Errorf("GET script: %d %v", code, m)
	}
	code, m = do(t, http.MethodGet, base+"/calls", "")
	calls, _ := m["calls"].([]any)
	if code != 200 || len(calls) != 3 || calls[0].(map[string]any)["answer"] != "TWO" || calls[0].(map[string]any)["prompt"] != "say two" {
		t.Errorf("GET calls: %d %v", code, m)
	}
	if code, _ := do(t, http.MethodDelete, base, ""); code != 200 {
		t.Errorf("DELETE: %d", code)
	}
	if _, m := do(t, http.MethodGet, base+"/calls", ""); len(m["calls"].([]any)) != 0 {
		t.Errorf("calls after clear %v", m)
	}
	if code, _ := do(t, http.MethodPatch, base+"/script", ""); code != 405 {
		t.Errorf("PATCH: %d", code)
	}
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/v1beta/models/m:generateContent", nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-goog-api-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "x-goog-api-key") {
		t.Errorf("preflight %d %v", resp.StatusCode, resp.Header)
	}
}

func TestCallerIdentity(t *testing.T) {
	t.Parallel()
	// An unsigned JWT as the Firebase SDK would send it: {"sub":"alice"}.
	jwt := "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9."
	cases := []struct {
		header string
		uid    string
		oauth  bool
	}{
		{"", "", false},
		{"Firebase " + jwt, "alice", false},
		{"Bearer " + jwt, "alice", true},
		{"Bearer ya29.opaque", "", true},
		{"Basic xyz", "", false},
	}
	for _, c := range cases {
		id, oauth := caller(c.header)
		if id.UID != c.uid || oauth != c.oauth {
			t.Errorf("%q: %+v %v", c.header, id, oauth)
		}
	}
}

func BenchmarkHTTPGenerateContent(b *testing.B) {
	eng, _ := ai.New(service.Env{Project: "demo-ai"}, ai.Options{})
	srv := httptest.NewServer(NewHandler(eng, Options{}))
	defer srv.Close()
	url := srv.URL + "/v1beta/projects/demo-ai/models/gemini-2.5-flash:generateContent"
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(hello))
		req.Header.Set("x-goog-api-key", "k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
