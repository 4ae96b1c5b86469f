package aiserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pyric/pyric/ai"
)

// TestMalformedGenerateContent: requests production refuses are refused
// 400 INVALID_ARGUMENT, not answered from the script, each answer compared
// whole (code, message, status, details) with the Gemini API's as public
// reports quote it (sources in ai/validate_fields.go). Decoding errors
// carry a BadRequest detail listing every violation; field-validation
// errors are lines "* GenerateContentRequest.<field>: …\n", every one, and
// no detail.
func TestMalformedGenerateContent(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ai.Options{})
	generate := srv.URL + "/v1beta/models/gemini-2.5-flash:generateContent"
	user := func(parts string) string { return `{"contents": [{"role": "user", "parts": [` + parts + `]}]` }
	hi := user(`{"text": "hi"}`)
	// decoding is the answer of proto-JSON decoding: descriptions, one a
	// line, and a BadRequest detail with each field and description.
	decoding := func(fd ...string) string {
		var descs []string
		var fvs []string
		for i := 0; i+1 < len(fd); i += 2 {
			descs = append(descs, fd[i+1])
			f, _ := json.Marshal(fd[i])
			d, _ := json.Marshal(fd[i+1])
			fvs = append(fvs, `{"field": `+string(f)+`, "description": `+string(d)+`}`)
		}
		m, _ := json.Marshal(strings.Join(descs, "\n"))
		return `{"error": {"code": 400, "message": ` + string(m) + `, "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [` + strings.Join(fvs, ", ") + `]}]}}`
	}
	// fields is the answer of field validation: the lines, and no detail.
	fields := func(lines ...string) string {
		m, _ := json.Marshal(strings.Join(lines, ""))
		return `{"error": {"code": 400, "message": ` + string(m) + `, "status": "INVALID_ARGUMENT"}}`
	}
	const (
		categoryType  = "type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory"
		thresholdType = "type.googleapis.com/google.ai.generativelanguage.v1beta.SafetySetting.HarmBlockThreshold"
		schemaType    = "type.googleapis.com/google.ai.generativelanguage.v1beta.Type"
		geminiOnly    = "element predicate failed: $.category in (HarmCategory.HARM_CATEGORY_HATE_SPEECH, HarmCategory.HARM_CATEGORY_SEXUALLY_EXPLICIT, HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT, HarmCategory.HARM_CATEGORY_HARASSMENT, HarmCategory.HARM_CATEGORY_CIVIC_INTEGRITY, HarmCategory.HARM_CATEGORY_JAILBREAK)"
		nameRule      = "Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64."
	)
	long := strings.Repeat("not base64! ", 10)
	cases := []struct{ name, url, body, want string }{
		{"two kinds of data in a part", generate, user(`{"text": "hi", "inlineData": {"mimeType": "image/png", "data": "AAAA"}}`) + `}`,
			decoding("contents[0].parts[0]", "Invalid value at 'contents[0].parts[0]' (oneof), oneof field 'data' is already set. Cannot set 'inlineData'")},
		{"the second member in the text's order is named", generate, user(`{"text": "a"}, {"functionCall": {"name": "f", "args": {}}, "thought": true, "text": "hi"}`) + `}`,
			decoding("contents[0].parts[1]", "Invalid value at 'contents[0].parts[1]' (oneof), oneof field 'data' is already set. Cannot set 'text'")},
		{"bad base64", generate, user(`{"inlineData": {"mimeType": "image/png", "data": "not base64!!"}}`) + `}`,
			decoding("contents[0].parts[0].inline_data.data", `Invalid value at 'contents[0].parts[0].inline_data.data' (TYPE_BYTES), Base64 decoding failed for "not base64!!"`)},
		{"bad base64 is quoted whole", generate, user(`{"inlineData": {"mimeType": "image/png", "data": "`+long+`"}}`) + `}`,
			decoding("contents[0].parts[0].inline_data.data", `Invalid value at 'contents[0].parts[0].inline_data.data' (TYPE_BYTES), Base64 decoding failed for "`+long+`"`)},
		{"inlineData without mimeType", generate, user(`{"inlineData": {"data": "AAAA"}}`) + `}`,
			fields("* GenerateContentRequest.contents[0].parts[0].inline_data.mime_type: mime_type must be set to the data's MIME type (e.g. image/png).\n")},
		{"temperature 5", generate, hi + `, "generationConfig": {"temperature": 5}}`,
			fields("* GenerateContentRequest.generation_config.temperature: temperature must be in the range [0.0, 2.0].\n")},
		{"maxOutputTokens -1", generate, hi + `, "generationConfig": {"maxOutputTokens": -1}}`,
			fields("* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be non-negative.\n")},
		{"unknown responseMimeType", generate, hi + `, "generationConfig": {"responseMimeType": "image/png"}}`,
			fields("* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are `text/plain`, `application/json`, `application/xml`, `application/yaml` and `text/x.enum`.\n")},
		{"responseSchema with an unknown type and an unknown field", generate, hi + `, "generationConfig": {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT", "colour": "red", "properties": {"n": {"type": "FLOATY"}}}}}`,
			decoding("generation_config.response_schema", `Invalid JSON payload received. Unknown name "colour" at 'generation_config.response_schema': Cannot find field.`,
				"generation_config.response_schema.properties[n].value.type", `Invalid value at 'generation_config.response_schema.properties[n].value.type' (`+schemaType+`), "FLOATY"`)},
		{"invalid function name", generate, hi + `, "tools": [{"functionDeclarations": [{"name": "ok"}, {"name": "get weather!"}]}]}`,
			fields("* GenerateContentRequest.tools[0].function_declarations[1].name: " + nameRule + "\n")},
		{"function name too long, and empty", generate, hi + `, "tools": [{"functionDeclarations": [{"name": "` + strings.Repeat("f", 65) + `"}]}, {"functionDeclarations": [{"name": ""}]}]}`,
			fields("* GenerateContentRequest.tools[0].function_declarations[0].name: "+nameRule+"\n", "* GenerateContentRequest.tools[1].function_declarations[0].name: Name cannot be empty.\n")},
		{"unknown safety category and threshold", generate, hi + `, "safetySettings": [{"category": "HARM_CATEGORY_RUDENESS", "threshold": "BLOCK_NONE"}, {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_SOME"}]}`,
			decoding("safety_settings[0].category", `Invalid value at 'safety_settings[0].category' (`+categoryType+`), "HARM_CATEGORY_RUDENESS"`,
				"safety_settings[1].threshold", `Invalid value at 'safety_settings[1].threshold' (`+thresholdType+`), "BLOCK_SOME"`)},
		{"image categories are not v1beta's", generate, hi + `, "safetySettings": [{"category": "HARM_CATEGORY_IMAGE_HATE", "threshold": "BLOCK_NONE"}]}`,
			decoding("safety_settings[0].category", `Invalid value at 'safety_settings[0].category' (`+categoryType+`), "HARM_CATEGORY_IMAGE_HATE"`)},
		{"a category Gemini models do not take", generate, hi + `, "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}, {"category": "HARM_CATEGORY_DEROGATORY", "threshold": "BLOCK_NONE"}, {"category": "HARM_CATEGORY_UNSPECIFIED", "threshold": "BLOCK_NONE"}]}`,
			fields("* GenerateContentRequest.safety_settings[1]: "+geminiOnly+"\n", "* GenerateContentRequest.safety_settings[2]: "+geminiOnly+"\n")},
		{"field violations are answered together", generate, user(`{"text": "hi"}, {}`) + `, "generationConfig": {"temperature": -1, "maxOutputTokens": -5, "responseMimeType": "text/html"}, "tools": [{"functionDeclarations": [{"name": "9lives"}]}]}`,
			fields("* GenerateContentRequest.contents[0].parts[1].data: required oneof field 'data' must have one initialized field\n",
				"* GenerateContentRequest.tools[0].function_declarations[0].name: "+nameRule+"\n",
				"* GenerateContentRequest.generation_config.temperature: temperature must be in the range [0.0, 2.0].\n",
				"* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be non-negative.\n",
				"* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are `text/plain`, `application/json`, `application/xml`, `application/yaml` and `text/x.enum`.\n")},
		{"decoding errors come before field violations", generate, user(`{"inlineData": {"data": "@@"}}`) + `, "generationConfig": {"temperature": 9}}`,
			decoding("contents[0].parts[0].inline_data.data", `Invalid value at 'contents[0].parts[0].inline_data.data' (TYPE_BYTES), Base64 decoding failed for "@@"`)},
		{"streamGenerateContent refuses before streaming", srv.URL + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", hi + `, "generationConfig": {"temperature": 5}}`,
			fields("* GenerateContentRequest.generation_config.temperature: temperature must be in the range [0.0, 2.0].\n")},
		{"the Vertex AI backend's path answers the same", srv.URL + "/v1beta1/projects/demo-ai/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent", user(`{"text": "hi", "fileData": {"mimeType": "image/png", "fileUri": "gs://b/o"}}`) + `}`,
			decoding("contents[0].parts[0]", "Invalid value at 'contents[0].parts[0]' (oneof), oneof field 'data' is already set. Cannot set 'fileData'")},
		{"countTokens in the Firebase SDK's wrapper", srv.URL + "/v1beta/models/gemini-2.5-flash:countTokens",
			`{"generateContentRequest": {"model": "models/gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}, "text": "hi"}]}]}}`,
			decoding("contents[0].parts[0]", "Invalid value at 'contents[0].parts[0]' (oneof), oneof field 'data' is already set. Cannot set 'text'")},
	}
	for _, c := range cases {
		resp, b := post(t, c.url, c.body)
		var got, want any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
			continue
		}
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatalf("%s: bad want: %v", c.name, err)
		}
		if resp.StatusCode != 400 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d %s\nwant 400 %s", c.name, resp.StatusCode, b, c.want)
		}
		// A field violation writes its field first, as production does.
		if i := strings.Index(string(b), `"fieldViolations"`); i >= 0 && strings.Index(string(b[i:]), `"field"`) > strings.Index(string(b[i:]), `"description"`) {
			t.Errorf("%s: description before field: %s", c.name, b)
		}
	}
	// The same requests made valid are answered.
	for _, body := range []string{
		user(`{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, {"text": "what is it?"}`) + `, "generationConfig": {"temperature": 2, "maxOutputTokens": 10, "responseMimeType": "application/json", "responseSchema": {"type": "object", "properties": {"n": {"type": "number"}}}}}`,
		user(`{"text": "hi"}`) + `, "tools": [{"functionDeclarations": [{"name": "get_weather.v2:now-1"}]}], "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}, {"category": "HARM_CATEGORY_JAILBREAK", "threshold": "HARM_BLOCK_THRESHOLD_UNSPECIFIED", "method": "SEVERITY"}]}`,
	} {
		if resp, b := post(t, generate, body); resp.StatusCode != 200 {
			t.Errorf("valid request: %d %s", resp.StatusCode, b)
		}
	}
}
