package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

// The captured minimal envelope's key sets (ai-generate-minimal-envelope).
func TestZeroConfigEnvelopeKeySets(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	for _, model := range []string{"gemini-flash-lite-latest", "gemini-2.5-flash"} {
		m := mustGenerate(t, e, call(model, hello))
		if got := keys(m); got != "candidates,modelVersion,responseId,usageMetadata" {
			t.Errorf("%s: top-level keys %s", model, got)
		}
		c0 := path(m, "candidates", 0)
		if got := keys(c0); got != "content,finishReason,index" {
			t.Errorf("%s: candidate keys %s", model, got)
		}
		if path(c0, "index") != float64(0) || path(c0, "finishReason") != "STOP" || path(c0, "content", "role") != "model" {
			t.Errorf("%s: candidate %v", model, c0)
		}
		if got := keys(path(c0, "content")); got != "parts,role" {
			t.Errorf("%s: content keys %s", model, got)
		}
		if got := keys(m["usageMetadata"]); got != "candidatesTokenCount,promptTokenCount,promptTokensDetails,serviceTier,totalTokenCount" {
			t.Errorf("%s: usage keys %s", model, got)
		}
		u := m["usageMetadata"].(map[string]any)
		if u["totalTokenCount"].(float64) != u["promptTokenCount"].(float64)+u["candidatesTokenCount"].(float64) || u["serviceTier"] != "standard" {
			t.Errorf("%s: usage %v", model, u)
		}
		if s, _ := m["responseId"].(string); len(s) != 22 {
			t.Errorf("%s: responseId %q", model, s)
		}
		part := path(c0, "content", "parts", 0).(map[string]any)
		// Gemini 3 models sign text parts (ai-thinking-thought-parts); 2.5 does not.
		_, signed := part["thoughtSignature"]
		if signed != (model == "gemini-flash-lite-latest") {
			t.Errorf("%s: part %v", model, part)
		}
		if _, thought := part["thought"]; thought {
			t.Errorf("%s: a part is flagged thought", model)
		}
	}
	m := mustGenerate(t, e, call("gemini-flash-lite-latest", hello))
	if m["modelVersion"] != "gemini-3.1-flash-lite" {
		t.Errorf("modelVersion %v", m["modelVersion"])
	}
	if txt := path(m, "candidates", 0, "content", "parts", 0, "text"); txt != "pyric: Say hello to pyric" {
		t.Errorf("text %v", txt)
	}
}

func TestSameRequestSameEnvelope(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	a, err := e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello))
	if !bytes.Equal(a, b) {
		t.Errorf("two identical requests differ:\n%s\n%s", a, b)
	}
	c, _ := e.GenerateContent(context.Background(), call("gemini-2.5-flash", `{"contents":[{"parts":[{"text":"other"}]}]}`))
	if bytes.Equal(a, c) {
		t.Error("different requests gave the same envelope")
	}
}

func setScript(t *testing.T, e *Engine, script string) {
	t.Helper()
	entries, err := DecodeScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetScript("demo-ai", entries); err != nil {
		t.Fatal(err)
	}
}

func text(m map[string]any) string {
	s := ""
	parts, _ := path(m, "candidates", 0, "content", "parts").([]any)
	for _, p := range parts {
		if t, ok := p.(map[string]any)["text"].(string); ok {
			s += t
		}
	}
	return s
}

func prompt(s string) string {
	b, _ := json.Marshal(s)
	return `{"contents":[{"role":"user","parts":[{"text":` + string(b) + `}]}]}`
}

