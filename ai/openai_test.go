package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeOpenAI is a local OpenAI-compatible server: it records requests and
// answers with the handler's body.
type fakeOpenAI struct {
	mu   sync.Mutex
	reqs []map[string]any
	auth []string
}

func (f *fakeOpenAI) start(t *testing.T, answer func(req map[string]any, w http.ResponseWriter)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		f.mu.Lock()
		f.reqs = append(f.reqs, m)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		answer(m, w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeOpenAI) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[len(f.reqs)-1]
}

// conformance: ai.openai.translation
func TestOpenAITranslation(t *testing.T) {
	t.Parallel()
	fake := &fakeOpenAI{}
	srv := fake.start(t, func(req map[string]any, w http.ResponseWriter) {
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"It is sunny.","tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"CET\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":7}}`)
	})
	e := newEngine(t, Options{OpenAI: &OpenAIOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-local", Model: "llama3"}})
	body := `{
	  "systemInstruction": {"parts": [{"text": "Be brief."}]},
	  "contents": [
	    {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
	    {"role": "model", "parts": [{"text": "thinking", "thought": true}, {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"}, {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
	    {"role": "function", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp": 22}}}, {"functionResponse": {"name": "get_weather", "response": {"temp": 25}}}]}
	  ],
	  "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "propertyOrdering": ["city"]}}]}],
	  "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
	  "generationConfig": {"temperature": 0.5, "maxOutputTokens": 100}
	}`
	m := mustGenerate(t, e, call("gemini-2.5-flash", body))
	req := fake.last()
	if fake.auth[0] != "Bearer sk-local" || req["model"] != "llama3" || req["tool_choice"] != "required" || req["temperature"] != 0.5 || req["max_tokens"] != float64(100) {
		t.Errorf("request %v", req)
	}
	msgs, _ := json.Marshal(req["messages"])
	want := `[{"content":"Be brief.","role":"system"},{"content":"Weather in Paris and Rome?","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"call_0","type":"function"},{"function":{"arguments":"{\"city\":\"Rome\"}","name":"get_weather"},"id":"call_1","type":"function"}]},{"content":"{\"temp\":22}","role":"tool","tool_call_id":"call_0"},{"content":"{\"temp\":25}","role":"tool","tool_call_id":"call_1"}]`
	if string(msgs) != want {
		t.Errorf("messages\n got %s\nwant %s", msgs, want)
	}
	tools, _ := json.Marshal(req["tools"])
	if string(tools) != `[{"function":{"description":"Weather","name":"get_weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}},"type":"function"}]` {
		t.Errorf("tools %s", tools)
	}
	// Back: a Gemini envelope with role model, parsed args, minted signature.
	if path(m, "candidates", 0, "content", "role") != "model" || text(m) != "It is sunny." {
		t.Errorf("envelope %v", m)
	}
	fc := path(m, "candidates", 0, "content", "parts", 1).(map[string]any)
	if path(fc, "functionCall", "id") != "call_9" || path(fc, "functionCall", "args", "tz") != "CET" || fc["thoughtSignature"] == nil {
		t.Errorf("call part %v", fc)
	}
	if path(m, "usageMetadata", "promptTokenCount") != float64(40) || path(m, "usageMetadata", "candidatesTokenCount") != float64(7) {
		t.Errorf("usage %v", m["usageMetadata"])
	}
	if c := e.Calls("demo-ai"); c[0].Source != "openai" {
		t.Errorf("source %v", c[0].Source)
	}
	// Scripts still win over the upstream.
	setScript(t, e, `[{"text":"scripted"}]`)
	if got := text(mustGenerate(t, e, call("gemini-2.5-flash", hello))); got != "scripted" {
		t.Errorf("script lost to upstream: %q", got)
	}
}

func TestOpenAIFunctionResponseByID(t *testing.T) {
	t.Parallel()
	o, _ := newOpenAI(OpenAIOptions{BaseURL: "http://127.0.0.1:1"})
	r, err := DecodeRequest([]byte(`{"contents":[
	  {"role":"user","parts":[{"text":"x"}]},
	  {"role":"model","parts":[{"functionCall":{"name":"a","id":"A"}},{"functionCall":{"name":"b","id":"B"}}]},
	  {"role":"user","parts":[{"functionResponse":{"name":"b","id":"B","response":{}}},{"functionResponse":{"name":"a","response":{}}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := o.translate(r, "m")
	if req.Messages[2].ToolCallID != "B" || req.Messages[3].ToolCallID != "A" {
		t.Errorf("ids %+v", req.Messages)
	}
}

func TestOpenAIStreamBuffersToolCalls(t *testing.T) {
	t.Parallel()
	fake := &fakeOpenAI{}
	srv := fake.start(t, func(req map[string]any, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":"Let me "}}]}`,
			`{"choices":[{"delta":{"content":"check."}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	})
	e := newEngine(t, Options{OpenAI: &OpenAIOptions{BaseURL: srv.URL + "/v1"}})
	chunks := streamChunks(t, e, call("gemini-2.5-flash", hello))
	if req := fake.last(); req["stream"] != true {
		t.Errorf("request %v", req)
	}
	if len(chunks) != 3 {
		t.Fatalf("%d chunks: %v", len(chunks), chunks)
	}
	if text(chunks[0]) != "Let me " || text(chunks[1]) != "check." {
		t.Errorf("text chunks %v %v", chunks[0], chunks[1])
	}
	last := chunks[2]
	fc := path(last, "candidates", 0, "content", "parts", 0, "functionCall")
	if path(fc, "name") != "get_weather" || path(fc, "args", "city") != "Paris" || path(last, "candidates", 0, "finishReason") != "STOP" {
		t.Errorf("final chunk %v", last)
	}
	for i, ch := range chunks[:2] {
		if _, fin := path(ch, "candidates", 0).(map[string]any)["finishReason"]; fin || ch["usageMetadata"] == nil {
			t.Errorf("chunk %d %v", i, ch)
		}
	}
	if path(last, "usageMetadata", "candidatesTokenCount") != float64(9) {
		t.Errorf("usage %v", last["usageMetadata"])
	}
}

func TestOpenAIUpstreamErrors(t *testing.T) {
	t.Parallel()
	fake := &fakeOpenAI{}
	status := 429
	srv := fake.start(t, func(req map[string]any, w http.ResponseWriter) {
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"message":"slow down"}}`)
	})
	e := newEngine(t, Options{OpenAI: &OpenAIOptions{BaseURL: srv.URL + "/v1"}})
	_, err := e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello))
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != 429 || !strings.Contains(ae.Message, "slow down") {
		t.Errorf("429: %v", err)
	}
	status = 500
	_, err = e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello))
	if !errors.As(err, &ae) || ae.Code != 503 || ae.Status != "UNAVAILABLE" {
		t.Errorf("500: %v", err)
	}
	dead := newEngine(t, Options{OpenAI: &OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1"}})
	if _, err := dead.GenerateContent(context.Background(), call("gemini-2.5-flash", hello)); !errors.As(err, &ae) || ae.Code != 503 {
		t.Errorf("unreachable: %v", err)
	}
	if _, err := New(testEnv(nil, nil), Options{OpenAI: &OpenAIOptions{BaseURL: "ftp://x"}}); err == nil {
		t.Error("accepted a non-http base URL")
	}
}

func TestOpenAIFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if OpenAIFromEnv(get) != nil {
		t.Error("configured without a base URL")
	}
	env[EnvOpenAIBaseURL], env[EnvOpenAIAPIKey], env[EnvOpenAIModel] = "http://127.0.0.1:11434/v1", "sk", "llama3"
	if o := OpenAIFromEnv(get); o == nil || o.BaseURL != "http://127.0.0.1:11434/v1" || o.APIKey != "sk" || o.Model != "llama3" {
		t.Errorf("options %+v", o)
	}
}
