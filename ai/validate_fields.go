package ai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Checks of a GenerateContentRequest's fields, as production makes them
// before generating. Two families of answers: proto-JSON decoding errors
// ("Invalid JSON payload received. …", "Invalid value at '<field>' (<type>),
// <value>", with a BadRequest field violation, the form production gives a
// bad enum value in a tool's schema), and field violations of the request
// ("* GenerateContentRequest.<field>: …").

// errInvalidValue is the decoder's answer to a value its field's type
// does not take (an unknown enum name, bytes that are not base64).
func errInvalidValue(field, typ, tail string) *Error {
	msg := fmt.Sprintf("Invalid value at '%s' (%s), %s", field, typ, tail)
	return &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: msg,
		Details: []map[string]any{{
			"@type":           "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]any{{"field": field, "description": msg}},
		}}}
}

// partFields are a Part's data fields in proto order: the members of the
// oneof 'data', which may hold one.
var partFields = []struct {
	json string
	set  func(Part) bool
}{
	{"text", func(p Part) bool { return p.Text != nil }},
	{"inlineData", func(p Part) bool { return p.InlineData != nil }},
	{"functionCall", func(p Part) bool { return p.FunctionCall != nil }},
	{"functionResponse", func(p Part) bool { return p.FunctionResponse != nil }},
	{"fileData", func(p Part) bool { return p.FileData != nil }},
	{"executableCode", func(p Part) bool { return len(p.ExecutableCode) > 0 }},
	{"codeExecutionResult", func(p Part) bool { return len(p.CodeExecResult) > 0 }},
}