func TestScriptQueueAndMatchers(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	setScript(t, e, `{"entries":[
		{"text":"first"},
		{"match":{"contains":"weather"},"text":"sunny"},
		{"text":"second"},
		{"match":{"regex":"(?i)^hello\\b"},"text":"hi there","repeat":true},
		{"match":{"model":"gemini-2.5-pro"},"text":"pro answer"}
	]}`)
	steps := []struct{ model, prompt, want string }{
		{"gemini-2.5-flash", "anything", "first"},
		{"gemini-2.5-flash", "what is the weather", "sunny"},
		{"gemini-2.5-flash", "what is the weather", "second"}, // matcher consumed
		{"gemini-2.5-flash", "Hello you", "hi there"},
		{"gemini-2.5-flash", "hello again", "hi there"}, // repeat keeps it
		{"gemini-2.5-pro", "x", "pro answer"},
		{"gemini-2.5-flash", "done", "pyric: done"}, // script exhausted: synthesized
	}
	for i, s := range steps {
		if got := text(mustGenerate(t, e, call(s.model, prompt(s.prompt)))); got != s.want {
			t.Errorf("step %d (%q): got %q, want %q", i, s.prompt, got, s.want)
		}
	}
	if left := e.Script("demo-ai"); len(left) != 1 || left[0].Match.Regex == "" {
		t.Errorf("left %+v", left)
	}
}

// A raw envelope pasted from a capture comes back byte for byte.
func TestScriptRawVerbatim(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	raw := `{"candidates": [{"content": {"parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}], "role": "model"}, "finishReason": "STOP", "index": 0}], "modelVersion": "captured", "responseId": "abc"}`
	setScript(t, e, `[{"raw":`+raw+`}]`)
	out, err := e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != raw {
		t.Errorf("raw not verbatim:\n%s", out)
	}
	calls := e.Calls("demo-ai")
	if len(calls) != 1 || calls[0].Source != "script" {
		t.Errorf("calls %+v", calls)
	}
}

func TestScriptFunctionCallShorthand(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	setScript(t, e, `[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]`)
	m := mustGenerate(t, e, call("gemini-flash-lite-latest", hello))
	p := path(m, "candidates", 0, "content", "parts", 0).(map[string]any)
	fc := p["functionCall"].(map[string]any)
	if keys(fc) != "args,id,name" || fc["name"] != "get_weather" || path(fc, "args", "city") != "Paris" {
		t.Errorf("functionCall %v", fc)
	}
	if id, _ := fc["id"].(string); len(id) != 8 {
		t.Errorf("id %v", fc["id"])
	}
	if sig, _ := p["thoughtSignature"].(string); len(sig) < 40 {
		t.Errorf("signature %v", p["thoughtSignature"])
	}
	if path(m, "candidates", 0, "finishReason") != "STOP" || path(m, "candidates", 0, "finishMessage") != "Model generated function call(s)." {
		t.Errorf("candidate %v", path(m, "candidates", 0))
	}
}

// The round trip of ai-function-response-round, and the rejection of
// ai-error-fncall-missing-thought-signature.
func TestFunctionCallRoundTripAndSignature(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	tools := `"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}]`
	first := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],` + tools + `,"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`
	m := mustGenerate(t, e, call("gemini-flash-lite-latest", first))
	modelTurn := path(m, "candidates", 0, "content").(map[string]any)
	fc := path(modelTurn, "parts", 0, "functionCall").(map[string]any)
	if fc["name"] != "get_weather" || path(fc, "args", "city") != "pyric" {
		t.Fatalf("forced call %v", fc)
	}
	turn, _ := json.Marshal(modelTurn)
	round := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]},` + string(turn) +
		`,{"role":"function","parts":[{"functionResponse":{"name":"get_weather","id":"` + fc["id"].(string) + `","response":{"temp":22}}}]}],` + tools + `}`
	ans := mustGenerate(t, e, call("gemini-flash-lite-latest", round))
	if got := text(ans); got != `pyric: get_weather returned {"temp":22}` {
		t.Errorf("round-trip answer %q", got)
	}
	if sig := path(modelTurn, "parts", 0, "thoughtSignature").(string); len(sig) != 72 {
		t.Errorf("signature %q is not production's length", sig)
	}
	// A script can answer the second leg by the function it returns.
	setScript(t, e, `[{"match":{"functionResponse":"get_weather"},"text":"22 degrees"}]`)
	if got := text(mustGenerate(t, e, call("gemini-flash-lite-latest", first))); strings.Contains(got, "22") {
		t.Errorf("functionResponse matcher matched the first leg: %q", got)
	}
	if got := text(mustGenerate(t, e, call("gemini-flash-lite-latest", round))); got != "22 degrees" {
		t.Errorf("functionResponse matcher: %q", got)
	}
	stripped := strings.Replace(round, `"thoughtSignature"`, `"other"`, 1)
	_, err := e.GenerateContent(context.Background(), call("gemini-flash-lite-latest", stripped))
	want := "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:get_weather` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != 400 || ae.Status != "INVALID_ARGUMENT" || ae.Message != want || ae.Details != nil {
		t.Errorf("missing signature: %v", err)
	}
	// Gemini 2.5 does not enforce signatures.
	if _, err := e.GenerateContent(context.Background(), call("gemini-2.5-flash", stripped)); err != nil {
		t.Errorf("2.5 rejected a call without signature: %v", err)
	}
}

