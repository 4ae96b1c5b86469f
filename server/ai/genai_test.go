package aiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/pyric/pyric/ai"
)

// bearer is a Vertex AI client's transport: an OAuth token on every call.
type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer ya29.local-test-token")
	return http.DefaultTransport.RoundTrip(r)
}

// clients returns genai clients of every backend shape pointed at srv.
func clients(t *testing.T, url string) map[string]*genai.Client {
	t.Helper()
	for _, k := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"} {
		t.Setenv(k, "")
	}
	ctx := context.Background()
	mk := func(cfg *genai.ClientConfig) *genai.Client {
		cfg.HTTPOptions.BaseURL = url
		c, err := genai.NewClient(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return map[string]*genai.Client{
		"gemini": mk(&genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "test-key"}),
		"vertex": mk(&genai.ClientConfig{Backend: genai.BackendVertexAI, Project: "demo-ai", Location: "us-central1",
			HTTPClient: &http.Client{Transport: bearer{}}}),
		"express": mk(&genai.ClientConfig{Backend: genai.BackendVertexAI, APIKey: "test-key"}),
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGenAIGenerateStreamCount(t *testing.T) {
	srv, eng := newServer(t, ai.Options{})
	ctx := ctxT(t)
	for name, c := range clients(t, srv.URL) {
		resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("Say hello to pyric"), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if resp.Text() != "pyric: Say hello to pyric" || resp.Candidates[0].FinishReason != genai.FinishReasonStop ||
			resp.UsageMetadata.TotalTokenCount == 0 || resp.ResponseID == "" || resp.ModelVersion != "gemini-2.5-flash" {
			t.Errorf("%s: response %+v", name, resp)
		}
		var text strings.Builder
		n, finishes := 0, 0
		for chunk, err := range c.Models.GenerateContentStream(ctx, "gemini-flash-lite-latest", genai.Text("one two three four five six"), nil) {
			if err != nil {
				t.Fatalf("%s stream: %v", name, err)
			}
			n++
			text.WriteString(chunk.Text())
			if chunk.UsageMetadata == nil {
				t.Errorf("%s: chunk %d without usage", name, n)
			}
			if chunk.Candidates[0].FinishReason != "" {
				finishes++
			}
		}
		if n < 2 || finishes != 1 || text.String() != "pyric: one two three four five six" {
			t.Errorf("%s: %d chunks, %d finishes, text %q", name, n, finishes, text.String())
		}
		ct, err := c.Models.CountTokens(ctx, "gemini-2.5-flash", genai.Text("Say hello to pyric"), nil)
		if err != nil || ct.TotalTokens == 0 {
			t.Errorf("%s: countTokens %+v %v", name, ct, err)
		}
	}
	// Each client reached its own path shape.
	backends := map[string]int{}
	for _, rec := range eng.Calls("demo-ai") {
		backends[rec.Backend]++
	}
	if backends[ai.BackendGoogleAI] != 3 || backends[ai.BackendVertexAI] != 6 {
		t.Errorf("calls per backend %v", backends)
	}
}

func TestGenAIChatHistory(t *testing.T) {
	srv, eng := newServer(t, ai.Options{})
	ctx := ctxT(t)
	c := clients(t, srv.URL)["gemini"]
	entries, _ := ai.DecodeScript([]byte(`[{"text":"Nice to meet you, Ada."},{"match":{"contains":"my name"},"text":"Your name is Ada."}]`))
	eng.SetScript("demo-ai", entries)
	chat, err := c.Chats.Create(ctx, "gemini-2.5-flash", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := chat.SendMessage(ctx, genai.Part{Text: "I am Ada."}); err != nil || r.Text() != "Nice to meet you, Ada." {
		t.Fatalf("first: %v %v", r, err)
	}
	var streamed strings.Builder
	for chunk, err := range chat.SendMessageStream(ctx, genai.Part{Text: "What is my name?"}) {
		if err != nil {
			t.Fatal(err)
		}
		streamed.WriteString(chunk.Text())
	}
	if streamed.String() != "Your name is Ada." {
		t.Errorf("second: %q", streamed.String())
	}
	// The SDK records a streamed answer as its chunks' contents.
	h := chat.History(true)
	var second strings.Builder
	for _, c := range h[3:] {
		if c.Role != "model" {
			t.Errorf("history role %q", c.Role)
		}
		for _, p := range c.Parts {
			second.WriteString(p.Text)
		}
	}
	if len(h) < 4 || h[0].Role != "user" || h[1].Role != "model" || h[1].Parts[0].Text != "Nice to meet you, Ada." || h[2].Role != "user" || second.String() != "Your name is Ada." {
		t.Errorf("history %d contents, second answer %q", len(h), second.String())
	}
	calls := eng.Calls("demo-ai")
	if !strings.Contains(string(calls[1].Request), "Nice to meet you, Ada.") {
		t.Errorf("second request lacks the history: %s", calls[1].Request)
	}
}

func TestGenAIFunctionCalling(t *testing.T) {
	srv, _ := newServer(t, ai.Options{})
	ctx := ctxT(t)
	c := clients(t, srv.URL)["gemini"]
	cfg := &genai.GenerateContentConfig{
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "get_weather", Description: "Weather of a city",
			Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}, Required: []string{"city"}},
		}}}},
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}},
	}
	const model = "gemini-flash-lite-latest"
	user := genai.NewContentFromText("Weather in Paris?", genai.RoleUser)
	resp, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fcs := resp.FunctionCalls()
	if len(fcs) != 1 || fcs[0].Name != "get_weather" || fcs[0].ID == "" || fcs[0].Args["city"] == nil {
		t.Fatalf("function calls %+v", fcs)
	}
	modelTurn := resp.Candidates[0].Content
	if len(modelTurn.Parts[0].ThoughtSignature) == 0 {
		t.Fatal("no thought signature on the call")
	}
	result := genai.NewContentFromFunctionResponse("get_weather", map[string]any{"temp": 22}, genai.RoleUser)
	result.Parts[0].FunctionResponse.ID = fcs[0].ID
	cfg.ToolConfig = nil
	answer, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user, modelTurn, result}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if answer.Text() != `pyric: get_weather returned {"temp":22}` || len(answer.FunctionCalls()) != 0 {
		t.Errorf("answer %q", answer.Text())
	}
	// Replaying the call without its signature is production's 400.
	stripped := *modelTurn
	p := *modelTurn.Parts[0]
	p.ThoughtSignature = nil
	stripped.Parts = []*genai.Part{&p}
	_, err = c.Models.GenerateContent(ctx, model, []*genai.Content{user, &stripped, result}, cfg)
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 400 || ae.Status != "INVALID_ARGUMENT" || !strings.Contains(ae.Message, "Function call is missing a thought_signature in functionCall parts") || !strings.Contains(ae.Message, "`default_api:get_weather` , position 2") {
		t.Errorf("stripped signature: %v", err)
	}
}

