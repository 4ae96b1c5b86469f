package databaseserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
)

// restPath is the database path of a REST URL: /a/b.json → /a/b.
func restPath(r *http.Request) string {
	p := strings.TrimSuffix(r.URL.Path, ".json")
	if p == "" {
		return "/"
	}
	return p
}

// serveREST answers a REST request; qv is its parsed query, ns its
// namespace.
func (h *Handler) serveREST(w http.ResponseWriter, r *http.Request, qv url.Values, ns string) {
	who, err := caller(r, qv)
	if err != nil {
		api.Message(w, http.StatusUnauthorized, err.Error())
		return
	}
	path := restPath(r)
	if err := database.CheckRESTPath(path); err != nil {
		writeErr(w, err)
		return
	}
	print := qv.Get("print")
	if print != "" && print != "pretty" && print != "silent" {
		api.Message(w, http.StatusBadRequest, "print must be 'pretty' or 'silent'")
		return
	}
	method := r.Method
	if m := qv.Get("x-http-method-override"); m != "" && method == http.MethodPost {
		method = strings.ToUpper(m)
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			h.serveStream(w, r, who, ns, path)
			return
		}
		h.restGet(w, r, qv, who, ns, path, print)
	case http.MethodPut, http.MethodPatch, http.MethodPost:
		h.restWrite(w, r, qv, method, who, ns, path, print)
	case http.MethodDelete:
		h.restDelete(w, r, qv, who, ns, path, print)
	default:
		api.Message(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not supported")
	}
}

// The request headers a REST request is asked for, in the canonical form
// http.Header keeps them in: Header.Get of another spelling ("X-Firebase-ETag")
// builds the canonical key again on every call.
const (
	xFirebaseETag = "X-Firebase-Etag"
	ifMatch       = "If-Match"
	ifNoneMatch   = "If-None-Match"
)

func wantsETag(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get(xFirebaseETag), "true") || r.Header.Get(ifMatch) != ""
}

// render is the response body of value v as stored: as clients read it
// (database.Plain), or as stored for ?format=export, indented for
// print=pretty.
func render(v any, qv url.Values, print string) []byte {
	switch {
	case qv.Get("format") == "export":
		return encode(v, print)
	case print == "pretty":
		return encode(database.Plain(v), print)
	}
	b, _ := database.MarshalPlain(v)
	return b
}

// encode is the JSON of v, a value as the engine returns one, indented
// for print=pretty.
func encode(v any, print string) []byte {
	var b []byte
	if print == "pretty" {
		b, _ = json.MarshalIndent(v, "", "  ")
	} else {
		b, _ = database.MarshalValue(v)
	}
	return b
}

