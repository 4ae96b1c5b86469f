package studio

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/sandbox"
)

// The Functions page's endpoints, on the functions engine: each loaded
// function with its trigger or URL and its last invocations (from the
// event history), the payload last delivered to an event function, and
// an invocation with a body (functions.Engine.Invoke, as the MCP tool).

// invocationsShown bounds the invocations listed per function: the
// newest are kept.
const invocationsShown = 20

// invokeTimeout bounds one invocation from the Studio beyond the
// function's own timeout (a function that waits longer fails alone).
const invokeTimeout = 10 * time.Minute

func (s *Studio) fnEngine(w http.ResponseWriter) (*functions.Engine, bool) {
	e, ok := sandbox.Lookup[*functions.Engine](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "Cloud Functions is not running in this sandbox (firebase.json has no \"functions\")")
		return nil, false
	}
	return e, true
}

// functionsBase is the functions port's URL, from the running endpoints.
func (s *Studio) functionsBase() string {
	if s.opts.Endpoints == nil {
		return ""
	}
	for _, ep := range s.opts.Endpoints() {
		if ep.Service == functions.Name && ep.Addr != "" {
			if strings.Contains(ep.Addr, "://") {
				return ep.Addr
			}
			return "http://" + ep.Addr
		}
	}
	return ""
}

// fnInvocation is one invocation event as the page lists it.
type fnInvocation struct {
	ID    string    `json:"id"` // the event's id
	At    time.Time `json:"at"`
	Error string    `json:"error,omitempty"`
	*event.Invocation
}

// fnListing is one function with its newest invocations.
type fnListing struct {
	functions.Summary
	Invocations []fnInvocation `json:"invocations"`
	// InvocationCount is how many invocations the history holds.
	InvocationCount int `json:"invocationCount"`
}

// fnList answers GET /api/functions: the project, the functions port's
// URL, and every function with its newest invocations (newest first).
func (s *Studio) fnList(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fnEngine(w)
	if !ok {
		return
	}
	base := s.functionsBase()
	sums := e.Summaries(base)
	byID := map[string]*fnListing{}
	list := make([]*fnListing, len(sums))
	for i, sm := range sums {
		list[i] = &fnListing{Summary: sm, Invocations: []fnInvocation{}}
		byID[sm.ID] = list[i]
	}
	bus := s.sb.Events()
	var after uint64
	for {
		chunk := bus.Since(after, 512)
		if len(chunk) == 0 {
			break
		}
		for i := range chunk {
			ev := &chunk[i]
			after = ev.Seq
			if ev.Kind != event.KindInvocation || ev.Invocation == nil {
				continue
			}
			l := byID[ev.Invocation.Function]
			if l == nil {
				continue
			}
			l.InvocationCount++
			inv := fnInvocation{ID: ev.ID, At: ev.At, Invocation: ev.Invocation}
			if ev.Err != nil {
				inv.Error = ev.Err.Message
			}
			l.Invocations = append(l.Invocations, inv)
			if len(l.Invocations) > invocationsShown {
				l.Invocations = l.Invocations[1:]
			}
		}
	}
	for _, l := range list {
		for i, j := 0, len(l.Invocations)-1; i < j; i, j = i+1, j-1 {
			l.Invocations[i], l.Invocations[j] = l.Invocations[j], l.Invocations[i]
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": e.Project(), "url": base, "functions": list})
}

// fnPayload answers GET /api/functions/{id}/payload: the payload last
// delivered to an event function, to re-deliver as is or edited.
func (s *Studio) fnPayload(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fnEngine(w)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if _, ok := e.Endpoint(id); !ok {
		fail(w, http.StatusNotFound, "no function "+quote(id))
		return
	}
	p, ok := e.LastPayload(id)
	if !ok {
		fail(w, http.StatusNotFound, "no payload was delivered to "+id+" yet")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"function": id, "payload": p})
}

// fnInvoke answers POST /api/functions/{id}/invoke with a
// functions.InvokeRequest: the function's answer (HTTP status and body,
// or an event function's outcome).
func (s *Studio) fnInvoke(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fnEngine(w)
	if !ok {
		return
	}
	var req functions.InvokeRequest
	if !readJSON(w, r, &req) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), invokeTimeout)
	defer cancel()
	res, err := e.Invoke(ctx, r.PathValue("id"), req)
	switch {
	case errors.Is(err, functions.ErrNotFound):
		fail(w, http.StatusNotFound, err.Error())
	case errors.Is(err, functions.ErrNoPayload), errors.Is(err, functions.ErrBadInvoke):
		fail(w, http.StatusBadRequest, err.Error())
	case err != nil:
		fail(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeJSON(w, http.StatusOK, res)
	}
}