func TestGenAIScriptedVerbatimAndJSON(t *testing.T) {
	srv, eng := newServer(t, ai.Options{})
	ctx := ctxT(t)
	c := clients(t, srv.URL)["vertex"]
	entries, _ := ai.DecodeScript([]byte(`[{"raw":{"candidates":[{"content":{"parts":[{"text":"The weather in Paris is clear with a temperature of 22°C.","thoughtSignature":"EjQKMgERTTIPevU90Ul2ojBMEUvswVEQtpH2CCkaYfhCK46N4QViRsL43qnucf+qpsd7e0Nd"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":89,"candidatesTokenCount":16,"totalTokenCount":105,"promptTokensDetails":[{"modality":"TEXT","tokenCount":89}],"serviceTier":"standard"},"modelVersion":"gemini-3.1-flash-lite","responseId":"JE9QavatJPON_PUP2quBsQw"}}]`))
	eng.SetScript("demo-ai", entries)
	resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("weather?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "The weather in Paris is clear with a temperature of 22°C." || resp.ResponseID != "JE9QavatJPON_PUP2quBsQw" || resp.UsageMetadata.TotalTokenCount != 105 {
		t.Errorf("raw answer %+v", resp)
	}
	js, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("a word"), &genai.GenerateContentConfig{
		ResponseMIMEType: "application/json",
		ResponseSchema:   &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"word": {Type: genai.TypeString}}},
	})
	if err != nil || js.Text() != `{"word":"pyric"}` {
		t.Errorf("JSON mode %v %v", js, err)
	}
}

