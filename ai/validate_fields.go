package ai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Checks of a GenerateContentRequest's fields, in the two phases and the
// two families of answers the Gemini API (generativelanguage.googleapis.com,
// the backend Firebase AI Logic's Gemini Developer API calls reach) gives,
// as users pasted them into public issues:
//
//   - Proto-JSON decoding, first: every value its field's type does not
//     take, all reported at once. The message is their descriptions, one
//     a line; a google.rpc.BadRequest detail lists them with their fields.
//     "Invalid value at '<field>' (<type>), <value>" for a bad enum name or
//     bytes that are not base64, "Invalid JSON payload received. Unknown
//     name "<name>" at '<field>': Cannot find field." for an unknown field.
//   - Field validation, once the request decoded: every violation, each a
//     line "* GenerateContentRequest.<field>: <what>\n", and no detail.
//
// Vertex AI words the same mistakes differently ("Unable to submit request
// because …"); pyric answers both backends' paths in the Gemini API's words.

// violation is one proto-JSON decoding error.
type violation struct{ field, description string }

// fieldViolation is a google.rpc.BadRequest.FieldViolation, its keys in
// production's order.
type fieldViolation struct {
	Field       string `json:"field,omitempty"`
	Description string `json:"description"`
}

// errBadRequest is the decoding answer: every violation, in order.
func errBadRequest(vs []violation) *Error {
	descs := make([]string, len(vs))
	fvs := make([]fieldViolation, len(vs))
	for i, v := range vs {
		descs[i] = v.description
		fvs[i] = fieldViolation{v.field, v.description}
	}
	return &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: strings.Join(descs, "\n"),
		Details: []map[string]any{{
			"@type":           "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": fvs,
		}}}
}

// invalidValue is a value its field's type does not take. Seen in
// production: "Invalid value at 'contents[0].parts[2].inline_data.data'
// (TYPE_BYTES), Base64 decoding failed for "https://…"" with the whole
// value (https://github.com/danny-avila/LibreChat/issues/6593); "Invalid
// value at 'safety_settings[4].category'
// (type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory),
// "HARM_CATEGORY_IMAGE_HATE"" (https://github.com/NEKOparapa/AiNiee/issues/746);
// "Invalid value at 'generation_config.response_schema.properties[4].value.any_of[1].type'
// (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "null""
// (https://github.com/simonw/llm-gemini/issues/49); "Invalid value at
// 'contents[0].parts[0]' (oneof), oneof field 'data' is already set.
// Cannot set 'inlineData'" (https://github.com/googleapis/google-cloud-dart/issues/26).
func invalidValue(field, typ, tail string) violation {
	return violation{field, fmt.Sprintf("Invalid value at '%s' (%s), %s", field, typ, tail)}
}

// unknownName is a field the message does not have
// (https://github.com/simonw/llm-gemini/issues/49,
// https://github.com/zed-industries/zed/issues/62539: the violation names
// the field holding it).
func unknownName(name, field string) violation {
	return violation{field, fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, field)}
}

// decodeChecks makes the checks proto-JSON decoding makes on a decoded
// request: raw returns the request's JSON text, read again only to name
// the member that a part with two kinds of data set second.
func decodeChecks(r *Request, raw func() []byte) error {
	var vs []violation
	for i, c := range r.Contents {
		for j, p := range c.Parts {
			vs = checkPartData(vs, p, fmt.Sprintf("contents[%d].parts[%d]", i, j), func() []byte { return rawPart(raw(), i, j) })
		}
	}
	if si := r.SystemInstruction; si != nil {
		for j, p := range si.Parts {
			vs = checkPartData(vs, p, fmt.Sprintf("system_instruction.parts[%d]", j), func() []byte { return rawPart(raw(), -1, j) })
		}
	}
	if g := r.GenerationConfig; g != nil && g.ResponseSchema != nil {
		vs = checkSchema(vs, g.ResponseSchema, "generation_config.response_schema")
	}
	vs = checkSafetyEnums(vs, r.SafetySettings)
	if len(vs) > 0 {
		return errBadRequest(vs)
	}
	return nil
}