func (h *Handler) restGet(w http.ResponseWriter, r *http.Request, qv url.Values, who identity.Identity, ns, path, print string) {
	q, hasQuery, err := database.ParseRESTQuery(qv)
	if err != nil {
		writeErr(w, err)
		return
	}
	shallow := qv.Get("shallow") == "true"
	if shallow && hasQuery {
		api.Message(w, http.StatusBadRequest, "Mixing 'shallow' and querying parameters is not supported")
		return
	}
	var qp *database.Query
	if hasQuery {
		qp = &q
	}
	etag, inm := wantsETag(r), r.Header.Get(ifNoneMatch)
	// The answer, newline included, is encoded into buf under the read
	// lock and written from it.
	buf := replyBuf()
	defer releaseReplyBuf(buf)
	res, err := h.db.GetWith(who, ns, path, qp, database.ReadOptions{
		StrictIndex: true, Shallow: shallow, ETag: etag || inm != "",
		Encode: func(v any) []byte {
			switch {
			case print == "silent":
				return nil
			case shallow:
				*buf = append(append(*buf, encode(v, "")...), '\n')
			default:
				*buf = appendRender(*buf, v, qv, print)
			}
			return *buf
		}})
	if err != nil {
		writeErr(w, err)
		return
	}
	if etag {
		w.Header().Set("ETag", res.ETag())
	}
	if inm != "" && inm == res.ETag() {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if print == "silent" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	restReply(w, http.StatusOK, res.Encoded)
}

func (h *Handler) restWrite(w http.ResponseWriter, r *http.Request, qv url.Values, method string, who identity.Identity, ns, path, print string) {
	// Decided before the body is read: rules that deny every caller
	// here cost nothing to answer, however large the body.
	if !h.db.MayWrite(who, ns, path) {
		api.Message(w, http.StatusUnauthorized, "Permission denied")
		return
	}
	v, held, ok := h.readWriteBody(w, r, method == http.MethodPatch)
	if !ok {
		return
	}
	defer h.inflight.Give(held)
	switch method {
	case http.MethodPut:
		stored, err := h.db.Set(who, ns, path, v, database.WriteOptions{IfMatch: r.Header.Get(ifMatch)})
		if err != nil {
			writeWriteErr(w, err, qv, print)
			return
		}
		if wantsETag(r) {
			w.Header().Set("ETag", database.ETag(stored))
		}
		if print == "silent" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		replyRender(w, http.StatusOK, stored, qv, print)
	case http.MethodPatch:
		m, isObj := v.(map[string]any)
		if !isObj {
			api.Message(w, http.StatusBadRequest, "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
			return
		}
		for k := range m {
			// An empty segment ("a//b") names no location: production
			// refuses the update as it refuses invalid key names, with
			// its answer to an update that is not a JSON object (quoted
			// in public clients, e.g. RomainVialard/FirebaseApp's
			// NORMALIZED_ERRORS.INVALID_DATA).
			if strings.Contains(k, "//") {
				api.Message(w, http.StatusBadRequest, "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
				return
			}
		}
		if err := h.db.Update(who, ns, path, m, "update"); err != nil {
			writeErr(w, err)
			return
		}
		if print == "silent" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// The response echoes the update as sent.
		if print == "pretty" {
			api.Body(w, http.StatusOK, encode(m, print))
			return
		}
		buf := replyBuf()
		b, err := database.AppendValue(*buf, m)
		if err != nil {
			b = append((*buf)[:0], encode(m, print)...)
		}
		*buf = append(b, '\n')
		restReply(w, http.StatusOK, *buf)
		releaseReplyBuf(buf)
	case http.MethodPost:
		id, err := h.db.Push(who, ns, path, v)
		if err != nil {
			writeErr(w, err)
			return
		}
		if print == "silent" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		b, _ := json.Marshal(map[string]string{"name": id})
		api.Body(w, http.StatusOK, b)
	}
}

// writeWriteErr answers a put's or delete's error: a lost
// compare-and-set (If-Match) with the current value and its ETag, any
// other as writeErr does. Apart from the handlers: the target errors.As
// fills escapes, and declared in them it took an allocation per write,
// failed or not.
func writeWriteErr(w http.ResponseWriter, err error, qv url.Values, print string) {
	var stale *database.Stale
	if errors.As(err, &stale) {
		w.Header().Set("ETag", stale.ETag)
		api.Body(w, http.StatusPreconditionFailed, render(stale.Current, qv, print))
		return
	}
	writeErr(w, err)
}

func (h *Handler) restDelete(w http.ResponseWriter, r *http.Request, qv url.Values, who identity.Identity, ns, path, print string) {
	_, err := h.db.Set(who, ns, path, nil, database.WriteOptions{IfMatch: r.Header.Get(ifMatch), Method: "remove"})
	if err != nil {
		writeWriteErr(w, err, qv, print)
		return
	}
	if print == "silent" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	api.Body(w, http.StatusOK, []byte("null"))
}

// serveRules is GET/PUT /.settings/rules.json?ns=: the namespace's rules
// source; writing needs admin.
func (h *Handler) serveRules(w http.ResponseWriter, r *http.Request) {
	who, err := caller(r, r.URL.Query())
	if err != nil {
		api.Message(w, http.StatusUnauthorized, err.Error())
		return
	}
	ns := h.namespace(r)
	switch r.Method {
	case http.MethodGet:
		src := h.db.Rules(ns)
		if src == "" {
			src = "{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}"
		}
		api.Body(w, http.StatusOK, []byte(src))
	case http.MethodPut:
		if !who.IsAdmin() {
			api.Message(w, http.StatusUnauthorized, "Unauthorized request: setting rules needs admin credentials (Authorization: Bearer owner)")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
		if err != nil {
			api.Message(w, http.StatusBadRequest, "could not read the request body")
			return
		}
		if err := h.db.SetRules(ns, string(body)); err != nil {
			writeErr(w, err)
			return
		}
		api.Body(w, http.StatusOK, []byte(`{"status":"ok"}`))
	default:
		api.Message(w, http.StatusMethodNotAllowed, "use GET or PUT")
	}
}

// keepAlive is how often an idle event stream says it is alive.
var keepAlive = 30 * time.Second

// serveStream is REST streaming (Accept: text/event-stream): put with the
// location's data, then put and patch events for what changes, cancel when
// the rules revoke the read.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request, who identity.Identity, ns, path string) {
	fl, ok := w.(http.Flusher)
	if !ok {
		api.Message(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	q, hasQuery, err := database.ParseRESTQuery(r.URL.Query())
	if err != nil {
		writeErr(w, err)
		return
	}
	conn := h.db.Connect(ns, who)
	defer conn.Close()
	if _, err := conn.Listen(path, q, 0, ""); err != nil {
		writeErr(w, err)
		return
	}
	_ = hasQuery
	base, _ := database.ParsePath(path)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	ctx := r.Context()
	for {
		tctx, cancel := context.WithTimeout(ctx, keepAlive)
		items, err := conn.Next(tctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprint(w, "event: keep-alive\ndata: null\n\n")
			fl.Flush()
			continue
		}
		if err != nil {
			return
		}
		for _, it := range items {
			p, ok := it.(database.Push)
			if !ok {
				continue
			}
			if p.AuthRevoked != "" {
				// The stream's credential stopped being valid (its token
				// expired): production's auth_revoked, then the end.
				fmt.Fprint(w, "event: auth_revoked\ndata: \"credential is no longer valid\"\n\n")
				fl.Flush()
				return
			}
			if p.Revoked {
				fmt.Fprint(w, "event: cancel\ndata: null\n\n")
				fl.Flush()
				return
			}
			keys, _ := database.ParsePath(p.Path)
			rel := "/" + strings.Join(keys[min(len(base), len(keys)):], "/")
			kind := "put"
			data := database.Plain(p.Data)
			if p.Merge {
				kind = "patch"
				m, _ := p.Data.(map[string]any)
				pm := make(map[string]any, len(m))
				for k, v := range m {
					pm[k] = database.Plain(v)
				}
				data = pm
			}
			b, _ := json.Marshal(map[string]any{"path": rel, "data": data})
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b)
		}
		fl.Flush()
	}
}