func TestJSONModeFollowsSchema(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	body := `{"contents":[{"parts":[{"text":"a word"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"word":{"type":"STRING"},"n":{"type":"INTEGER"},"kind":{"type":"STRING","format":"enum","enum":["noun","verb"]},"tags":{"type":"ARRAY","items":{"type":"STRING"}},"maybe":{"anyOf":[{"type":"BOOLEAN"},{"type":"STRING"}]}},"propertyOrdering":["word","n"]}}}`
	got := text(mustGenerate(t, e, call("gemini-2.5-flash", body)))
	want := `{"kind":"noun","maybe":true,"n":1,"tags":["pyric"],"word":"pyric"}`
	var v any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("JSON-mode text does not parse: %q", got)
	}
	if b, _ := json.Marshal(v); string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	// A scripted json answer is returned as compact JSON text.
	setScript(t, e, `[{"json":{"word": "flame"}}]`)
	if got := text(mustGenerate(t, e, call("gemini-2.5-flash", body))); got != `{"word":"flame"}` {
		t.Errorf("scripted json %q", got)
	}
}

func TestErrorEnvelopes(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{APIKeys: []string{"good-key"}})
	c := func(model, key, body string) Call {
		return Call{Project: "demo-ai", Backend: BackendGoogleAI, Model: model, APIKey: key, Body: []byte(body), Service: "firebasevertexai.googleapis.com"}
	}
	cases := []struct {
		name     string
		c        Call
		code     int
		status   string
		message  string
		details  string
		reason   string
		forCount bool
	}{
		{"unknown model", c("not-a-real-model", "good-key", hello), 404, "NOT_FOUND",
			"models/not-a-real-model is not found for API version v1main, or is not supported for generateContent. Call ModelService.ListModels to see the list of available models and their supported methods.", "", "", false},
		{"retired model", c("gemini-1.5-flash", "good-key", hello), 404, "NOT_FOUND",
			"Gemini 1.5 models are retired as of September 24, 2025. Update to a newer model version. [Learn more.](https://firebase.google.com/docs/ai-logic/faq-and-troubleshooting#discontinued-models)",
			"type.googleapis.com/google.rpc.ErrorInfo", "RETIRED_MODEL", false},
		{"bad api key", c("gemini-2.5-flash", "bad-key", hello), 400, "INVALID_ARGUMENT",
			"API key not valid. Please pass a valid API key.",
			"type.googleapis.com/google.rpc.ErrorInfo,type.googleapis.com/google.rpc.LocalizedMessage", "API_KEY_INVALID", false},
		{"no api key", c("gemini-2.5-flash", "", hello), 403, "PERMISSION_DENIED",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", "", "", false},
		{"empty contents", c("gemini-2.5-flash", "good-key", `{"contents":[]}`), 400, "INVALID_ARGUMENT",
			"* GenerateContentRequest.contents: contents is not specified\n", "", "", false},
		{"no contents", c("gemini-2.5-flash", "good-key", `{}`), 400, "INVALID_ARGUMENT",
			"* GenerateContentRequest.contents: contents is not specified\n", "", "", false},
		{"bad role", c("gemini-2.5-flash", "good-key", `{"contents":[{"role":"banana","parts":[{"text":"x"}]}]}`), 400, "INVALID_ARGUMENT",
			"Role 'banana' is not supported. Please use a valid role: SYSTEM, SYSTEM_1, USER, ASSISTANT, DEVELOPER, CONTEXT, USER_CONTEXT, MODEL, USER.", "", "", false},
		{"empty parts", c("gemini-2.5-flash", "good-key", `{"contents":[{"role":"user","parts":[]}]}`), 400, "INVALID_ARGUMENT",
			"* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n", "", "", false},
		{"not an object", c("gemini-2.5-flash", "good-key", `[1]`), 400, "INVALID_ARGUMENT",
			"Invalid JSON payload received. Unknown name \"\": Root element must be a message.", "type.googleapis.com/google.rpc.BadRequest", "", false},
		{"count unknown model", c("nope", "good-key", hello), 404, "NOT_FOUND",
			"models/nope is not found for API version v1main, or is not supported for countTokens. Call ModelService.ListModels to see the list of available models and their supported methods.", "", "", true},
	}
	for _, tc := range cases {
		var err error
		if tc.forCount {
			_, err = e.CountTokens(context.Background(), tc.c)
		} else {
			_, err = e.GenerateContent(context.Background(), tc.c)
		}
		var ae *Error
		if !errors.As(err, &ae) {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if ae.Code != tc.code || ae.Status != tc.status || ae.Message != tc.message {
			t.Errorf("%s: got %d %s %q", tc.name, ae.Code, ae.Status, ae.Message)
		}
		var types []string
		for _, d := range ae.Details {
			types = append(types, d["@type"].(string))
			if r, ok := d["reason"]; ok && r != tc.reason {
				t.Errorf("%s: reason %v", tc.name, r)
			}
		}
		if strings.Join(types, ",") != tc.details {
			t.Errorf("%s: details %v", tc.name, types)
		}
		b, _ := json.Marshal(map[string]*Error{"error": ae})
		env := decode(t, b)
		wantKeys := "code,message,status"
		if tc.details != "" {
			wantKeys = "code,details,message,status"
		}
		if keys(env["error"]) != wantKeys {
			t.Errorf("%s: error keys %s", tc.name, keys(env["error"]))
		}
		// The same refusal through the stream entry point.
		if !tc.forCount {
			err := e.StreamGenerateContent(context.Background(), tc.c, func([]byte) error { t.Errorf("%s: a chunk was streamed", tc.name); return nil })
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Errorf("%s: stream err %v", tc.name, err)
			}
		}
	}
	// OAuth without a key is accepted (Vertex AI clients).
	oauth := c("gemini-2.5-flash", "", hello)
	oauth.OAuth = true
	if _, err := e.GenerateContent(context.Background(), oauth); err != nil {
		t.Errorf("oauth: %v", err)
	}
}