// checkPart checks one part at field (e.g. "contents[0].parts[1]").
func checkPart(p Part, field, message string) error {
	first := ""
	for _, f := range partFields {
		if !f.set(p) {
			continue
		}
		if first != "" {
			return errInvalidJSON(fmt.Sprintf("Oneof field 'data' is already set. Cannot set '%s'", f.json))
		}
		first = f.json
	}
	if b := p.InlineData; b != nil {
		if !validBase64(b.Data) {
			shown := b.Data
			if len(shown) > 64 {
				shown = shown[:64]
			}
			return errInvalidValue(field+".inline_data.data", "TYPE_BYTES", fmt.Sprintf("Base64 decoding failed for %q", shown))
		}
		if strings.TrimSpace(b.MIMEType) == "" {
			return invalidArgument("* %s.%s.inline_data.mime_type: mime_type must be set to the data's MIME type (e.g. image/png).\n", message, field)
		}
	}
	return nil
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

// responseMIMETypes are the response MIME types production serves.
var responseMIMETypes = []string{"text/plain", "application/json", "application/xml", "application/yaml", "text/x.enum"}

func checkGenerationConfig(g *GenerationConfig, message string) error {
	if g == nil {
		return nil
	}
	if t := g.Temperature; t != nil && (*t < 0 || *t > 2) {
		return invalidArgument("* %s.generation_config.temperature: temperature must be in the range [0.0, 2.0], got %v.\n", message, *t)
	}
	if n := g.MaxOutputTokens; n != nil && *n < 0 {
		return invalidArgument("* %s.generation_config.max_output_tokens: max_output_tokens must be positive, got %d.\n", message, *n)
	}
	if mt := g.ResponseMIMEType; mt != "" {
		ok := false
		for _, a := range responseMIMETypes {
			ok = ok || strings.EqualFold(mt, a)
		}
		if !ok {
			return invalidArgument("* %s.generation_config.response_mime_type: allowed mimetypes are `text/plain`, `application/json`, `application/xml`, `application/yaml` and `text/x.enum`.\n", message)
		}
	}
	if g.ResponseSchema != nil {
		if err := checkSchema(g.ResponseSchema, "generation_config.response_schema"); err != nil {
			return err
		}
	}
	return nil
}

// schemaTypes are the names of google.ai.generativelanguage.v1beta.Type;
// the SDKs send them in either case.
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
// recursively.
func checkSchema(s map[string]any, field string) error {
	for k := range s {
		if !schemaFields[k] {
			return errInvalidJSON(fmt.Sprintf("Unknown name %q at '%s': Cannot find field.", k, field))
		}
	}
	if t, ok := s["type"]; ok {
		name, isStr := t.(string)
		if !isStr || !schemaTypes[strings.ToUpper(name)] {
			return errInvalidValue(field+".type", schemaTypeName, jsonText(t))
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			sub, ok := v.(map[string]any)
			if !ok {
				return errInvalidJSON(fmt.Sprintf("Invalid value at '%s.properties[%s].value': a Schema object", field, k))
			}
			if err := checkSchema(sub, fmt.Sprintf("%s.properties[%s].value", field, k)); err != nil {
				return err
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if err := checkSchema(items, field+".items"); err != nil {
			return err
		}
	}
	for _, key := range []string{"anyOf", "any_of"} {
		if list, ok := s[key].([]any); ok {
			for i, v := range list {
				if sub, ok := v.(map[string]any); ok {
					if err := checkSchema(sub, fmt.Sprintf("%s.any_of[%d]", field, i)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// functionName is what production takes as a function declaration's name.
var functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

func checkFunctionName(name string, i, j int, message string) error {
	if !functionName.MatchString(name) {
		return invalidArgument("* %s.tools[%d].function_declarations[%d].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n", message, i, j)
	}
	return nil
}

// harmCategories and harmThresholds are the enum names safetySettings take.
var harmCategories = map[string]bool{"HARM_CATEGORY_UNSPECIFIED": true, "HARM_CATEGORY_DEROGATORY": true,
	"HARM_CATEGORY_TOXICITY": true, "HARM_CATEGORY_VIOLENCE": true, "HARM_CATEGORY_SEXUAL": true,
	"HARM_CATEGORY_MEDICAL": true, "HARM_CATEGORY_DANGEROUS": true, "HARM_CATEGORY_HARASSMENT": true,
	"HARM_CATEGORY_HATE_SPEECH": true, "HARM_CATEGORY_SEXUALLY_EXPLICIT": true, "HARM_CATEGORY_DANGEROUS_CONTENT": true,
	"HARM_CATEGORY_CIVIC_INTEGRITY": true, "HARM_CATEGORY_IMAGE_HATE": true, "HARM_CATEGORY_IMAGE_DANGEROUS_CONTENT": true,
	"HARM_CATEGORY_IMAGE_HARASSMENT": true, "HARM_CATEGORY_IMAGE_SEXUALLY_EXPLICIT": true, "HARM_CATEGORY_JAILBREAK": true}

var harmThresholds = map[string]bool{"HARM_BLOCK_THRESHOLD_UNSPECIFIED": true, "BLOCK_LOW_AND_ABOVE": true,
	"BLOCK_MEDIUM_AND_ABOVE": true, "BLOCK_ONLY_HIGH": true, "BLOCK_NONE": true, "OFF": true}

var harmMethods = map[string]bool{"HARM_BLOCK_METHOD_UNSPECIFIED": true, "SEVERITY": true, "PROBABILITY": true}

func checkSafetySettings(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return errInvalidJSON("Invalid value at 'safety_settings': a list of SafetySetting objects")
	}
	for i, s := range list {
		for k, v := range s {
			var known map[string]bool
			var typ string
			switch k {
			case "category":
				known, typ = harmCategories, "type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory"
			case "threshold":
				known, typ = harmThresholds, "type.googleapis.com/google.ai.generativelanguage.v1beta.SafetySetting.HarmBlockThreshold"
			case "method":
				known, typ = harmMethods, "type.googleapis.com/google.ai.generativelanguage.v1beta.SafetySetting.HarmBlockMethod"
			default:
				return errInvalidJSON(fmt.Sprintf("Unknown name %q at 'safety_settings[%d]': Cannot find field.", k, i))
			}
			if name, ok := v.(string); !ok || !known[name] {
				if _, isNum := v.(float64); !isNum {
					return errInvalidValue(fmt.Sprintf("safety_settings[%d].%s", i, k), typ, jsonText(v))
				}
			}
		}
	}
	return nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
