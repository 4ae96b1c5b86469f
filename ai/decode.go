package ai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxRequestBytes bounds a request body, as production's 20 MB inline
// request limit does.
const MaxRequestBytes = 20 << 20

// DecodeRequest decodes a GenerateContentRequest body. Fields the engines
// do not read are accepted, as production accepts every field of its
// proto; a body that is not a JSON object, or a field of the wrong type,
// is production's "Invalid JSON payload received." 400, and the values
// proto-JSON decoding refuses (see decodeChecks) its "Invalid value at"
// 400.
func DecodeRequest(body []byte) (*Request, error) {
	if len(body) > MaxRequestBytes {
		return nil, &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", MaxRequestBytes)}
	}
	var r Request
	if err := decodeObject(body, &r); err != nil {
		return nil, err
	}
	if err := decodeChecks(&r, func() []byte { return body }); err != nil {
		return nil, err
	}
	return &r, nil
}

// DecodeCountTokens decodes a countTokens body: the Firebase SDK's Google
// AI form wraps the request as {"generateContentRequest": {...}}; the Gen
// AI SDKs and the Vertex form put contents at the top level.
func DecodeCountTokens(body []byte) (*Request, error) {
	if len(body) > MaxRequestBytes {
		return nil, &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", MaxRequestBytes)}
	}
	var w struct {
		GenerateContentRequest *Request `json:"generateContentRequest"`
		Request
	}
	if err := decodeObject(body, &w); err != nil {
		return nil, err
	}
	if w.GenerateContentRequest != nil {
		inner := func() []byte {
			var g struct {
				R json.RawMessage `json:"generateContentRequest"`
			}
			_ = json.Unmarshal(body, &g)
			return g.R
		}
		if err := decodeChecks(w.GenerateContentRequest, inner); err != nil {
			return nil, err
		}
		return w.GenerateContentRequest, nil
	}
	if err := decodeChecks(&w.Request, func() []byte { return body }); err != nil {
		return nil, err
	}
	return &w.Request, nil
}

func decodeObject(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		trimmed = []byte("{}") // production treats an empty body as an empty message
	}
	if trimmed[0] != '{' {
		return errInvalidJSON("Unknown name \"\": Root element must be a message.")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errInvalidJSON(fmt.Sprintf("Invalid value at '%s' (%s), %s", te.Field, goTypeName(te.Type.String()), jsonKind(te.Value)))
		}
		return errInvalidJSON(fmt.Sprintf("Syntax error: %v", err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errInvalidJSON("Closing quote expected in string; trailing data after the message.")
	}
	return nil
}

func goTypeName(t string) string {
	switch t {
	case "string", "*string":
		return "TYPE_STRING"
	case "int", "*int", "int64", "*int64":
		return "TYPE_INT32"
	case "float64", "*float64":
		return "TYPE_FLOAT"
	case "bool":
		return "TYPE_BOOL"
	}
	if len(t) > 2 && t[:2] == "[]" {
		return "repeated message"
	}
	return "message"
}

func jsonKind(v string) string {
	switch v {
	case "string":
		return "Starting an object on a scalar field"
	case "array":
		return "Proto field is not repeating, cannot start list."
	case "object":
		return "Starting an object on a scalar field"
	}
	return "value of the wrong type: " + v
}