// ai-generate-stream-framing: complete chunks, usage on each, finishReason
// only on the last.
// conformance: ai.stream.framing
func TestStreamFraming(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	long := prompt("one two three four five six seven eight nine ten")
	for _, model := range []string{"gemini-flash-lite-latest", "gemini-2.5-flash"} {
		chunks := streamChunks(t, e, call(model, long))
		if len(chunks) < 2 {
			t.Fatalf("%s: %d chunks", model, len(chunks))
		}
		all := ""
		for i, ch := range chunks {
			if ch["usageMetadata"] == nil || ch["responseId"] == nil || ch["modelVersion"] == nil {
				t.Errorf("%s: chunk %d lacks usage/ids: %v", model, i, ch)
			}
			_, fin := path(ch, "candidates", 0).(map[string]any)["finishReason"]
			if fin != (i == len(chunks)-1) {
				t.Errorf("%s: chunk %d finishReason presence %v", model, i, fin)
			}
			all += text(ch)
		}
		if all != "pyric: one two three four five six seven eight nine ten" {
			t.Errorf("%s: concatenated %q", model, all)
		}
		lastPart := path(chunks[len(chunks)-1], "candidates", 0, "content", "parts", 0).(map[string]any)
		if model == "gemini-flash-lite-latest" && (lastPart["text"] != "" || lastPart["thoughtSignature"] == nil) {
			t.Errorf("thinking model's last chunk %v", lastPart)
		}
	}
	setScript(t, e, `[{"chunks":["1 2 3"," 4 5"," 6"]}]`)
	chunks := streamChunks(t, e, call("gemini-2.5-flash", hello))
	var got []string
	for _, ch := range chunks {
		got = append(got, text(ch))
	}
	if strings.Join(got, "|") != "1 2 3| 4 5| 6" {
		t.Errorf("scripted chunks %q", got)
	}
	// Raw chunks stream verbatim (compacted onto one line).
	setScript(t, e, `[{"rawChunks":[{"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":0}]},{"candidates":[{"content":{"parts":[{"text":"b"}],"role":"model"},"finishReason":"STOP","index":0}]}]}]`)
	chunks = streamChunks(t, e, call("gemini-2.5-flash", hello))
	if len(chunks) != 2 || text(chunks[0]) != "a" || text(chunks[1]) != "b" {
		t.Errorf("raw chunks %v", chunks)
	}
	// A unary call answered by raw chunks gets them merged.
	setScript(t, e, `[{"rawChunks":[{"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":0}]},{"candidates":[{"content":{"parts":[{"text":"b"}],"role":"model"},"finishReason":"STOP","index":0}]}]}]`)
	if m := mustGenerate(t, e, call("gemini-2.5-flash", hello)); text(m) != "ab" || path(m, "candidates", 0, "finishReason") != "STOP" {
		t.Errorf("merged %v", m)
	}
}

