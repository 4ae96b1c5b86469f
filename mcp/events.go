package mcp

import (
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// Service and origin of the events tool calls emit.
const (
	eventService = "mcp"
	originAgent  = "agent"
)

// emitToolCall puts one tool call on the sandbox's event stream (origin
// agent), so Studio and the history show what an agent did. It is the one
// place this package builds an event.
func (s *Server) emitToolCall(tool string, r *result, d time.Duration) {
	who := identity.AdminIdentity()
	if r.who != nil {
		who = *r.who
	}
	ev := event.Event{Kind: event.KindOperation, Service: eventService, Method: tool, Auth: who, Origin: originAgent,
		DurationMs: float64(d.Microseconds()) / 1000, Result: event.ResultAllow, Detail: map[string]any{"summary": r.summary}}
	if r.err != nil {
		ev.Result = event.ResultError
		ev.Error = &event.Error{Code: r.err.Code, Message: r.err.Message}
	} else if !r.ok {
		ev.Result = event.ResultDeny
	}
	s.sb.Events().Emit(ev)
}

// history is the event history without this package's own tool-call
// events.
func (s *Server) history() []event.Event {
	all := s.sb.Events().History()
	out := make([]event.Event, 0, len(all))
	for _, e := range all {
		if e.Service != eventService {
			out = append(out, e)
		}
	}
	return out
}
