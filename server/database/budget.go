package databaseserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/pyric/pyric/database"
)

// DefaultMaxInFlight bounds the request body bytes all REST writes hold
// at once: one write of production's largest size (256 MiB), or many
// smaller ones. Past it a write is answered 503 with Retry-After, before
// its body is read, instead of every concurrent write buffering its own.
const DefaultMaxInFlight = database.MaxRESTWrite

// errBusy is a write refused because others hold the in-flight budget.
var errBusy = errors.New("busy")

// readWriteBody reads a REST write's body within production's size limit
// and the handler's in-flight budget. The held bytes stay reserved until
// the caller gives them back (h.inflight.Give, after the write is
// applied); ok is false when the answer was already written.
func (h *Handler) readWriteBody(w http.ResponseWriter, r *http.Request, pathKeys bool) (v any, held int64, ok bool) {
	if r.ContentLength > database.MaxRESTWrite {
		tooLarge(w)
		return nil, 0, false
	}
	// held is what the body holds of the budget, given back by the
	// caller once the write is done (or here on a failure): a count, not
	// a closure over it, which took two allocations a request.
	if r.ContentLength > 0 {
		if !h.inflight.Take(r.ContentLength) {
			busy(w, h.inflight.Max)
			return nil, 0, false
		}
		held = r.ContentLength
	}
	fail := func() (any, int64, bool) {
		h.inflight.Give(held)
		return nil, 0, false
	}
	// A body of unknown length takes its bytes as they arrive.
	body := io.Reader(http.MaxBytesReader(w, r.Body, database.MaxRESTWrite))
	// The body is read straight into buf: of its declared length (plus
	// one byte, to see the end without growing), else grown as it
	// arrives. No read buffer of its own: a fixed chunk per request was
	// most of a small write's allocation, and its garbage collection a
	// good share of the write's CPU.
	size := r.ContentLength + 1
	if r.ContentLength < 0 {
		size = 512
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			if more := int64(len(buf)+n) - held; more > 0 {
				if !h.inflight.Take(more) {
					fail()
					busy(w, h.inflight.Max)
					return nil, 0, false
				}
				held += more
			}
			buf = buf[:len(buf)+n]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fail()
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				tooLarge(w)
			} else {
				api.Message(w, http.StatusBadRequest, "could not read the request body")
			}
			return nil, 0, false
		}
	}
	v, err := database.DecodeJSON(buf)
	if err != nil {
		fail()
		api.Message(w, http.StatusBadRequest, "Invalid data; couldn't parse JSON object, array, or value.")
		return nil, 0, false
	}
	if err := database.CheckBodyKeys(buf, pathKeys); err != nil {
		fail()
		writeErr(w, err)
		return nil, 0, false
	}
	return v, held, true
}

func tooLarge(w http.ResponseWriter) {
	api.Message(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Data to write exceeds the maximum size of %d bytes", database.MaxRESTWrite))
}

func busy(w http.ResponseWriter, max int64) {
	w.Header().Set("Retry-After", "1")
	api.Message(w, http.StatusServiceUnavailable, "too many large writes in flight: the request bodies being written already hold "+
		strconv.FormatInt(max>>20, 10)+" MiB; retry when they finish")
}
