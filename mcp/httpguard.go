package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/server/httpjson"
)

// Bounds of one streamable-HTTP request: a JSON-RPC batch (which MCP
// versions before 2025-06-18 allow) runs its calls one after another, so
// an unbounded batch holds the server for as long as its sender likes.
const (
	// MaxBatchCalls is the most calls one JSON-RPC batch may hold.
	MaxBatchCalls = 50
	// MaxRequestBytes bounds a request body.
	MaxRequestBytes = 8 << 20
)

// guardHTTP applies what the MCP specification asks of a streamable-HTTP
// server (validate Origin, against DNS rebinding and web pages: the ports'
// policy) and bounds a request's body and batch before the SDK decodes it.
func guardHTTP(policy *server.Policy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := policy.Check(r); msg != "" {
			server.Refuse(w, msg)
			return
		}
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			rpcError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("Invalid Request: the body is larger than %d bytes", MaxRequestBytes))
			return
		}
		if err != nil {
			rpcError(w, http.StatusBadRequest, -32700, "Parse error: "+err.Error())
			return
		}
		if n, ok := batchLen(body); ok && n > MaxBatchCalls {
			rpcError(w, http.StatusBadRequest, -32600, fmt.Sprintf("Invalid Request: a JSON-RPC batch may hold at most %d calls, this one holds %d; send them in smaller batches", MaxBatchCalls, n))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// batchLen counts the elements of a JSON array body (false when the body
// is not an array), without decoding them.
func batchLen(body []byte) (int, bool) {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if _, err := dec.Token(); err != nil {
		return 0, false
	}
	n := 0
	for dec.More() {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n, true
		}
		n++
		if n > MaxBatchCalls {
			return n + countRest(dec), true
		}
	}
	return n, true
}

// countRest counts the remaining elements cheaply for the error message.
func countRest(dec *json.Decoder) int {
	n := 0
	for dec.More() {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
		n++
	}
	return n
}

func rpcError(w http.ResponseWriter, status, code int, msg string) {
	httpjson.Style{}.JSON(w, status, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
}
