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

// validate checks a request as production does before generating: message
// is the proto name in field paths ("GenerateContentRequest").
func validate(r *Request, model, message string) error {
	if len(r.Contents) == 0 {
		return errEmptyContents(message)
	}
	for i, c := range r.Contents {
		if c.Role != "" && !validRoles[strings.ToLower(c.Role)] {
			return errBadRole(c.Role)
		}
		if len(c.Parts) == 0 {
			return invalidArgument("* %s.contents[%d].parts: contents.parts must not be empty.\n", message, i)
		}
		for j, p := range c.Parts {
			if !p.hasData() {
				return invalidArgument("* %s.contents[%d].parts[%d].data: required oneof field 'data' must have one initialized field\n", message, i, j)
			}
			if err := checkPart(p, fmt.Sprintf("contents[%d].parts[%d]", i, j), message); err != nil {
				return err
			}
		}
	}
	if r.SystemInstruction != nil {
		for j, p := range r.SystemInstruction.Parts {
			if !p.hasData() {
				return invalidArgument("* %s.system_instruction.parts[%d].data: required oneof field 'data' must have one initialized field\n", message, j)
			}
		}
	}
	for i, t := range r.Tools {
		for j, f := range t.FunctionDeclarations {
			if f.Name == "" {
				return invalidArgument("* %s.tools[%d].function_declarations[%d].name: Name cannot be empty.\n", message, i, j)
			}
			if err := checkFunctionName(f.Name, i, j, message); err != nil {
				return err
			}
		}
	}
	if err := checkGenerationConfig(r.GenerationConfig, message); err != nil {
		return err
	}
	if err := checkSafetySettings(r.SafetySettings); err != nil {
		return err
	}
	if thinks(model) {
		return checkSignatures(r.Contents)
	}
	return nil
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
