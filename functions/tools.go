package functions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// The developer tools' view of the functions (the Studio's Functions
// page and the MCP tools): each function's trigger in one line, its URL,
// the payload last delivered to it, and one invocation with a body that
// works for every kind of function. The tools share it so a function is
// described and invoked the same way everywhere.

// Summary describes one function for the tools.
type Summary struct {
	ID       string `json:"id"`
	Codebase string `json:"codebase,omitempty"`
	Platform string `json:"platform"`
	// Kind is https, callable, event, blocking, task or schedule.
	Kind string `json:"kind"`
	// EventType is an event or blocking function's event type.
	EventType string `json:"eventType,omitempty"`
	// Resource is what an event function watches: its filters
	// (document=users/{uid}, bucket=…, ref=…) or the schedule.
	Resource string   `json:"resource,omitempty"`
	Regions  []string `json:"regions"`
	// URL is where the function answers on the functions port (HTTPS,
	// callable, task and blocking functions), in its first region.
	URL string `json:"url,omitempty"`
	// TimeoutSeconds and Concurrency are the function's options.
	TimeoutSeconds float64 `json:"timeoutSeconds"`
	Concurrency    int     `json:"concurrency,omitempty"`
	// HasPayload says a payload was delivered to it (LastPayload).
	HasPayload bool `json:"hasPayload,omitempty"`
}

// Summarize describes ep; base is the functions port's URL
// (http://host:port), empty when it is not known.
func Summarize(ep Endpoint, project, base string) Summary {
	s := Summary{ID: ep.ID, Codebase: ep.Codebase, Platform: ep.Platform, Kind: ep.Kind(), Regions: ep.Regions,
		TimeoutSeconds: ep.Timeout.Seconds(), Concurrency: ep.Concurrency}
	switch {
	case ep.Event != nil:
		s.EventType = ep.Event.EventType
		var parts []string
		for k, v := range ep.Event.EventFilters {
			parts = append(parts, k+"="+v)
		}
		for k, v := range ep.Event.EventFilterPathPatterns {
			parts = append(parts, k+"="+v)
		}
		sort.Strings(parts)
		s.Resource = strings.Join(parts, " ")
	case ep.Blocking != nil:
		s.EventType = ep.Blocking.EventType
	case ep.Schedule != nil:
		s.Resource = ep.Schedule.Schedule
		if ep.Schedule.TimeZone != "" {
			s.Resource += " (" + ep.Schedule.TimeZone + ")"
		}
	}
	if ep.IsHTTP() && base != "" && len(ep.Regions) > 0 {
		s.URL = strings.TrimSuffix(base, "/") + "/" + project + "/" + ep.Regions[0] + "/" + ep.ID
	}
	return s
}

// Summaries describes every loaded function.
func (e *Engine) Summaries(base string) []Summary {
	out := []Summary{}
	for _, ep := range e.Endpoints() {
		s := Summarize(ep, e.project, base)
		_, s.HasPayload = e.LastPayload(ep.ID)
		out = append(out, s)
	}
	return out
}

// maxKeptPayload bounds the payload kept per function for re-delivery;
// a larger one is not kept.
const maxKeptPayload = 256 << 10

// payloads keeps the last payload delivered to each event function.
type payloads struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (p *payloads) keep(id string, b []byte) {
	if len(b) > maxKeptPayload || !json.Valid(b) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string][]byte{}
	}
	p.m[id] = append([]byte(nil), b...)
}

// LastPayload is the payload last delivered to the event function id
// (a trigger's CloudEvent or legacy event, or one a tool gave), for
// re-delivery; payloads over 256 KiB are not kept.
func (e *Engine) LastPayload(id string) (json.RawMessage, bool) {
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	b, ok := e.kept.m[id]
	return json.RawMessage(b), ok
}

