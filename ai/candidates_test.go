package ai

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// candidatesBody asks for n candidates of prompt p.
func candidatesBody(p string, n int) string {
	return strings.TrimSuffix(prompt(p), "}") + fmt.Sprintf(`,"generationConfig":{"candidateCount":%d}}`, n)
}

// candidateText is the text of candidate i of a decoded response.
func candidateText(m map[string]any, i int) string {
	s := ""
	parts, _ := path(m, "candidates", i, "content", "parts").([]any)
	for _, p := range parts {
		if t, ok := p.(map[string]any)["text"].(string); ok {
			s += t
		}
	}
	return s
}

func TestCandidateCountSynthesized(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	m := mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("hi there", 3)))
	cands, _ := m["candidates"].([]any)
	if len(cands) != 3 {
		t.Fatalf("%d candidates: %v", len(cands), m)
	}
	want := []string{"pyric: hi there", "pyric (candidate 2): hi there", "pyric (candidate 3): hi there"}
	tokens := 0
	for i := range cands {
		if path(m, "candidates", i, "index") != float64(i) || path(m, "candidates", i, "finishReason") != "STOP" || candidateText(m, i) != want[i] {
			t.Errorf("candidate %d: %v", i, cands[i])
		}
		tokens += textTokens(want[i])
	}
	if u := path(m, "usageMetadata", "candidatesTokenCount"); u != float64(tokens) {
		t.Errorf("candidatesTokenCount %v, want %d (every candidate)", u, tokens)
	}
	// Deterministic: the same request, the same envelope.
	if again := mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("hi there", 3))); fmt.Sprint(again) != fmt.Sprint(m) {
		t.Errorf("not deterministic:\n%v\n%v", again, m)
	}
	// candidateCount 0 is proto3's unset: one candidate.
	if m := mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("x", 0))); len(m["candidates"].([]any)) != 1 {
		t.Errorf("candidateCount 0: %v", m)
	}
	// Vertex AI serves Gemini 3 with several candidates, signed.
	c := call("gemini-3-flash-preview", candidatesBody("x", 2))
	c.Backend = BackendVertexAI
	m = mustGenerate(t, e, c)
	if len(m["candidates"].([]any)) != 2 || path(m, "candidates", 1, "content", "parts", 0, "thoughtSignature") == nil {
		t.Errorf("vertex gemini 3: %v", m)
	}
}

func TestCandidateCountScripted(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	// Each candidate takes the script's next answer; past the script the
	// synthesizer answers; a raw envelope past the first candidate gives
	// its first candidate.
	setScript(t, e, `[{"text":"one"},{"raw":{"candidates":[{"content":{"parts":[{"text":"raw two"}],"role":"model"},"finishReason":"STOP","index":0}]}},{"text":"later"}]`)
	m := mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("q", 2)))
	if candidateText(m, 0) != "one" || candidateText(m, 1) != "raw two" || path(m, "candidates", 1, "index") != float64(1) {
		t.Errorf("scripted candidates: %v", m)
	}
	m = mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("q", 3)))
	if candidateText(m, 0) != "later" || candidateText(m, 1) != "pyric (candidate 2): q" || candidateText(m, 2) != "pyric (candidate 3): q" {
		t.Errorf("script then synthesized: %v", m)
	}
	// A raw envelope first is returned verbatim and takes one entry.
	raw := `{"candidates":[{"content":{"parts":[{"text":"verbatim"}],"role":"model"},"finishReason":"STOP","index":0}]}`
	setScript(t, e, `[{"raw":`+raw+`},{"text":"kept"}]`)
	out, err := e.GenerateContent(t.Context(), call("gemini-2.5-flash", candidatesBody("q", 2)))
	if err != nil || string(out) != raw {
		t.Errorf("raw first: %s %v", out, err)
	}
	if left := e.Script("demo-ai"); len(left) != 1 || *left[0].Text != "kept" {
		t.Errorf("script after a raw first answer: %+v", left)
	}
	// A scripted error for any candidate fails the call with it.
	setScript(t, e, `[{"text":"fine"},{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}]`)
	if _, err := e.GenerateContent(t.Context(), call("gemini-2.5-flash", candidatesBody("q", 2))); AsError(err).Code != 429 {
		t.Errorf("scripted error on candidate 2: %v", err)
	}
	// Function calls per candidate, ids minted apart.
	setScript(t, e, `[{"functionCall":{"name":"f","args":{"a":1}}},{"functionCall":{"name":"g"}}]`)
	m = mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("q", 2)))
	id0, id1 := path(m, "candidates", 0, "content", "parts", 0, "functionCall", "id"), path(m, "candidates", 1, "content", "parts", 0, "functionCall", "id")
	if path(m, "candidates", 1, "content", "parts", 0, "functionCall", "name") != "g" || id0 == nil || id0 == id1 {
		t.Errorf("function-call candidates: %v", m)
	}
}

