package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/sandbox"
)

type functionsListIn struct{}

type functionsInvokeIn struct {
	Function string            `json:"function" jsonschema:"the function's id as functions_list names it (group-name for a member of an exported group)"`
	Method   string            `json:"method,omitempty" jsonschema:"HTTPS functions: the HTTP method (default POST with a body, GET without)"`
	Path     string            `json:"path,omitempty" jsonschema:"HTTPS functions: the path (and query) below the function's URL, default /"`
	Headers  map[string]string `json:"headers,omitempty" jsonschema:"HTTPS and callable functions: request headers"`
	Body     any               `json:"body,omitempty" jsonschema:"HTTPS functions: the request body (JSON is sent as application/json; a JSON string is sent as its text)"`
	Data     any               `json:"data,omitempty" jsonschema:"callable functions: the call's data, sent as {data: ...}"`
	Payload  any               `json:"payload,omitempty" jsonschema:"event functions: the event to deliver (a CloudEvent for v2, {data, context} for v1); omitted: the payload last delivered to it is delivered again"`
}

func (s *Server) addFunctionsTools() {
	addTool(s, "functions_list", "List the app's Cloud Functions: each function's trigger (https, callable, event with its event type and resource, blocking, task, schedule), its regions and its URL on the functions port.",
		func(ctx context.Context, in *functionsListIn, _ []byte) *result { return s.functionsList() })
	addTool(s, "functions_invoke", "Invoke a Cloud Function: an HTTPS function with a method, path and body; a callable with data (answered {result} or {error}); an event function with a payload, or again with the payload last delivered to it. Returns the HTTP status and body, or the event function's outcome; the invocation appears in the event stream.",
		func(ctx context.Context, in *functionsInvokeIn, _ []byte) *result { return s.functionsInvoke(ctx, in) })
}

func (s *Server) functionsEngine() (*functions.Engine, *result) {
	e, ok := sandbox.Lookup[*functions.Engine](s.sb)
	if !ok {
		return nil, failure("SERVICE_UNAVAILABLE", "Cloud Functions is not running in this sandbox", false, `add "functions" to firebase.json and start pyric serve in its directory`)
	}
	return e, nil
}

func (s *Server) functionsList() *result {
	e, fail := s.functionsEngine()
	if fail != nil {
		return fail
	}
	base := ""
	if s.opts.FunctionsURL != nil {
		base = s.opts.FunctionsURL()
	}
	list := e.Summaries(base)
	return okResult(fmt.Sprintf("%d functions", len(list)), map[string]any{"project": e.Project(), "functions": list})
}

func (s *Server) functionsInvoke(ctx context.Context, in *functionsInvokeIn) *result {
	e, fail := s.functionsEngine()
	if fail != nil {
		return fail
	}
	if in.Function == "" {
		return invalid("function: required (see functions_list)")
	}
	var body json.RawMessage
	if text, ok := in.Body.(string); ok {
		body = json.RawMessage(text) // a string body goes as its text
	} else {
		body = rawJSON(in.Body)
	}
	res, err := e.Invoke(ctx, in.Function, functions.InvokeRequest{Method: in.Method, Path: in.Path, Headers: in.Headers, Body: body, Data: rawJSON(in.Data), Payload: rawJSON(in.Payload)})
	switch {
	case errors.Is(err, functions.ErrNotFound):
		return failure("NOT_FOUND", err.Error(), true, "functions_list names the functions")
	case errors.Is(err, functions.ErrNoPayload):
		return failure("FAILED_PRECONDITION", err.Error(), true, "pass payload, or cause the trigger once (e.g. write the watched document)")
	case errors.Is(err, functions.ErrBadInvoke):
		return failure("INVALID_ARGUMENT", err.Error(), true, "")
	case err != nil:
		return failure("UNAVAILABLE", err.Error(), false, "")
	}
	var summary string
	if res.Outcome != "" {
		summary = in.Function + ": " + res.Outcome
		if res.Error != "" {
			summary += ": " + res.Error
		}
	} else {
		b := string(res.Body)
		if len(b) > 200 {
			b = b[:200] + "…"
		}
		summary = fmt.Sprintf("%s answered %d: %s", in.Function, res.Status, strings.TrimSpace(b))
	}
	return okResult(summary, res)
}

// rawJSON is v as JSON; nil stays empty (absent).
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}
