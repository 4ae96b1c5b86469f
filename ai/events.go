package ai

import (
	"net/http"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// Every event the engine emits is built here, so the event schema is
// adapted in one place. A call appends a record to the call log, so it is
// a mutation of the AI service's records (event.KindMutation): Op
// "call", Current the call's summary — prompt, answer, token counts —
// and Err the error the client received.

// CallEvent is the Current of a call's event: the call record without its
// raw request and response bodies (the call log keeps those).
type CallEvent struct {
	Seq              int64    `json:"seq"`
	Model            string   `json:"model"`
	Backend          string   `json:"backend"`
	Location         string   `json:"location,omitempty"`
	Prompt           string   `json:"prompt"`
	Answer           string   `json:"answer"`
	FunctionCalls    []string `json:"functionCalls,omitempty"`
	Source           string   `json:"source"`
	Entry            string   `json:"entry,omitempty"`
	PromptTokens     int      `json:"promptTokens"`
	CandidatesTokens int      `json:"candidatesTokens"`
	TotalTokens      int      `json:"totalTokens"`
	Status           int      `json:"status"`
	DurationMs       float64  `json:"durationMs"`
}

// Event ops.
const (
	OpCall         = "call"
	OpScriptSet    = "script_set"
	OpScriptAppend = "script_append"
	OpClear        = "clear"
)

// emitCall is one answered (or refused) call. note reports a call log
// that could not be persisted (the call itself was answered).
func (e *Engine) emitCall(rec *CallRecord, who identity.Identity, durationMs float64, note string) {
	ev := event.Event{
		Kind:    event.KindMutation,
		Service: Name,
		Method:  rec.Method,
		Path:    "projects/" + rec.Project + "/models/" + rec.Model,
		Origin:  event.OriginClient,
		Mutation: &event.Mutation{Op: OpCall, Project: rec.Project, Note: note, Current: CallEvent{
			Seq: rec.Seq, Model: rec.Model, Backend: rec.Backend, Location: rec.Location,
			Prompt: rec.Prompt, Answer: rec.Answer, FunctionCalls: rec.FunctionCalls,
			Source: rec.Source, Entry: rec.Entry,
			PromptTokens: rec.PromptTokens, CandidatesTokens: rec.CandidatesTokens, TotalTokens: rec.TotalTokens,
			Status: rec.Status, DurationMs: durationMs,
		}},
	}
	ev.Who(who)
	if rec.Error != "" {
		code := errcode.FromHTTP(rec.Status).String()
		if code == "" {
			code = http.StatusText(rec.Status)
		}
		ev.Err = &event.Failure{Code: code, Message: rec.Error}
	}
	e.env.Events.Emit(ev)
}

// emitScript is a change of a project's script (or a clear of the
// project) made through the engine's API.
func (e *Engine) emitScript(project, op string, entries int) {
	ev := event.Event{
		Kind:     event.KindMutation,
		Service:  Name,
		Method:   op,
		Path:     "projects/" + project + "/script",
		Origin:   event.OriginAdmin,
		Mutation: &event.Mutation{Op: op, Project: project, Current: map[string]int{"entries": entries}},
	}
	ev.Who(identity.AdminIdentity())
	e.env.Events.Emit(ev)
}