func TestCandidateCountStream(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	setScript(t, e, `[{"chunks":["a1","a2","a3"]},{"chunks":["b1"]}]`)
	chunks := streamChunks(t, e, call("gemini-2.5-flash", candidatesBody("q", 2)))
	got := map[int]string{}
	for k, ch := range chunks {
		if ch["usageMetadata"] == nil {
			t.Errorf("chunk %d lacks usageMetadata", k)
		}
		cands, _ := ch["candidates"].([]any)
		for _, c := range cands {
			cm := c.(map[string]any)
			i := int(cm["index"].(float64))
			_, fin := cm["finishReason"]
			if fin != (k == len(chunks)-1) {
				t.Errorf("chunk %d candidate %d: finishReason presence %v", k, i, fin)
			}
			for _, p := range path(cm, "content", "parts").([]any) {
				got[i] += p.(map[string]any)["text"].(string)
			}
		}
	}
	if got[0] != "a1a2a3" || got[1] != "b1" || len(chunks) != 3 {
		t.Errorf("streamed candidates %v over %d chunks", got, len(chunks))
	}
	last := chunks[len(chunks)-1]
	if n := len(last["candidates"].([]any)); n != 2 {
		t.Errorf("last chunk carries %d candidates, want both", n)
	}
}

func TestCandidateCountLimits(t *testing.T) {
	t.Parallel()
	e := newEngine(t, Options{})
	for _, tc := range []struct {
		model   string
		n       int
		backend string
		want    string
	}{
		{"gemini-2.5-flash", 9, BackendGoogleAI, "Unable to submit request because it has a candidateCount value of 9 but the supported range is from 1 (inclusive) to 9 (exclusive). Update the value and try again."},
		{"gemini-2.5-flash", -1, BackendVertexAI, "candidateCount value of -1"},
		{"gemini-3-flash-preview", 2, BackendGoogleAI, "Multiple candidates is not enabled for this model"},
		{"gemini-flash-lite-latest", 2, BackendGoogleAI, "Multiple candidates is not enabled for this model"},
	} {
		c := call(tc.model, candidatesBody("q", tc.n))
		c.Backend = tc.backend
		_, err := e.GenerateContent(t.Context(), c)
		ae := AsError(err)
		if ae.Code != 400 || ae.Status != "INVALID_ARGUMENT" || !strings.Contains(ae.Message, tc.want) {
			t.Errorf("%s n=%d on %s: %v", tc.model, tc.n, tc.backend, err)
		}
		serr := e.StreamGenerateContent(t.Context(), c, func([]byte) error { return nil })
		if AsError(serr).Message != ae.Message {
			t.Errorf("%s n=%d stream: %v", tc.model, tc.n, serr)
		}
	}
	if m := mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("q", MaxCandidates))); len(m["candidates"].([]any)) != MaxCandidates {
		t.Errorf("%d candidates: %v", MaxCandidates, m)
	}
}

// The OpenAI-compatible engine answers each candidate with its own
// upstream call, in generateContent and in the stream.
func TestCandidateCountOpenAI(t *testing.T) {
	t.Parallel()
	fake := &fakeOpenAI{}
	n := 0
	srv := fake.start(t, func(req map[string]any, w http.ResponseWriter) {
		fake.mu.Lock()
		n++
		i := n
		fake.mu.Unlock()
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"answer %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, i)
	})
	e := newEngine(t, Options{OpenAI: &OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "llama3"}})
	m := mustGenerate(t, e, call("gemini-2.5-flash", candidatesBody("q", 2)))
	if candidateText(m, 0) != "answer 1" || candidateText(m, 1) != "answer 2" || path(m, "usageMetadata", "candidatesTokenCount") != float64(4) {
		t.Errorf("openai candidates: %v", m)
	}
	chunks := streamChunks(t, e, call("gemini-2.5-flash", candidatesBody("q", 2)))
	last := chunks[len(chunks)-1]
	if candidateText(last, 0) != "answer 3" || candidateText(last, 1) != "answer 4" {
		t.Errorf("openai streamed candidates: %v", chunks)
	}
}