// InvokeRequest is one invocation a tool asks for. An HTTPS function
// gets Method (default POST, or GET without a body), Path (default "/")
// and Body; a callable gets {"data": Data} (Body, when given, is sent
// as is instead); an event function gets Payload, or its last delivered
// payload when Payload is empty.
type InvokeRequest struct {
	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
	Data    json.RawMessage   `json:"data,omitempty"`
	Payload json.RawMessage   `json:"payload,omitempty"`
}

// InvokeResult is what the invocation answered.
type InvokeResult struct {
	Function string `json:"function"`
	Kind     string `json:"kind"`
	// Status and Body are an HTTP function's response; Body is JSON when
	// the response was JSON, else a string.
	Status int             `json:"status,omitempty"`
	Header http.Header     `json:"header,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	// Outcome of an event function: ok, or the error it ended with.
	Outcome string `json:"outcome,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Errors of Invoke; match with errors.Is.
var (
	// ErrNoPayload is an event function invoked with no payload and none
	// recorded.
	ErrNoPayload = errors.New("no payload given and none was delivered to this function yet")
	// ErrBadInvoke is a request that does not fit the function's kind.
	ErrBadInvoke = errors.New("invalid invocation")
)

// maxToolResponse bounds the response body a tool shows.
const maxToolResponse = 1 << 20

// Invoke runs the function id as req says and returns its answer. It
// fails with ErrNotFound, ErrNoPayload or ErrBadInvoke; a function that
// fails is an InvokeResult (its status, or Outcome and Error), not an
// error. The invocation is a typed event like any other.
func (e *Engine) Invoke(ctx context.Context, id string, req InvokeRequest) (InvokeResult, error) {
	ep, ok := e.Endpoint(id)
	if !ok {
		return InvokeResult{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	res := InvokeResult{Function: id, Kind: ep.Kind()}
	if !ep.IsHTTP() {
		payload := req.Payload
		if len(payload) == 0 {
			last, ok := e.LastPayload(id)
			if !ok {
				return res, fmt.Errorf("%w: %s", ErrNoPayload, id)
			}
			payload = last
		}
		if !json.Valid(payload) {
			return res, fmt.Errorf("%w: the payload is not JSON", ErrBadInvoke)
		}
		res.Outcome = "ok"
		if err := e.DeliverEvent(ctx, id, payload); err != nil {
			res.Outcome, res.Error = "error", err.Error()
			switch {
			case errors.Is(err, ErrTimeout):
				res.Outcome = "timeout"
			case errors.Is(err, ErrCrashed):
				res.Outcome = "crash"
			}
		}
		return res, nil
	}
	method := strings.ToUpper(req.Method)
	body := []byte(req.Body)
	h := http.Header{}
	for k, v := range req.Headers {
		h.Set(k, v)
	}
	if ep.Callable != nil && len(body) == 0 {
		data := req.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		if !json.Valid(data) {
			return res, fmt.Errorf("%w: data is not JSON", ErrBadInvoke)
		}
		body = append(append([]byte(`{"data":`), data...), '}')
	}
	if method == "" {
		method = http.MethodPost
		if len(body) == 0 && ep.Callable == nil {
			method = http.MethodGet
		}
	}
	if !validMethod(method) {
		return res, fmt.Errorf("%w: method %q", ErrBadInvoke, req.Method)
	}
	if len(body) > 0 && h.Get("Content-Type") == "" {
		if json.Valid(body) {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/plain")
		}
	}
	path := req.Path
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	resp, err := e.CallHTTP(ctx, id, method, path, h, body)
	if err != nil {
		if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
			return res, err
		}
		return res, fmt.Errorf("%w: %v", ErrBadInvoke, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxToolResponse))
	res.Status, res.Header = resp.StatusCode, resp.Header
	if json.Valid(b) && len(b) > 0 {
		res.Body = b
	} else {
		if !utf8.Valid(b) {
			b = []byte(strings.ToValidUTF8(string(b), "�"))
		}
		res.Body, _ = json.Marshal(string(b))
	}
	return res, nil
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}
