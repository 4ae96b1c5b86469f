package ai_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/sandbox/service"
)

// A script answers in order; an unscripted call gets a deterministic
// synthesized answer.
func ExampleEngine_GenerateContent() {
	eng, _ := ai.New(service.Env{Project: "demo-ai"}, ai.Options{})
	script, _ := ai.DecodeScript([]byte(`[
		{"match": {"contains": "weather"}, "functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
		{"text": "Hello from the script."}
	]`))
	eng.SetScript("demo-ai", script)
	ask := func(prompt string) {
		body, _ := json.Marshal(map[string]any{"contents": []map[string]any{{"role": "user", "parts": []map[string]any{{"text": prompt}}}}})
		out, err := eng.GenerateContent(context.Background(), ai.Call{Project: "demo-ai", Backend: ai.BackendGoogleAI, Model: "gemini-2.5-flash", APIKey: "any", Body: body})
		if err != nil {
			fmt.Println(err)
			return
		}
		var r ai.Response
		json.Unmarshal(out, &r)
		p := r.Candidates[0].Content.Parts[0]
		if p.FunctionCall != nil {
			fmt.Println("call", p.FunctionCall.Name, p.FunctionCall.Args["city"])
			return
		}
		fmt.Println(*p.Text)
	}
	ask("Hi")
	ask("What's the weather?")
	ask("Hi again")
	// Output:
	// Hello from the script.
	// call get_weather Paris
	// pyric: Hi again
}