// partFields are a Part's data fields: the members of the oneof 'data'.
var partFields = map[string]func(Part) bool{
	"text":                func(p Part) bool { return p.Text != nil },
	"inlinedata":          func(p Part) bool { return p.InlineData != nil },
	"functioncall":        func(p Part) bool { return p.FunctionCall != nil },
	"functionresponse":    func(p Part) bool { return p.FunctionResponse != nil },
	"filedata":            func(p Part) bool { return p.FileData != nil },
	"executablecode":      func(p Part) bool { return len(p.ExecutableCode) > 0 },
	"codeexecutionresult": func(p Part) bool { return len(p.CodeExecResult) > 0 },
}

// checkPartData checks one part at field (e.g. "contents[0].parts[1]"):
// one member of the oneof at most, and inline bytes that are base64.
func checkPartData(vs []violation, p Part, field string, raw func() []byte) []violation {
	set := 0
	for _, isSet := range partFields {
		if isSet(p) {
			set++
		}
	}
	if set > 1 {
		// The decoder refuses the second member it meets, in the text's
		// order, by the name the text gives it.
		vs = append(vs, invalidValue(field, "oneof", fmt.Sprintf("oneof field 'data' is already set. Cannot set '%s'", secondDataMember(raw()))))
	}
	if b := p.InlineData; b != nil && !validBase64(b.Data) {
		vs = append(vs, invalidValue(field+".inline_data.data", "TYPE_BYTES", fmt.Sprintf("Base64 decoding failed for %q", b.Data)))
	}
	return vs
}

