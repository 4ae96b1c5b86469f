package databaseserver

import (
	"net/http"
	"net/url"
	"sync"

	"github.com/pyric/pyric/database"
)

// The REST answers of the common case — a read or a write's echo as
// clients read it — are encoded into a pooled buffer and written with
// the headers of api's style, instead of a fresh encoding, a copy of it
// for the newline and three header values built per request.

// replyHeader is api's headers as stored in a response's header map.
// Every response shares the value slices: net/http only reads them, and
// a handler that changed one would replace it (Header.Set), not write
// into it.
var replyHeader = struct{ contentType, cacheControl []string }{
	contentType:  []string{"application/json; charset=utf-8"},
	cacheControl: []string{"no-cache"},
}

// maxPooledReply is the largest buffer kept for another answer: a large
// read's buffer is left to the collector rather than held by the pool.
const maxPooledReply = 64 << 10

var replyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// replyBuf is an empty buffer from the pool; give it back with
// releaseReplyBuf once written.
func replyBuf() *[]byte {
	b := replyBufs.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

func releaseReplyBuf(b *[]byte) {
	if cap(*b) <= maxPooledReply {
		replyBufs.Put(b)
	}
}

// restReply answers status with body, JSON, as api.Body does (its
// Content-Type and Cache-Control; the newline is body's last byte
// already). Write copies body, so its buffer may be reused after.
func restReply(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = replyHeader.contentType
	h["Cache-Control"] = replyHeader.cacheControl
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// appendRender appends render(v, qv, print) and api's newline to b.
func appendRender(b []byte, v any, qv url.Values, print string) []byte {
	if print != "pretty" && qv.Get("format") != "export" {
		if out, err := database.AppendPlain(b, v); err == nil {
			return append(out, '\n')
		}
	}
	return append(append(b, render(v, qv, print)...), '\n')
}

// replyRender answers status with render(v, qv, print) as api.Body does.
func replyRender(w http.ResponseWriter, status int, v any, qv url.Values, print string) {
	buf := replyBuf()
	*buf = appendRender(*buf, v, qv, print)
	restReply(w, status, *buf)
	releaseReplyBuf(buf)
}
