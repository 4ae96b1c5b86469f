package mcp

import (
	"context"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// eventService is the service of the events tool calls emit.
const eventService = "mcp"

type agentKey struct{}

// withAgent records the connected client's name for the identities the
// call acts with.
func withAgent(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, agentKey{}, name)
}

// agent is the provenance of everything a tool call does: a coding agent,
// named after the MCP client.
func agent(ctx context.Context) identity.Actor {
	name, _ := ctx.Value(agentKey{}).(string)
	return identity.Actor{Kind: identity.Agent, Name: name}
}

// asAgent marks an identity as acting through this MCP server.
func asAgent(ctx context.Context, id identity.Identity) identity.Identity { return id.Via(agent(ctx)) }

func adminAgent(ctx context.Context) identity.Identity {
	return asAgent(ctx, identity.AdminIdentity())
}

// emitToolCall puts one tool call on the sandbox's event stream as a
// request of service mcp by the agent (the engine events of what the call
// did carry the agent as their actor too). It is the one place this
// package builds an event.
func (s *Server) emitToolCall(ctx context.Context, tool string, r *result, d time.Duration) {
	who := adminAgent(ctx)
	if r.who != nil {
		who = asAgent(ctx, *r.who)
	}
	ev := event.Event{Kind: event.KindRequest, Service: eventService, Method: tool,
		Request: &event.Request{Verdict: event.Allow, DurationMs: float64(d.Microseconds()) / 1000,
			Decision: &event.Explanation{Engine: eventService, Reason: r.summary}}}
	ev.Who(who)
	switch {
	case r.err != nil:
		ev.Request.Verdict = event.Error
		ev.Err = &event.Failure{Code: r.err.Code, Message: r.err.Message}
	case !r.ok:
		ev.Request.Verdict = event.Deny
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

// verdictOf is a request event's verdict ("" for other kinds).
func verdictOf(e *event.Event) event.Verdict {
	if e.Kind == event.KindRequest && e.Request != nil {
		return e.Request.Verdict
	}
	return ""
}

// stripExplanations drops the large parts of request events (the whole
// decision and trace), keeping the deciding rule and the reason.
func stripExplanations(evs []event.Event) []event.Event {
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		if e.Request != nil {
			r := *e.Request
			r.Trace = nil
			if r.Decision != nil {
				r.Decision = &event.Explanation{Engine: r.Decision.Engine, Reason: r.Decision.Reason, Failing: r.Decision.Failing}
			}
			e.Request = &r
		}
		out[i] = e
	}
	return out
}