// secondDataMember returns the name, as written, of the second member of
// the oneof 'data' in a part's JSON text.
func secondDataMember(part []byte) string {
	dec := json.NewDecoder(bytes.NewReader(part))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		name, _ := t.(string)
		if _, isData := partFields[strings.ToLower(name)]; isData {
			if seen++; seen == 2 {
				return name
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// rawPart returns the JSON text of contents[i].parts[j] (i < 0: of
// systemInstruction.parts[j]) of a request's text.
func rawPart(raw []byte, i, j int) []byte {
	type content struct {
		Parts []json.RawMessage `json:"parts"`
	}
	var r struct {
		Contents          []content `json:"contents"`
		SystemInstruction *content  `json:"systemInstruction"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	c := r.SystemInstruction
	if i >= 0 && i < len(r.Contents) {
		c = &r.Contents[i]
	}
	if c == nil || j >= len(c.Parts) {
		return nil
	}
	return c.Parts[j]
}

// validBase64 accepts what proto JSON takes for bytes: standard or URL-safe
// base64, padded or not.
func validBase64(s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(s); err == nil {
			return true
		}
	}
	return false
}

// schemaTypes are the names of google.ai.generativelanguage.v1beta.Type;
// the SDKs send them in either case (the Firebase SDK's Schema builders
// lower-case).
var schemaTypes = map[string]bool{"TYPE_UNSPECIFIED": true, "STRING": true, "NUMBER": true, "INTEGER": true,
	"BOOLEAN": true, "ARRAY": true, "OBJECT": true, "NULL": true}

// schemaFields are the fields of the Schema message (camelCase, as the
// SDKs send them, and snake_case).
var schemaFields = map[string]bool{"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "maxItems": true, "minItems": true, "properties": true, "required": true, "minProperties": true,
	"maxProperties": true, "minLength": true, "maxLength": true, "pattern": true, "example": true, "anyOf": true,
	"propertyOrdering": true, "default": true, "items": true, "minimum": true, "maximum": true,
	"max_items": true, "min_items": true, "min_properties": true, "max_properties": true, "min_length": true,
	"max_length": true, "any_of": true, "property_ordering": true}

const schemaTypeName = "type.googleapis.com/google.ai.generativelanguage.v1beta.Type"

// checkSchema checks a Schema at field: its field names and its types,
// recursively; a map's keys in sorted order (production reports them in
// the text's order, which a decoded map no longer has).
func checkSchema(vs []violation, s map[string]any, field string) []violation {
	for _, k := range sortedKeys(s) {
		if !schemaFields[k] {
			vs = append(vs, unknownName(k, field))
		}
	}
	if t, ok := s["type"]; ok {
		name, isStr := t.(string)
		if !isStr || !schemaTypes[strings.ToUpper(name)] {
			vs = append(vs, invalidValue(field+".type", schemaTypeName, jsonText(t)))
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range sortedKeys(props) {
			sub := fmt.Sprintf("%s.properties[%s].value", field, k)
			if m, ok := props[k].(map[string]any); ok {
				vs = checkSchema(vs, m, sub)
			} else {
				vs = append(vs, violation{sub, fmt.Sprintf("Invalid JSON payload received. Invalid value at '%s': a Schema object", sub)})
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		vs = checkSchema(vs, items, field+".items")
	}
	for _, key := range []string{"anyOf", "any_of"} {
		if list, ok := s[key].([]any); ok {
			for i, v := range list {
				if sub, ok := v.(map[string]any); ok {
					vs = checkSchema(vs, sub, fmt.Sprintf("%s.any_of[%d]", field, i))
				}
			}
		}
	}
	return vs
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// harmCategories are the names of the v1beta HarmCategory enum. The image
// categories are not among them: production refuses
// HARM_CATEGORY_IMAGE_HATE and its siblings as unknown enum values
// (https://github.com/NEKOparapa/AiNiee/issues/746).
var harmCategories = map[string]bool{"HARM_CATEGORY_UNSPECIFIED": true, "HARM_CATEGORY_DEROGATORY": true,
	"HARM_CATEGORY_TOXICITY": true, "HARM_CATEGORY_VIOLENCE": true, "HARM_CATEGORY_SEXUAL": true,
	"HARM_CATEGORY_MEDICAL": true, "HARM_CATEGORY_DANGEROUS": true, "HARM_CATEGORY_HARASSMENT": true,
	"HARM_CATEGORY_HATE_SPEECH": true, "HARM_CATEGORY_SEXUALLY_EXPLICIT": true, "HARM_CATEGORY_DANGEROUS_CONTENT": true,
	"HARM_CATEGORY_CIVIC_INTEGRITY": true, "HARM_CATEGORY_JAILBREAK": true}

// geminiCategories are the categories Gemini models take, in the order
// production's refusal lists them: the five of
// https://github.com/lbjlaq/Antigravity-Manager/issues/2392 (March 2026),
// then HARM_CATEGORY_JAILBREAK, which production took by August 2026
// (https://github.com/genkit-ai/genkit-dart/issues/365; where it stands in
// the list is pyric's guess).
var geminiCategories = []string{"HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
	"HARM_CATEGORY_DANGEROUS_CONTENT", "HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_CIVIC_INTEGRITY", "HARM_CATEGORY_JAILBREAK"}

var harmThresholds = map[string]bool{"HARM_BLOCK_THRESHOLD_UNSPECIFIED": true, "BLOCK_LOW_AND_ABOVE": true,
	"BLOCK_MEDIUM_AND_ABOVE": true, "BLOCK_ONLY_HIGH": true, "BLOCK_NONE": true, "OFF": true}

var harmMethods = map[string]bool{"HARM_BLOCK_METHOD_UNSPECIFIED": true, "SEVERITY": true, "PROBABILITY": true}

// safetyFields are the fields of a SafetySetting: the enum each takes and
// the enum's full name. method is Vertex AI's, accepted because the
// Firebase SDK's Vertex AI backend sends it to the same paths.
var safetyFields = map[string]struct {
	known map[string]bool
	typ   string
}{
	"category":  {harmCategories, "type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory"},
	"threshold": {harmThresholds, "type.googleapis.com/google.ai.generativelanguage.v1beta.SafetySetting.HarmBlockThreshold"},
	"method":    {harmMethods, "type.googleapis.com/google.ai.generativelanguage.v1beta.SafetySetting.HarmBlockMethod"},
}

// checkSafetyEnums checks safetySettings as proto JSON decodes them: known
// fields, enum values by name (or by number, which proto JSON also takes).
func checkSafetyEnums(vs []violation, raw json.RawMessage) []violation {
	if len(raw) == 0 || string(raw) == "null" {
		return vs
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return append(vs, violation{"safety_settings", "Invalid JSON payload received. Invalid value at 'safety_settings': a list of SafetySetting objects"})
	}
	for i, s := range list {
		for _, k := range sortedKeys(s) {
			f, ok := safetyFields[k]
			if !ok {
				vs = append(vs, unknownName(k, fmt.Sprintf("safety_settings[%d]", i)))
				continue
			}
			v := s[k]
			if _, isNum := v.(float64); isNum {
				continue
			}
			if name, ok := v.(string); !ok || !f.known[name] {
				vs = append(vs, invalidValue(fmt.Sprintf("safety_settings[%d].%s", i, k), f.typ, jsonText(v)))
			}
		}
	}
	return vs
}

// safetyLines are the field-validation lines of safetySettings that
// decoded: a category Gemini models do not take is refused as
// "* GenerateContentRequest.safety_settings[4]: element predicate failed:
// $.category in (HarmCategory.HARM_CATEGORY_HATE_SPEECH, …)"
// (https://github.com/Visionatrix/ComfyUI-Gemini/issues/8,
// https://github.com/SillyTavern/SillyTavern/pull/2728: one line each).
func safetyLines(lines []string, raw json.RawMessage, message string) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return lines
	}
	var list []struct {
		Category any `json:"category"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return lines
	}
	for i, s := range list {
		name, isName := s.Category.(string)
		if !isName {
			continue // numbers: their names are not all known here
		}
		ok := false
		for _, c := range geminiCategories {
			ok = ok || name == c
		}
		if !ok {
			in := make([]string, len(geminiCategories))
			for j, c := range geminiCategories {
				in[j] = "HarmCategory." + c
			}
			lines = append(lines, fmt.Sprintf("* %s.safety_settings[%d]: element predicate failed: $.category in (%s)\n", message, i, strings.Join(in, ", ")))
		}
	}
	return lines
}

// responseMIMETypes are the response MIME types production serves.
var responseMIMETypes = []string{"text/plain", "application/json", "application/xml", "application/yaml", "text/x.enum"}

// generationConfigLines are the field-validation lines of
// generationConfig. The temperature's line is production's, recorded by a
// live probe of generativelanguage.googleapis.com published in public code
// ("Decision: Google AI Studio's API surface, confirmed live", 2026-08-27:
// temperature 5 → 400, temperature 2 → 200); the response MIME type's too
// (https://errs.dmxapi.cn/detail.php?id=1689 quotes it). No production
// answer to a negative maxOutputTokens was found in public reports: that
// line is pyric's, in the temperature line's form.
func generationConfigLines(lines []string, g *GenerationConfig, message string) []string {
	if g == nil {
		return lines
	}
	if t := g.Temperature; t != nil && (*t < 0 || *t > 2) {
		lines = append(lines, fmt.Sprintf("* %s.generation_config.temperature: temperature must be in the range [0.0, 2.0].\n", message))
	}
	if n := g.MaxOutputTokens; n != nil && *n < 0 {
		lines = append(lines, fmt.Sprintf("* %s.generation_config.max_output_tokens: max_output_tokens must be non-negative.\n", message))
	}
	if mt := g.ResponseMIMEType; mt != "" {
		ok := false
		for _, a := range responseMIMETypes {
			ok = ok || strings.EqualFold(mt, a)
		}
		if !ok {
			lines = append(lines, fmt.Sprintf("* %s.generation_config.response_mime_type: allowed mimetypes are `text/plain`, `application/json`, `application/xml`, `application/yaml` and `text/x.enum`.\n", message))
		}
	}
	return lines
}

// validFunctionName reports whether name is what production takes as a
// function declaration's name: a letter or underscore, then letters,
// digits, '_', '.', ':' or '-', 64 characters at most. (A loop, not a
// regexp: a bounded repetition compiles to a program as long as its bound,
// paid at every start.)
func validFunctionName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '.' || c == ':' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// functionNameLine is production's line for a function declaration's bad
// name, word for word
// (https://github.com/router-for-me/Cli-Proxy-API-Management-Center/issues/120);
// its line for an empty name was not found: that one is pyric's.
func functionNameLine(name string, i, j int, message string) string {
	if name == "" {
		return fmt.Sprintf("* %s.tools[%d].function_declarations[%d].name: Name cannot be empty.\n", message, i, j)
	}
	if !validFunctionName(name) {
		return fmt.Sprintf("* %s.tools[%d].function_declarations[%d].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n", message, i, j)
	}
	return ""
}

// jsonText is v as JSON text, without encoding/json's HTML escapes.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
