// Package aijs drives pyric's AI Logic endpoints with the official
// firebase/ai SDK (firebase@12.19.0) in Node, pointed at an in-process
// server/ai handler through RequestOptions.baseUrl.
package aijs

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
	aiserver "github.com/pyric/pyric/server/ai"
)

type failure struct {
	OK      bool     `json:"ok"`
	Code    string   `json:"code"`
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Details []string `json:"details"`
}

type observations struct {
	Generate struct {
		Text, Finish string
		Total        int
		Keys         []string
	}
	Stream struct {
		Chunks       []string
		Text, Finish string
	}
	Chat struct {
		First, Second string
		Roles         []string
	}
	Functions struct {
		Name, ID         string
		Args             map[string]any
		Signed           bool
		Answer           string
		MissingSignature failure
	}
	Count struct {
		Keys  []string
		Total int
	}
	Scripted struct {
		Text, Raw, Signature string
		Usage                int
		Chunks               []string
	}
	Vertex struct {
		Text          string
		Total         int
		Stream        string
		AgentPlatform string
	}
	JSON       map[string]any
	Errors     map[string]failure
	Candidates struct {
		Generate, Stream, Scripted []candidate
		Refused, TooMany           failure
	}
}

type candidate struct {
	Index int
	Text  string
}

func TestFirebaseAI(t *testing.T) {
	e2etest.NeedNode(t)
	eng, err := ai.New(service.Env{Project: "demo-ai"}, ai.Options{APIKeys: []string{"test-key"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(aiserver.NewHandler(eng, aiserver.Options{}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := e2etest.RunNode(t, ctx, filepath.Join(e2etest.Root(), "e2e", "ai-js", "ai.cjs"), "AI_BASE_URL="+srv.URL, "PROJECT=demo-ai")
	var o observations
	e2etest.LastJSONLine(t, out, &o)

	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	check("generate.text", o.Generate.Text, "pyric: Say hello to pyric")
	check("generate.finish", o.Generate.Finish, "STOP")
	check("generate.keys", o.Generate.Keys, []string{"content", "finishReason", "index"})
	if o.Generate.Total == 0 {
		t.Error("no usage")
	}
	check("stream.text", o.Stream.Text, "pyric: one two three four five six")
	check("stream.joined", strings.Join(o.Stream.Chunks, ""), o.Stream.Text)
	check("stream.finish", o.Stream.Finish, "STOP")
	if len(o.Stream.Chunks) < 2 {
		t.Errorf("stream chunks %q", o.Stream.Chunks)
	}
	check("chat.first", o.Chat.First, "Nice to meet you, Ada.")
	check("chat.second", o.Chat.Second, "Your name is Ada.")
	check("chat.roles", o.Chat.Roles, []string{"user", "model", "user", "model"})
	check("functions.name", o.Functions.Name, "get_weather")
	check("functions.args", o.Functions.Args, map[string]any{"city": "pyric"})
	check("functions.signed", o.Functions.Signed, true)
	check("functions.answer", o.Functions.Answer, `pyric: get_weather returned {"temp":22}`)
	if len(o.Functions.ID) != 8 {
		t.Errorf("function call id %q", o.Functions.ID)
	}
	ms := o.Functions.MissingSignature
	if ms.Status != 400 || ms.Code != "fetch-error" || !strings.Contains(ms.Message, "Function call is missing a thought_signature") || !strings.Contains(ms.Message, "position 2") {
		t.Errorf("missing signature %+v", ms)
	}
	check("count.keys", o.Count.Keys, []string{"promptTokensDetails", "totalTokens"})
	check("scripted.text", o.Scripted.Text, "Scripted, exactly.")
	check("scripted.raw", o.Scripted.Raw, "The weather in Paris is clear with a temperature of 22°C.")
	// The Google AI mapper of the SDK drops responseId; the part's
	// signature shows the captured envelope came back untouched.
	check("scripted.signature", o.Scripted.Signature, "EjQKMgERTTIPevU90Ul2ojBMEUvswVEQtpH2CCkaYfhCK46N4QViRsL43qnucf+qpsd7e0Nd")
	check("scripted.usage", o.Scripted.Usage, 105)
	check("scripted.chunks", o.Scripted.Chunks, []string{"al", "pha", " beta"})
	check("vertex.text", o.Vertex.Text, "pyric: Say hello to pyric")
	check("vertex.stream", o.Vertex.Stream, "pyric: one two three four")
	check("vertex.agentPlatform", o.Vertex.AgentPlatform, "pyric: Say hello to pyric")
	// Each backend reached its own path shape: Vertex AI at us-central1,
	// Agent Platform at the global location.
	locations := map[string]int{}
	for _, c := range eng.Calls("demo-ai") {
		if c.Backend == ai.BackendVertexAI {
			locations[c.Location]++
		}
	}
	if locations["us-central1"] < 3 || locations["global"] != 1 {
		t.Errorf("vertex calls by location %v", locations)
	}
	if o.Vertex.Total == 0 || o.Count.Total == 0 {
		t.Error("countTokens returned 0")
	}
	check("json", o.JSON, map[string]any{"word": "pyric", "n": float64(1)})
	check("candidates.generate", o.Candidates.Generate, []candidate{{0, "pyric: pick one"}, {1, "pyric (candidate 2): pick one"}, {2, "pyric (candidate 3): pick one"}})
	check("candidates.stream", o.Candidates.Stream, []candidate{{0, "pyric: one two three four"}, {1, "pyric (candidate 2): one two three four"}})
	check("candidates.scripted", o.Candidates.Scripted, []candidate{{0, "first choice"}, {1, "second choice"}})
	if f := o.Candidates.Refused; f.Status != 400 || !strings.Contains(f.Message, "Multiple candidates is not enabled for this model") {
		t.Errorf("gemini 3 with 2 candidates: %+v", f)
	}
	if f := o.Candidates.TooMany; f.Status != 400 || !strings.Contains(f.Message, "candidateCount value of 9") {
		t.Errorf("9 candidates: %+v", f)
	}

	errs := []struct {
		name    string
		status  int
		message string
		details []string
	}{
		{"unknownModel", 404, "models/not-a-real-model is not found for API version v1main", nil},
		{"retiredModel", 404, "Gemini 1.5 models are retired as of September 24, 2025.", []string{"type.googleapis.com/google.rpc.ErrorInfo"}},
		{"badApiKey", 400, "API key not valid. Please pass a valid API key.", []string{"type.googleapis.com/google.rpc.ErrorInfo", "type.googleapis.com/google.rpc.LocalizedMessage"}},
		{"emptyContents", 400, "* GenerateContentRequest.contents: contents is not specified", nil},
		{"badRole", 400, "Role 'banana' is not supported. Please use a valid role: SYSTEM, SYSTEM_1, USER, ASSISTANT, DEVELOPER, CONTEXT, USER_CONTEXT, MODEL, USER.", nil},
		{"streamUnknown", 404, "models/nope is not found", nil},
	}
	for _, w := range errs {
		f := o.Errors[w.name]
		if f.OK || f.Code != "fetch-error" || f.Status != w.status || !strings.Contains(f.Message, w.message) {
			t.Errorf("%s: %+v", w.name, f)
		}
		if len(f.Details) != len(w.details) || (len(w.details) > 0 && !reflect.DeepEqual(f.Details, w.details)) {
			t.Errorf("%s details %v, want %v", w.name, f.Details, w.details)
		}
	}
	// Every SDK call reached the engine's log.
	if n := len(eng.Calls("demo-ai")); n < 20 {
		t.Errorf("only %d calls logged", n)
	}
}
