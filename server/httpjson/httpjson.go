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
	"net/textproto"
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

// Appender is a value that writes its own JSON: byte for byte what
// encoding/json writes for it (compact, <, > and & escaped), without
// reflection. Each implementation is compared with encoding/json in its
// own package's tests.
type Appender interface {
	AppendJSON(b []byte) []byte
}

// appendBuffers are Append's buffers, reused across responses as JSON's
// are (a pointer, so that putting one back allocates nothing).
var appendBuffers = sync.Pool{New: func() any { return new([]byte) }}

// Append answers status with a's JSON in the style: what JSON(w, status,
// a) answers, written by a itself. A style that indents or leaves HTML
// characters raw goes through JSON.
func (s Style) Append(w http.ResponseWriter, status int, a Appender) {
	if s.Indent || s.RawHTML {
		s.JSON(w, status, a)
		return
	}
	bp := appendBuffers.Get().(*[]byte)
	b := a.AppendJSON((*bp)[:0])
	if s.Newline {
		b = append(b, '\n')
	}
	s.write(w, status, b) // Write does not keep the bytes (io.Writer's contract)
	if cap(b) <= maxPooledBuffer {
		*bp = b[:0]
		appendBuffers.Put(bp)
	}
}

// Headers sets the style's Content-Type and headers without writing, for
// a body the caller streams.
func (s Style) Headers(w http.ResponseWriter) { s.headers(w, -1) }

// headers sets the style's headers and, unless length is negative,
// Content-Length: what Header().Set does for each, with their values in
// one allocation.
func (s Style) headers(w http.ResponseWriter, length int) {
	n := 1 + len(s.Header)
	if length >= 0 {
		n++
	}
	vals := make([]string, n)
	vals[0] = s.contentType()
	h := w.Header()
	h["Content-Type"] = vals[0:1:1]
	i := 1
	for k, v := range s.Header {
		vals[i] = v
		h[textproto.CanonicalMIMEHeaderKey(k)] = vals[i : i+1 : i+1]
		i++
	}
	if length >= 0 {
		vals[i] = strconv.Itoa(length)
		h["Content-Length"] = vals[i : i+1 : i+1]
	}
}

// contentType is the style's Content-Type; the charsets in use are
// written out once.
func (s Style) contentType() string {
	switch s.Charset {
	case "":
		return "application/json"
	case "utf-8":
		return "application/json; charset=utf-8"
	case "UTF-8":
		return "application/json; charset=UTF-8"
	}
	return "application/json; charset=" + s.Charset
}

func (s Style) write(w http.ResponseWriter, status int, b []byte) {
	length := -1
	if s.Length {
		length = len(b)
	}
	s.headers(w, length)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