func TestStreamFunctionCall(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	setScript(t, e, `[{"functionCalls":[{"name":"a","args":{"x":1}},{"name":"b"}]}]`)
	chunks := streamChunks(t, e, call("gemini-flash-lite-latest", hello))
	last := chunks[len(chunks)-1]
	parts := path(last, "candidates", 0, "content", "parts").([]any)
	if len(parts) != 2 || path(parts[0], "functionCall", "name") != "a" || path(parts[1], "functionCall", "name") != "b" {
		t.Fatalf("parts %v", parts)
	}
	if keys(path(parts[1], "functionCall")) != "args,id,name" {
		t.Errorf("second call %v", parts[1])
	}
}

func TestScriptedErrorAndSafety(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	setScript(t, e, `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota)."}},{"finishReason":"SAFETY"}]`)
	_, err := e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello))
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != 429 || ae.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("scripted error %v", err)
	}
	m := mustGenerate(t, e, call("gemini-2.5-flash", hello))
	if c0 := path(m, "candidates", 0).(map[string]any); c0["finishReason"] != "SAFETY" || c0["content"] != nil {
		t.Errorf("blocked candidate %v", c0)
	}
}

// ai-counttokens-envelope: exactly totalTokens and promptTokensDetails,
// deterministic, both body forms.
func TestCountTokens(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	wrapped := `{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"Say hello to pyric"}]}]}}`
	var outs []string
	for _, body := range []string{wrapped, wrapped, hello} {
		out, err := e.CountTokens(context.Background(), call("gemini-2.5-flash", body))
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, out)
		if keys(m) != "promptTokensDetails,totalTokens" || m["totalTokens"].(float64) < 1 {
			t.Errorf("countTokens %v", m)
		}
		outs = append(outs, string(out))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Errorf("counts differ: %v", outs)
	}
	if _, err := e.CountTokens(context.Background(), call("gemini-2.5-flash", `{"generateContentRequest":{"contents":[]}}`)); err == nil {
		t.Error("empty contents counted")
	}
}

