package ai

import (
	"fmt"
	"strings"
)

// validRoles are the roles production accepts, case-insensitively: the
// list its bad-role message gives (ai-error-bad-role) plus "function", the
// role the Firebase SDK gives function responses (accepted in
// ai-function-response-round).
var validRoles = map[string]bool{
	"system": true, "system_1": true, "user": true, "assistant": true, "developer": true,
	"context": true, "user_context": true, "model": true, "function": true,
}

// validate checks a decoded request as production does before generating:
// message is the proto name in field paths ("GenerateContentRequest").
// Empty contents and a bad role are answered alone; the other field
// violations are answered together, a line each, as production lists them
// (https://github.com/google-gemini/gemini-cli/issues/2966); thought
// signatures are checked last.
func validate(r *Request, model, message string) error {
	if len(r.Contents) == 0 {
		return errEmptyContents(message)
	}
	for _, c := range r.Contents {
		if c.Role != "" && !validRoles[strings.ToLower(c.Role)] {
			return errBadRole(c.Role)
		}
	}
	var lines []string
	for i, c := range r.Contents {
		if len(c.Parts) == 0 {
			lines = append(lines, fmt.Sprintf("* %s.contents[%d].parts: contents.parts must not be empty.\n", message, i))
		}
		for j, p := range c.Parts {
			lines = partLines(lines, p, fmt.Sprintf("contents[%d].parts[%d]", i, j), message)
		}
	}
	if r.SystemInstruction != nil {
		for j, p := range r.SystemInstruction.Parts {
			lines = partLines(lines, p, fmt.Sprintf("system_instruction.parts[%d]", j), message)
		}
	}
	for i, t := range r.Tools {
		for j, f := range t.FunctionDeclarations {
			if l := functionNameLine(f.Name, i, j, message); l != "" {
				lines = append(lines, l)
			}
		}
	}
	lines = generationConfigLines(lines, r.GenerationConfig, message)
	lines = safetyLines(lines, r.SafetySettings, message)
	if len(lines) > 0 {
		return invalidArgument("%s", strings.Join(lines, ""))
	}
	if thinks(model) {
		return checkSignatures(r.Contents)
	}
	return nil
}

// partLines are the field-validation lines of one part at field: one
// member of the oneof 'data' must be set (production's line, quoted in
// https://github.com/genkit-ai/genkit/issues/3816), and inline bytes need
// their MIME type (no production answer found: pyric's line).
func partLines(lines []string, p Part, field, message string) []string {
	if !p.hasData() {
		return append(lines, fmt.Sprintf("* %s.%s.data: required oneof field 'data' must have one initialized field\n", message, field))
	}
	if b := p.InlineData; b != nil && strings.TrimSpace(b.MIMEType) == "" {
		lines = append(lines, fmt.Sprintf("* %s.%s.inline_data.mime_type: mime_type must be set to the data's MIME type (e.g. image/png).\n", message, field))
	}
	return lines
}

func (p Part) hasData() bool {
	return p.Text != nil || p.InlineData != nil || p.FileData != nil || p.FunctionCall != nil ||
		p.FunctionResponse != nil || len(p.ExecutableCode) > 0 || len(p.CodeExecResult) > 0
}

// checkSignatures enforces thought signatures on the current turn — the
// contents after the last user message that is not only function
// responses: the first functionCall part of each model step must carry the
// thoughtSignature the model gave it (parallel calls carry it on the first
// only). Earlier turns are not checked, as the Gemini documentation says.
func checkSignatures(contents []Content) error {
	start := 0
	for i, c := range contents {
		if isUserMessage(c) {
			start = i
		}
	}
	for i := start; i < len(contents); i++ {
		c := contents[i]
		if !strings.EqualFold(c.Role, "model") {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionCall == nil {
				continue
			}
			// Any non-empty signature passes: they are opaque, the engine
			// does not remember what it minted, and the placeholders the
			// Gemini documentation offers for hand-built histories
			// ("skip_thought_signature_validator") must pass.
			if p.ThoughtSignature == "" {
				return errMissingThoughtSignature(p.FunctionCall.Name, i+1)
			}
			break // only the first call of a step carries the signature
		}
	}
	return nil
}

func isUserMessage(c Content) bool {
	if c.Role != "" && !strings.EqualFold(c.Role, "user") {
		return false
	}
	for _, p := range c.Parts {
		if p.FunctionResponse == nil {
			return true
		}
	}
	return false
}
