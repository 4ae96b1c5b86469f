package ai

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Token counts are minted without a tokenizer (the matrix's
// generate-decoration-synthesized row): a text costs one token per four
// bytes, rounded up; an inline or file blob costs 258, the Gemini image
// tile; function calls and responses cost their JSON.
func textTokens(s string) int {
	if s == "" {
		return 0
	}
	return (len(s) + 3) / 4
}

func partTokens(p Part) int {
	switch {
	case p.Text != nil:
		return textTokens(*p.Text)
	case p.InlineData != nil, p.FileData != nil:
		return 258
	case p.FunctionCall != nil:
		b, _ := json.Marshal(p.FunctionCall)
		return textTokens(string(b))
	case p.FunctionResponse != nil:
		b, _ := json.Marshal(p.FunctionResponse)
		return textTokens(string(b))
	}
	return 1
}

func contentTokens(c Content) int {
	n := 0
	for _, p := range c.Parts {
		n += partTokens(p)
	}
	return n
}

// promptTokens counts what a request sends: contents, the system
// instruction and the tool declarations.
func promptTokens(r *Request) int {
	n := 0
	for _, c := range r.Contents {
		n += contentTokens(c)
	}
	if r.SystemInstruction != nil {
		n += contentTokens(*r.SystemInstruction)
	}
	if len(r.Tools) > 0 {
		b, _ := json.Marshal(r.Tools)
		n += textTokens(string(b))
	}
	return n
}

// digest is the deterministic seed of everything minted for a request:
// the same request gives the same ids, signatures and text.
func digest(parts ...string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// responseID mints a 22-character id shaped like production's.
func responseID(seed [32]byte) string {
	return base64.RawURLEncoding.EncodeToString(seed[:])[:22]
}

// callID mints an 8-character functionCall id (production's are 8).
func callID(seed [32]byte, i int) string {
	d := digest(string(seed[:]), "call", string(rune('0'+i)))
	return base64.RawURLEncoding.EncodeToString(d[:])[:8]
}

// thoughtSignature mints an opaque base64 signature of production's
// length (72 characters).
func thoughtSignature(seed [32]byte, i int) string {
	a := digest(string(seed[:]), "sig", string(rune('0'+i)))
	b := digest(string(a[:]))
	raw := append([]byte{0x12, 0x34, 0x0a, 0x32}, append(a[:], b[:18]...)...)
	return base64.StdEncoding.EncodeToString(raw)
}

// lastUserText is the prompt a matcher and the synthesizer look at: the
// text of the last user content.
func lastUserText(r *Request) string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role == "" || strings.EqualFold(c.Role, "user") {
			if t := c.Text(); t != "" {
				return t
			}
		}
	}
	return ""
}

// excerpt shortens s to at most n runes.
func excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// synthesize builds the answer of an unscripted request, deterministic in
// the request: a forced function call (toolConfig mode ANY), a JSON value
// following the response schema (responseMimeType application/json), an
// acknowledgement of function results, or an echo of the prompt. index is
// the candidate's (candidateCount > 1): echoes past the first name it, so
// the candidates differ as production's do; the other forms are the same
// for every candidate.
func synthesize(r *Request, index int) answer {
	if fd, ok := forcedFunction(r); ok {
		return answer{calls: []FunctionCall{{Name: fd.Name, Args: argsFor(fd)}}}
	}
	if g := r.GenerationConfig; g != nil && g.ResponseMIMEType == "text/x.enum" {
		if en, ok := g.ResponseSchema["enum"].([]any); ok && len(en) > 0 {
			if s, ok := en[0].(string); ok {
				return answer{text: s}
			}
		}
	}
	if r.GenerationConfig != nil && strings.HasPrefix(r.GenerationConfig.ResponseMIMEType, "application/json") {
		schema := r.GenerationConfig.ResponseSchema
		if schema == nil {
			schema = r.GenerationConfig.ResponseJSONSchema
		}
		b, _ := json.Marshal(sampleValue(schema, 0))
		return answer{text: string(b)}
	}
	if n := len(r.Contents); n > 0 {
		var results []string
		for _, p := range r.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				b, _ := json.Marshal(p.FunctionResponse.Response)
				results = append(results, p.FunctionResponse.Name+" returned "+string(b))
			}
		}
		if len(results) > 0 {
			return answer{text: "pyric: " + strings.Join(results, "; ")}
		}
	}
	lead := "pyric: "
	if index > 0 {
		lead = fmt.Sprintf("pyric (candidate %d): ", index+1)
	}
	prompt := lastUserText(r)
	if prompt == "" {
		return limit(r, answer{text: lead + "(no text prompt)"})
	}
	return limit(r, answer{text: lead + excerpt(prompt, 200)})
}