func TestPersistenceAndSnapshot(t *testing.T) {
	t.Parallel()
	b := servicetest.NewBucket()
	e, err := New(testEnv(b, nil), Options{MaxCalls: 2})
	if err != nil {
		t.Fatal(err)
	}
	setScript(t, e, `[{"text":"one"},{"text":"two"},{"text":"three"}]`)
	mustGenerate(t, e, call("gemini-2.5-flash", hello))
	// A second engine on the same bucket (a restart) sees the consumed script.
	e2, err := New(testEnv(b, nil), Options{MaxCalls: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s := e2.Script("demo-ai"); len(s) != 2 || *s[0].Text != "two" {
		t.Fatalf("restarted script %+v", s)
	}
	if c := e2.Calls("demo-ai"); len(c) != 1 || c[0].Answer != "one" || c[0].Seq != 1 {
		t.Fatalf("restarted calls %+v", c)
	}
	mustGenerate(t, e2, call("gemini-2.5-flash", hello))
	mustGenerate(t, e2, call("gemini-2.5-flash", hello))
	calls := e2.Calls("demo-ai")
	if len(calls) != 2 || calls[0].Seq != 2 || calls[1].Seq != 3 {
		t.Fatalf("bounded log %+v", calls)
	}
	snap, err := e2.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.Reset(); err != nil {
		t.Fatal(err)
	}
	if len(e2.Calls("demo-ai")) != 0 {
		t.Error("reset kept calls")
	}
	if err := e2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if len(e2.Calls("demo-ai")) != 2 {
		t.Error("restore lost calls")
	}
	e3, _ := New(testEnv(b, nil), Options{})
	if len(e3.Calls("demo-ai")) != 2 || e3.seq != 3 {
		t.Errorf("restore not persisted: %d calls, seq %d", len(e3.Calls("demo-ai")), e3.seq)
	}
	if err := e2.Restore(json.RawMessage(`{"projects":{"p":{"script":[{}]}}}`)); err == nil {
		t.Error("restored an invalid script")
	}
	if err := e3.Clear("demo-ai"); err != nil {
		t.Fatal(err)
	}
	e4, _ := New(testEnv(b, nil), Options{})
	if len(e4.Calls("demo-ai")) != 0 || len(e4.Script("demo-ai")) != 0 {
		t.Error("clear not persisted")
	}
}

func TestEveryCallIsAnEvent(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	e, _ := New(testEnv(nil, rec), Options{})
	mustGenerate(t, e, call("gemini-2.5-flash", hello))
	e.GenerateContent(context.Background(), call("bogus", hello))
	e.CountTokens(context.Background(), call("gemini-2.5-flash", hello))
	evs := rec.all()
	if len(evs) != 3 {
		t.Fatalf("%d events", len(evs))
	}
	ev := evs[0]
	d, _ := ev.Mutation.Current.(CallEvent)
	if ev.Kind != event.KindMutation || ev.Service != "ai" || ev.Method != "generateContent" || ev.Op != OpCall || ev.Err != nil ||
		ev.Path != "projects/demo-ai/models/gemini-2.5-flash" || ev.Identity.Lens != event.LensUnauthenticated ||
		d.Prompt != "Say hello to pyric" || d.Answer != "pyric: Say hello to pyric" || d.TotalTokens < 2 || d.Status != 200 {
		t.Errorf("event %+v %+v", ev, d)
	}
	if evs[1].Err == nil || evs[1].Err.Code != "NOT_FOUND" || evs[2].Method != "countTokens" {
		t.Errorf("events %+v %+v", evs[1], evs[2])
	}
}

func TestDecodeScriptErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`[{"txt":"x"}]`:           `entry 0: json: unknown field "txt"`,
		`[{"text":"x","raw":{}}]`: "entry 0: more than one answer",
		`[{}]`:                    "entry 0: no answer",
		`[{"text":"a"},{"match":{"regex":"(?=x)"},"text":"b"}]`: "entry 1: match.regex",
		`[{"raw":[1]}]`:                  "raw must be a JSON object",
		`[{"error":{"code":200}}]`:       "not an HTTP error status",
		`[{"functionCall":{"args":{}}}]`: "needs a name",
		`"x"`:                            "a script is a JSON array",
		`{"entries":[],"extra":1}`:       "unknown field",
		`[{"match":{},"text":"x"}]`:      "match needs",
	}
	for in, want := range cases {
		_, err := DecodeScript([]byte(in))
		if err == nil || !errors.Is(err, ErrInvalidScript) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
}

func TestScriptFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := dir + "/script.json"
	if err := writeFile(f, `[{"text":"from file"}]`); err != nil {
		t.Fatal(err)
	}
	e, err := New(testEnv(nil, nil), Options{ScriptFile: f})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(mustGenerate(t, e, call("gemini-2.5-flash", hello))); got != "from file" {
		t.Errorf("got %q", got)
	}
	writeFile(f, `[{"nope":1}]`)
	if _, err := New(testEnv(nil, nil), Options{ScriptFile: f}); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("bad file: %v", err)
	}
}

func TestAppendScriptBound(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	many := make([]Entry, MaxScriptEntries)
	for i := range many {
		many[i] = Entry{Text: strp(fmt.Sprint(i))}
	}
	if err := e.AppendScript("demo-ai", many); err != nil {
		t.Fatal(err)
	}
	if err := e.AppendScript("demo-ai", many[:1]); !errors.Is(err, ErrInvalidScript) {
		t.Errorf("over the bound: %v", err)
	}
}

