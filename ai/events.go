package ai

import (
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// Every event the engine emits is built here, so the event schema can be
// adapted in one place.

// emitCall is one answered (or refused) call: an operation event whose
// Detail holds the prompt, the answer and the token counts.
func (e *Engine) emitCall(rec *CallRecord, who identity.Identity, took time.Duration) {
	result := event.ResultAllow
	if rec.Status != 200 {
		result = event.ResultError
	}
	detail := map[string]any{
		"seq":              rec.Seq,
		"model":            rec.Model,
		"backend":          rec.Backend,
		"prompt":           rec.Prompt,
		"answer":           rec.Answer,
		"source":           rec.Source,
		"promptTokens":     rec.PromptTokens,
		"candidatesTokens": rec.CandidatesTokens,
		"totalTokens":      rec.TotalTokens,
		"status":           rec.Status,
	}
	if rec.Entry != "" {
		detail["entry"] = rec.Entry
	}
	if len(rec.FunctionCalls) > 0 {
		detail["functionCalls"] = rec.FunctionCalls
	}
	ev := event.Event{
		Kind:       event.KindOperation,
		Service:    Name,
		Method:     rec.Method,
		Path:       "projects/" + rec.Project + "/models/" + rec.Model,
		Auth:       who,
		Result:     result,
		Origin:     event.OriginUser,
		DurationMs: float64(took.Microseconds()) / 1000,
		Detail:     detail,
	}
	if rec.Error != "" {
		ev.Reasons = []string{rec.Error}
		ev.Error = &event.Error{Code: statusName(rec.Status), Message: rec.Error}
	}
	e.env.Events.Emit(ev)
}

// emitScript is a change of a project's script made through the API.
func (e *Engine) emitScript(project, op string, n int) {
	e.env.Events.Emit(event.Event{
		Kind:    event.KindServiceMutation,
		Service: Name,
		Op:      op,
		Path:    "projects/" + project + "/script",
		Auth:    identity.AdminIdentity(),
		Detail:  map[string]any{"entries": n},
	})
}

// emitError reports a failure that is not the caller's (a call log that
// could not be persisted).
func (e *Engine) emitError(project string, err error) {
	e.env.Events.Emit(event.Event{
		Kind:    event.KindRuntimeError,
		Service: Name,
		Path:    "projects/" + project,
		Error:   &event.Error{Code: "INTERNAL", Message: err.Error()},
	})
}