// limit cuts a synthesized text to generationConfig.maxOutputTokens,
// finishing with MAX_TOKENS as production does when the budget runs out.
func limit(r *Request, a answer) answer {
	if r.GenerationConfig == nil || r.GenerationConfig.MaxOutputTokens == nil || *r.GenerationConfig.MaxOutputTokens <= 0 {
		return a
	}
	max := *r.GenerationConfig.MaxOutputTokens
	if textTokens(a.text) <= max {
		return a
	}
	cut := max * 4
	for cut > 0 && !utf8.RuneStart(a.text[cut]) {
		cut--
	}
	a.text, a.finishReason = a.text[:cut], "MAX_TOKENS"
	return a
}

// forcedFunction is the function a synthesized answer calls: the first
// declared (and allowed) function when functionCallingConfig.mode is ANY.
func forcedFunction(r *Request) (FunctionDeclaration, bool) {
	if r.ToolConfig == nil || r.ToolConfig.FunctionCallingConfig == nil ||
		!strings.EqualFold(r.ToolConfig.FunctionCallingConfig.Mode, "ANY") {
		return FunctionDeclaration{}, false
	}
	allowed := r.ToolConfig.FunctionCallingConfig.AllowedFunctionNames
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			if len(allowed) == 0 || contains(allowed, f.Name) {
				return f, true
			}
		}
	}
	return FunctionDeclaration{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func argsFor(fd FunctionDeclaration) map[string]any {
	schema := fd.Parameters
	if schema == nil {
		schema = fd.ParametersJSONSchema
	}
	if v, ok := sampleValue(schema, 0).(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

// sampleValue is a deterministic value conforming to a Gemini Schema or a
// JSON Schema: every property of an object (in propertyOrdering when
// given), the first enum value, the first anyOf alternative, one array
// item, the schema's example or default when it has one.
func sampleValue(schema map[string]any, depth int) any {
	if schema == nil || depth > 16 {
		return map[string]any{}
	}
	for _, k := range []string{"example", "default"} {
		if v, ok := schema[k]; ok {
			return v
		}
	}
	if en, ok := schema["enum"].([]any); ok && len(en) > 0 {
		return en[0]
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return sampleValue(m, depth+1)
			}
		}
	}
	typ := schemaType(schema)
	switch typ {
	case "object", "":
		props, _ := schema["properties"].(map[string]any)
		if typ == "" && props == nil {
			return map[string]any{}
		}
		out := make(map[string]any, len(props))
		for _, k := range propertyOrder(schema, props) {
			sub, _ := props[k].(map[string]any)
			out[k] = sampleValue(sub, depth+1)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		n := 1
		if mi, ok := schema["minItems"]; ok {
			n = int(toFloat(mi))
			if n < 1 {
				n = 1
			}
			if n > 8 {
				n = 8
			}
		}
		out := make([]any, n)
		for i := range out {
			out[i] = sampleValue(items, depth+1)
		}
		return out
	case "string":
		switch schema["format"] {
		case "date-time":
			return "2025-01-01T00:00:00Z"
		case "date":
			return "2025-01-01"
		}
		return "pyric"
	case "integer":
		if m, ok := schema["minimum"]; ok {
			return int(toFloat(m))
		}
		return 1
	case "number":
		if m, ok := schema["minimum"]; ok {
			return toFloat(m)
		}
		return 1.5
	case "boolean":
		return true
	case "null":
		return nil
	}
	return "pyric"
}

func schemaType(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return strings.ToLower(t)
	case []any: // JSON Schema ["string", "null"]
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return strings.ToLower(s)
			}
		}
	}
	return ""
}

func propertyOrder(schema, props map[string]any) []string {
	var order []string
	seen := map[string]bool{}
	if po, ok := schema["propertyOrdering"].([]any); ok {
		for _, k := range po {
			if s, ok := k.(string); ok && props[s] != nil && !seen[s] {
				order = append(order, s)
				seen[s] = true
			}
		}
	}
	var rest []string
	for k := range props {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(order, rest...)
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case string:
		var f float64
		json.Unmarshal([]byte(n), &f)
		return f
	}
	return 0
}