func TestStreamStoppedByClient(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	stop := errors.New("gone")
	n := 0
	err := e.StreamGenerateContent(context.Background(), call("gemini-2.5-flash", prompt("a b c d e f g h i")), func([]byte) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err %v after %d chunks", err, n)
	}
	if c := e.Calls("demo-ai"); len(c) != 1 || c[0].Status != 499 {
		t.Errorf("calls %+v", c)
	}
}

func TestSynthesizedLimitsAndEnum(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	m := mustGenerate(t, e, call("gemini-2.5-flash", `{"contents":[{"parts":[{"text":"tell me a long story about dragons"}]}],"generationConfig":{"maxOutputTokens":2}}`))
	if text(m) != "pyric: t" || path(m, "candidates", 0, "finishReason") != "MAX_TOKENS" {
		t.Errorf("max tokens: %q %v", text(m), path(m, "candidates", 0, "finishReason"))
	}
	m = mustGenerate(t, e, call("gemini-2.5-flash", `{"contents":[{"parts":[{"text":"pick"}]}],"generationConfig":{"responseMimeType":"text/x.enum","responseSchema":{"type":"STRING","format":"enum","enum":["red","blue"]}}}`))
	if text(m) != "red" {
		t.Errorf("enum: %q", text(m))
	}
}

// The call log is bounded across projects, not per project.
func TestCallLogBoundAcrossProjects(t *testing.T) {
	t.Parallel()
	b := servicetest.NewBucket()
	e, _ := New(testEnv(b, nil), Options{MaxCalls: 3})
	for i := 0; i < 10; i++ {
		c := call("gemini-2.5-flash", hello)
		c.Project = fmt.Sprintf("p%d", i)
		mustGenerate(t, e, c)
	}
	total := 0
	for i := 0; i < 10; i++ {
		total += len(e.Calls(fmt.Sprintf("p%d", i)))
	}
	if total != 3 || len(e.Calls("p9")) != 1 || len(e.Calls("p0")) != 0 || len(e.projects) > 4 {
		t.Errorf("total %d, projects %d", total, len(e.projects))
	}
	e2, _ := New(testEnv(b, nil), Options{MaxCalls: 3})
	if len(e2.Calls("p7")) != 1 || len(e2.Calls("p6")) != 0 {
		t.Error("bucket not trimmed")
	}
}

// A script change or a consumed entry the bucket could not persist
// changes nothing: the caller gets the error, memory keeps the old script
// (the sandbox's bbolt bucket would have rolled back too).
func TestNothingUnpersisted(t *testing.T) {
	t.Parallel()
	b := servicetest.NewBucket()
	e, err := New(testEnv(b, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	setScript(t, e, `[{"text":"kept"}]`)
	entries, _ := DecodeScript([]byte(`[{"text":"new"}]`))
	steps := []struct {
		name string
		do   func() error
	}{
		{"set", func() error { return e.SetScript("demo-ai", entries) }},
		{"append", func() error { return e.AppendScript("demo-ai", entries) }},
		{"clear", func() error { return e.Clear("demo-ai") }},
		{"consume", func() error {
			_, err := e.GenerateContent(t.Context(), call("gemini-2.5-flash", hello))
			return err
		}},
		{"consume streaming", func() error {
			return e.StreamGenerateContent(t.Context(), call("gemini-2.5-flash", hello), func([]byte) error { return nil })
		}},
	}
	for _, s := range steps {
		b.FailNextUpdate()
		err := s.do()
		if !errors.Is(err, servicetest.ErrInjected) && AsError(err).Code != 500 {
			t.Errorf("%s: error %v, want the bucket's", s.name, err)
		}
		if got := e.Script("demo-ai"); len(got) != 1 || *got[0].Text != "kept" {
			t.Errorf("%s changed the script although it was not persisted: %+v", s.name, got)
		}
	}
	if m := mustGenerate(t, e, call("gemini-2.5-flash", hello)); text(m) != "kept" {
		t.Errorf("after the failures: %v", m)
	}
}
