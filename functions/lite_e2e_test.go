package functions_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
)

// liteCodebase has no HTTPS function, so its worker loads no express
// until a request needs it: add (a v1 callable) and event (a v2 event
// function) answer on the harness's own request and response methods;
// probe reads express members of its raw request, which moves the
// worker onto express.
const liteCodebase = `
const v1 = require("firebase-functions/v1");
const { onCall } = require("firebase-functions/v2/https");
exports.add = v1.https.onCall((data) => {
  if (typeof data.a !== "number") throw new v1.https.HttpsError("invalid-argument", "a must be a number", { got: data.a });
  return { sum: data.a + data.b };
});
exports.probe = onCall((request) => {
  const raw = request.rawRequest;
  return { header: raw.get("X-Probe"), query: raw.query, protocol: raw.protocol, isJSON: raw.is("application/json"), app: typeof raw.app };
});
`

// startLite starts an engine over liteCodebase, written to a temporary
// directory beside e2e/functions' node_modules.
func startLite(t *testing.T) *functions.Engine {
	t.Helper()
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	dir := t.TempDir()
	src := filepath.Join(dir, "fn")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "index.js"), []byte(liteCodebase), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "package.json"), []byte(`{"main":"index.js","engines":{"node":"22"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e2etest.FunctionsDir(), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cbs, err := functions.ParseConfig(json.RawMessage(`{"source":"fn"}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	e, err := functions.New(functions.Options{Codebases: cbs, Log: logs, Poll: -1}, service.Env{Project: "demo-fn", Events: event.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Start(functions.RuntimeEnv("demo-fn", nil)); err != nil {
		t.Fatal(err)
	}
	if len(e.Endpoints()) != 2 {
		t.Fatalf("endpoints %v; log:\n%s", e.Endpoints(), logs)
	}
	return e
}

// answer is a response as a client sees it, its Date left out.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

// TestWorkerAnswersAsExpressBeforeLoadingIt: a worker answers the
// callable protocol before it loads express (the fast path of a cold
// start) byte for byte as after, when express's request and response
// serve it: results, errors, the parser's answers to bodies it does not
// take as they are (malformed JSON, leading whitespace, a byte order
// mark, not an object), and the body-less call. A function reading an
// express member of its raw request gets express's value.
func TestWorkerAnswersAsExpressBeforeLoadingIt(t *testing.T) {
	e := startLite(t)
	bodies := []struct{ ctype, body string }{
		{"application/json", `{"data":{"a":1,"b":2}}`},
		{"application/json; charset=utf-8", `{"data":{"a":"x"}}`},
		{"application/json", `{"data":{"a":1,"b":2},"extra":true}`},
		{"application/json", `{"nodata":1}`},
		{"application/json", ``},
		{"application/json", ` {"data":{"a":3,"b":4}}`},
		{"application/json", "\ufeff{\"data\":{\"a\":5,\"b\":6}}"},
		{"application/json", `{"data":`},
		{"application/json", `"data"`},
		{"Application/JSON", `[1]`},
	}
	round := func() []answer {
		var out []answer
		for _, b := range bodies {
			w := call(t, e, "add", "POST", "", b.ctype, b.body)
			h := w.Header().Clone()
			h.Del("Date")
			out = append(out, answer{w.Code, h, w.Body.String()})
		}
		return out
	}
	before := round()
	if before[0].Status != 200 || before[0].Body != `{"result":{"sum":3}}` {
		t.Fatalf("add = %d %s", before[0].Status, before[0].Body)
	}
	if before[1].Status != 400 || !strings.Contains(before[1].Body, `"status":"INVALID_ARGUMENT"`) || !strings.Contains(before[1].Body, `"details":{"got":"x"}`) {
		t.Errorf("add with a bad argument = %d %s", before[1].Status, before[1].Body)
	}
	if before[5].Body != `{"result":{"sum":7}}` || before[6].Body != `{"result":{"sum":11}}` {
		t.Errorf("leading whitespace / BOM = %s / %s, want the sums express's parser gives", before[5].Body, before[6].Body)
	}
	if before[7].Status != 400 || !strings.Contains(before[7].Body, "SyntaxError") {
		t.Errorf("malformed JSON = %d %s, want express's 400 error page", before[7].Status, before[7].Body)
	}

	w := call(t, e, "probe", "POST", "?x=1", "application/json", `{"data":null}`)
	var probe struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &probe); err != nil || w.Code != 200 {
		t.Fatalf("probe = %d %s", w.Code, w.Body)
	}
	// X-Probe is not sent: express's get answers undefined, dropped
	// from the JSON; the others are express's values.
	want := map[string]any{"query": map[string]any{"x": "1"}, "protocol": "http", "isJSON": "application/json", "app": "function"}
	for k, v := range want {
		if got, _ := json.Marshal(probe.Result[k]); string(got) != mustJSON(v) {
			t.Errorf("probe %s = %s, want %s (express's)", k, got, mustJSON(v))
		}
	}

	after := round()
	for i := range bodies {
		b, a := before[i], after[i]
		if b.Status != a.Status || b.Body != a.Body || !equalHeader(b.Header, a.Header) {
			t.Errorf("body %q: before express %d %v %q; with express %d %v %q", bodies[i].body, b.Status, b.Header, b.Body, a.Status, a.Header, a.Body)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}
