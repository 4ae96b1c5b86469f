// Package httpjson writes the HTTP responses of the wire adapters: JSON bodies
// with the headers each API sends, and Google's JSON error envelope
// {"error": {"code", "message", "status", ...}} in the variants production
// uses per service (the "errors" list of Identity Toolkit and GCS, the
// "details" of the newer APIs, RTDB's bare {"error": "..."}).
//
// Each adapter declares one Style: the byte-level habits of the API it
// speaks (charset spelling, indentation, trailing newline), so that what
// clients receive stays the bytes production sends. The codes themselves
// come from package errcode.
package httpjson

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/pyric/pyric/errcode"
)

// Style is how one API writes JSON.
type Style struct {
	// Charset is the charset of the Content-Type
	// ("application/json; charset=utf-8"): "utf-8" or, as Google's newer
	// front ends spell it, "UTF-8"; "" sends plain "application/json".
	Charset string
	// Indent pretty-prints with two spaces.
	Indent bool
	// Newline ends every body with "\n".
	Newline bool
	// RawHTML leaves <, > and & unescaped in strings (json.Marshal
	// escapes them).
	RawHTML bool
	// Length sends Content-Length.
	Length bool
	// Header is set on every response (Cache-Control, nosniff, …).
	Header map[string]string
}

// Status is the body of Google's JSON error envelope {"error": Status}.
// Code is the HTTP status the response also carries. The field order is
// the bytes' order: Errors (Identity Toolkit's and GCS's list) comes
// between code and message, Details (google.rpc.Status details) last.
type Status struct {
	Code    int    `json:"code"`
	Errors  any    `json:"errors,omitempty"`
	Message string `json:"message"`
	Status  string `json:"status,omitempty"`
	Details any    `json:"details,omitempty"`
}

// Envelope is Google's JSON error envelope, for a body an adapter sends
// in a part of its own (a multipart batch answer).
type Envelope struct {
	Error Status `json:"error"`
}

// Canonical is the envelope of a code in Google's canonical mapping: its
// HTTP status, msg, and its name as status.
func Canonical(c errcode.Code, msg string) Status {
	return Status{Code: c.HTTPStatus(), Message: msg, Status: c.String()}
}

// Encode is v as the style writes it.
func (s Style) Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := s.encode(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encode writes v as the style writes it to buf.
func (s Style) encode(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(!s.RawHTML)
	if s.Indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	if !s.Newline {
		buf.Truncate(buf.Len() - 1)
	}
	return nil
}

// buffers are JSON's encoding buffers, reused across responses: a fresh
// one grew several times over a response of a few hundred bytes.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer bounds the buffers kept for reuse, so that one large
// response does not stay allocated.
const maxPooledBuffer = 64 << 10

// JSON answers status with v encoded in the style; a value that does not
// encode (a program error) answers 500 INTERNAL instead.
func (s Style) JSON(w http.ResponseWriter, status int, v any) {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buffers.Put(buf)
		}
	}()
	if err := s.encode(buf, v); err != nil {
		s.Error(w, Canonical(errcode.Internal, "encoding the response failed: "+err.Error()))
		return
	}
	s.write(w, status, buf.Bytes()) // Write does not keep the bytes (io.Writer's contract)
}

// Body answers status with body, JSON already encoded; the style adds its
// newline.
func (s Style) Body(w http.ResponseWriter, status int, body []byte) {
	if s.Newline {
		body = append(body[:len(body):len(body)], '\n')
	}
	s.write(w, status, body)
}

// Error answers e.Code with the envelope {"error": e}.
func (s Style) Error(w http.ResponseWriter, e Status) {
	s.JSON(w, e.Code, Envelope{e})
}

// Fail answers the canonical envelope of c with msg.
func (s Style) Fail(w http.ResponseWriter, c errcode.Code, msg string) {
	s.Error(w, Canonical(c, msg))
}

// Message answers status with {"error": msg}, the envelope of the APIs
// older than google.rpc.Status (the RTDB REST API, the instance-id
// service).
func (s Style) Message(w http.ResponseWriter, status int, msg string) {
	s.JSON(w, status, struct {
		Error string `json:"error"`
	}{msg})
}

// Headers sets the style's Content-Type and headers without writing, for
// a body the caller streams.
func (s Style) Headers(w http.ResponseWriter) {
	h := w.Header()
	if s.Charset == "" {
		h.Set("Content-Type", "application/json")
	} else {
		h.Set("Content-Type", "application/json; charset="+s.Charset)
	}
	for k, v := range s.Header {
		h.Set(k, v)
	}
}

func (s Style) write(w http.ResponseWriter, status int, b []byte) {
	s.Headers(w)
	if s.Length {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