func TestGenAIErrors(t *testing.T) {
	srv, _ := newServer(t, ai.Options{APIKeys: []string{"test-key"}})
	ctx := ctxT(t)
	cs := clients(t, srv.URL)
	bad, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "wrong", HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		c        *genai.Client
		model    string
		contents []*genai.Content
		code     int
		status   string
		msg      string
		details  int
	}{
		{"unknown model", cs["gemini"], "not-a-real-model", genai.Text("x"), 404, "NOT_FOUND", "models/not-a-real-model is not found for API version v1main", 0},
		{"retired model", cs["vertex"], "gemini-1.5-flash", genai.Text("x"), 404, "NOT_FOUND", "Gemini 1.5 models are retired as of September 24, 2025.", 1},
		{"bad api key", bad, "gemini-2.5-flash", genai.Text("x"), 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", 2},
		{"empty contents", cs["gemini"], "gemini-2.5-flash", []*genai.Content{}, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified", 0},
		{"bad role", cs["express"], "gemini-2.5-flash", []*genai.Content{{Role: "banana", Parts: []*genai.Part{{Text: "x"}}}}, 400, "INVALID_ARGUMENT", "Role 'banana' is not supported. Please use a valid role: SYSTEM, SYSTEM_1, USER, ASSISTANT, DEVELOPER, CONTEXT, USER_CONTEXT, MODEL, USER.", 0},
	}
	for _, tc := range cases {
		_, err := tc.c.Models.GenerateContent(ctx, tc.model, tc.contents, nil)
		var ae genai.APIError
		if !errors.As(err, &ae) || ae.Code != tc.code || ae.Status != tc.status || !strings.HasPrefix(ae.Message, tc.msg) || len(ae.Details) != tc.details {
			t.Errorf("%s: %#v", tc.name, err)
		}
		// Streams refuse the same way, before any chunk.
		for _, err := range tc.c.Models.GenerateContentStream(ctx, tc.model, tc.contents, nil) {
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Errorf("%s stream: %v", tc.name, err)
			}
			break
		}
	}
	if _, err := bad.Models.CountTokens(ctx, "gemini-2.5-flash", genai.Text("x"), nil); err == nil {
		t.Error("countTokens with a bad key succeeded")
	}
}

// candidateCount > 1 through every genai backend shape: that many
// candidates, indexed, in generateContent and in the stream; a Gemini 3
// model on the Gemini API refuses as production does.
func TestGenAICandidateCount(t *testing.T) {
	srv, _ := newServer(t, ai.Options{})
	ctx := ctxT(t)
	three := &genai.GenerateContentConfig{CandidateCount: 3}
	for name, c := range clients(t, srv.URL) {
		resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("pick one"), three)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(resp.Candidates) != 3 {
			t.Fatalf("%s: %d candidates", name, len(resp.Candidates))
		}
		for i, cand := range resp.Candidates {
			want := "pyric: pick one"
			if i > 0 {
				want = fmt.Sprintf("pyric (candidate %d): pick one", i+1)
			}
			if int(cand.Index) != i || cand.Content == nil || cand.Content.Parts[0].Text != want || cand.FinishReason != genai.FinishReasonStop {
				t.Errorf("%s: candidate %d: %+v", name, i, cand)
			}
		}
		streamed := map[int32]string{}
		for chunk, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("one two three four five six"), &genai.GenerateContentConfig{CandidateCount: 2}) {
			if err != nil {
				t.Fatalf("%s stream: %v", name, err)
			}
			for _, cand := range chunk.Candidates {
				for _, p := range cand.Content.Parts {
					streamed[cand.Index] += p.Text
				}
			}
		}
		if streamed[0] != "pyric: one two three four five six" || streamed[1] != "pyric (candidate 2): one two three four five six" {
			t.Errorf("%s: streamed %q", name, streamed)
		}
	}
	_, err := clients(t, srv.URL)["gemini"].Models.GenerateContent(ctx, "gemini-3-flash-preview", genai.Text("x"), &genai.GenerateContentConfig{CandidateCount: 2})
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 400 || ae.Message != "Multiple candidates is not enabled for this model" {
		t.Errorf("gemini 3 with 2 candidates: %v", err)
	}
	_, err = clients(t, srv.URL)["vertex"].Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("x"), &genai.GenerateContentConfig{CandidateCount: 9})
	if !errors.As(err, &ae) || ae.Code != 400 || !strings.Contains(ae.Message, "supported range is from 1 (inclusive) to 9 (exclusive)") {
		t.Errorf("9 candidates: %v", err)
	}
}
