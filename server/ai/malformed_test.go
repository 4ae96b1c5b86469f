package aiserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pyric/pyric/ai"
)

// TestMalformedGenerateContent: requests production refuses are refused
// 400 INVALID_ARGUMENT naming the field, not answered from the script.
func TestMalformedGenerateContent(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ai.Options{})
	url := srv.URL + "/v1beta/models/gemini-2.5-flash:generateContent"
	user := func(parts string) string { return `{"contents": [{"role": "user", "parts": [` + parts + `]}]` }
	cases := []struct{ name, body, want string }{
		{"two kinds of data in a part", user(`{"text": "hi", "inlineData": {"mimeType": "image/png", "data": "AAAA"}}`) + `}`,
			"Oneof field 'data' is already set. Cannot set 'inlineData'"},
		{"bad base64", user(`{"inlineData": {"mimeType": "image/png", "data": "not base64!!"}}`) + `}`,
			"Invalid value at 'contents[0].parts[0].inline_data.data' (TYPE_BYTES), Base64 decoding failed for \"not base64!!\""},
		{"inlineData without mimeType", user(`{"inlineData": {"data": "AAAA"}}`) + `}`,
			"GenerateContentRequest.contents[0].parts[0].inline_data.mime_type"},
		{"temperature 5", user(`{"text": "hi"}`) + `, "generationConfig": {"temperature": 5}}`,
			"GenerateContentRequest.generation_config.temperature"},
		{"maxOutputTokens -1", user(`{"text": "hi"}`) + `, "generationConfig": {"maxOutputTokens": -1}}`,
			"GenerateContentRequest.generation_config.max_output_tokens"},
		{"unknown responseMimeType", user(`{"text": "hi"}`) + `, "generationConfig": {"responseMimeType": "image/png"}}`,
			"allowed mimetypes are `text/plain`, `application/json`"},
		{"invalid responseSchema type", user(`{"text": "hi"}`) + `, "generationConfig": {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT", "properties": {"n": {"type": "FLOATY"}}}}}`,
			"Invalid value at 'generation_config.response_schema.properties[n].value.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), \"FLOATY\""},
		{"unknown responseSchema field", user(`{"text": "hi"}`) + `, "generationConfig": {"responseSchema": {"type": "STRING", "colour": "red"}}}`,
			"Unknown name \"colour\" at 'generation_config.response_schema'"},
		{"invalid function name", user(`{"text": "hi"}`) + `, "tools": [{"functionDeclarations": [{"name": "get weather!"}]}]}`,
			"tools[0].function_declarations[0].name: Invalid function name."},
		{"unknown safety category", user(`{"text": "hi"}`) + `, "safetySettings": [{"category": "HARM_CATEGORY_RUDENESS", "threshold": "BLOCK_NONE"}]}`,
			"Invalid value at 'safety_settings[0].category' (type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory), \"HARM_CATEGORY_RUDENESS\""},
		{"unknown safety threshold", user(`{"text": "hi"}`) + `, "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_SOME"}]}`,
			"safety_settings[0].threshold"},
	}
	for _, c := range cases {
		resp, b := post(t, url, c.body)
		var e struct {
			Error struct {
				Code    int
				Status  string
				Message string
			}
		}
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != 400 || e.Error.Status != "INVALID_ARGUMENT" || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s: %d %s\nwant a message with %q", c.name, resp.StatusCode, b, c.want)
		}
	}
	// The same requests made valid are answered.
	for _, body := range []string{
		user(`{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, {"text": "what is it?"}`) + `, "generationConfig": {"temperature": 2, "maxOutputTokens": 10, "responseMimeType": "application/json", "responseSchema": {"type": "object", "properties": {"n": {"type": "number"}}}}}`,
		user(`{"text": "hi"}`) + `, "tools": [{"functionDeclarations": [{"name": "get_weather.v2:now-1"}]}], "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]}`,
	} {
		if resp, b := post(t, url, body); resp.StatusCode != 200 {
			t.Errorf("valid request: %d %s", resp.StatusCode, b)
		}
	}
}
