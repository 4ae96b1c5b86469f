package messagingserver

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/server/httpjson"
)

// Options configure the handler.
type Options struct {
	// MaxBodyBytes bounds request bodies; 0 means 1 MiB for a send and
	// 16 MiB for a batch.
	MaxBodyBytes int64
}

// Handler serves the messaging endpoints.
type Handler struct {
	eng  *messaging.Engine
	opts Options

	drainOnce sync.Once
	drained   chan struct{} // closed by Drain: delivery streams end
}

// MaxBatchParts is the most messages one legacy batch request may carry,
// as the admin SDKs enforce.
const MaxBatchParts = 500

const (
	defaultSendBytes  = 1 << 20
	defaultBatchBytes = 16 << 20
)

// NewHandler returns the handler for eng.
func NewHandler(eng *messaging.Engine, opts Options) *Handler {
	return &Handler{eng: eng, opts: opts, drained: make(chan struct{})}
}

// Drain ends every open delivery stream (with an "end" event) and makes
// new ones answer 503, so a server shutdown is not held by streams that
// never go idle. Call it before shutting the port down.
func (h *Handler) Drain() {
	h.drainOnce.Do(func() { close(h.drained) })
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions { // CORS is the port's (server.Guard)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	path := r.URL.Path
	switch {
	case path == "/iid/v1:batchAdd" || path == "/iid/v1:batchRemove":
		if !allow(w, r, http.MethodPost) {
			return
		}
		h.topics(w, r, strings.HasSuffix(path, "batchAdd"))
	case path == "/batch":
		if !allow(w, r, http.MethodPost) {
			return
		}
		h.batch(w, r)
	case strings.HasPrefix(path, "/v1/projects/"):
		rest := strings.TrimPrefix(path, "/v1/projects/")
		project, tail, ok := strings.Cut(rest, "/")
		if !ok || project == "" || tail != "messages:send" {
			notFound(w, path)
			return
		}
		if !allow(w, r, http.MethodPost) {
			return
		}
		h.send(w, r, project)
	case path == "/emulator/v1/messaging.js":
		if !allow(w, r, http.MethodGet) {
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(shimJS)
	case path == "/emulator/v1/firebase-admin.cjs":
		if !allow(w, r, http.MethodGet) {
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(adminJS)
	case strings.HasPrefix(path, "/emulator/v1/projects/"):
		h.emulator(w, r, strings.TrimPrefix(path, "/emulator/v1/projects/"))
	default:
		notFound(w, path)
	}
}

// allow reports whether r uses method, answering 405 otherwise.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	methodNotAllowed(w, r, method)
	return false
}

// methodNotAllowed answers 405 naming the allowed methods ("GET, DELETE").
func methodNotAllowed(w http.ResponseWriter, r *http.Request, allowed string) {
	w.Header().Set("Allow", allowed)
	writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: fmt.Sprintf("Method %s is not allowed on %s; use %s", r.Method, r.URL.Path, allowed)}, http.StatusMethodNotAllowed)
}

func notFound(w http.ResponseWriter, path string) {
	writeError(w, &messaging.Error{Kind: messaging.ErrNotFound, Msg: fmt.Sprintf("No messaging endpoint at %s", path)}, 0)
}

// caller derives the identity: the FCM send plane authorizes with Google
// OAuth credentials, which a local backend cannot check, so any bearer
// that is not a Firebase ID token (an OAuth access token such as the
// admin SDKs send) is the project's service account, i.e. admin.
func caller(r *http.Request) identity.Identity {
	id, err := identity.FromAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		return identity.AdminIdentity()
	}
	return id
}

func (h *Handler) limit(batch bool) int64 {
	if h.opts.MaxBodyBytes > 0 {
		return h.opts.MaxBodyBytes
	}
	if batch {
		return defaultBatchBytes
	}
	return defaultSendBytes
}

// readBody reads at most n bytes, answering 413 beyond.
func readBody(w http.ResponseWriter, r *http.Request, n int64) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, n))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", n)}, http.StatusRequestEntityTooLarge)
		} else {
			writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: "Could not read the request body: " + err.Error()}, 0)
		}
		return nil, false
	}
	return b, true
}

func (h *Handler) send(w http.ResponseWriter, r *http.Request, project string) {
	body, ok := readBody(w, r, h.limit(false))
	if !ok {
		return
	}
	status, out := h.sendOne(caller(r), project, body)
	api.JSON(w, status, out)
}

// sendOne runs one messages:send and returns the status and JSON body.
func (h *Handler) sendOne(id identity.Identity, project string, body []byte) (int, any) {
	req, err := messaging.DecodeSendRequest(body)
	if err == nil {
		var name string
		name, err = h.eng.Send(id, project, req)
		if err == nil {
			return http.StatusOK, map[string]string{"name": name}
		}
	}
	return envelope(err)
}

// api is how the FCM v1 API and the instance-id service write JSON.
var api = httpjson.Style{Charset: "UTF-8", Indent: true, Newline: true}

// envelope maps an engine error to production's envelope: the FcmError
// detail (when the engine names an FCM code) and the BadRequest detail.
func envelope(err error) (int, httpjson.Envelope) {
	var me *messaging.Error
	if !errors.As(err, &me) {
		return http.StatusInternalServerError, httpjson.Envelope{Error: httpjson.Canonical(errcode.Internal, err.Error())}
	}
	st := httpjson.Status{Code: me.HTTP(), Message: me.Msg, Status: me.Status()}
	var details []map[string]any
	if me.FcmCode != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": me.FcmCode})
	}
	if me.BadRequest {
		d := map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest"}
		if len(me.Violations) > 0 {
			d["fieldViolations"] = me.Violations
		}
		details = append(details, d)
	}
	if me.Debug != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": me.Debug})
	}
	if details != nil {
		st.Details = details
	}
	return st.Code, httpjson.Envelope{Error: st}
}

// writeError answers err's envelope; a status other than 0 replaces the
// error's own (the HTTP layer's 405, 413 and 503).
func writeError(w http.ResponseWriter, err error, status int) {
	code, env := envelope(err)
	if status != 0 {
		code = status
		env.Error.Code = status
	}
	api.JSON(w, code, env)
}

// iidRequest is the instance-id batch body.
type iidRequest struct {
	To     string   `json:"to"`
	Tokens []string `json:"registration_tokens"`
}

// topics serves batchAdd / batchRemove. The instance-id service answers
// request-level errors as {"error": "<reason>"} and per-token outcomes as
// {"results": [{}, {"error": "NOT_FOUND"}, ...]}.
func (h *Handler) topics(w http.ResponseWriter, r *http.Request, add bool) {
	body, ok := readBody(w, r, h.limit(false))
	if !ok {
		return
	}
	var req iidRequest
	if err := json.Unmarshal(body, &req); err != nil {
		api.Message(w, http.StatusBadRequest, "InvalidJsonBody: "+err.Error())
		return
	}
	if req.To == "" {
		api.Message(w, http.StatusBadRequest, "MissingTopic: \"to\" names no topic")
		return
	}
	op := h.eng.Subscribe
	if !add {
		op = h.eng.Unsubscribe
	}
	results, err := op(caller(r), req.To, req.Tokens)
	if err != nil {
		var me *messaging.Error
		msg := err.Error()
		status := http.StatusInternalServerError
		if errors.As(err, &me) {
			status = me.HTTP()
		}
		api.Message(w, status, msg)
		return
	}
	out := make([]map[string]string, len(results))
	for i, res := range results {
		out[i] = map[string]string{}
		if res.Error != "" {
			out[i]["error"] = res.Error
		}
	}
	api.JSON(w, http.StatusOK, map[string]any{"results": out})
}

// batch serves the legacy multipart batch: each part an application/http
// POST to messages:send, each answered by an HTTP response part in order.
func (h *Handler) batch(w http.ResponseWriter, r *http.Request) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: "A batch request must be multipart/mixed with a boundary"}, 0)
		return
	}
	body, ok := readBody(w, r, h.limit(true))
	if !ok {
		return
	}
	id := caller(r)
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	type answer struct {
		status int
		body   any
	}
	var answers []answer
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: "Malformed multipart batch: " + err.Error()}, 0)
			return
		}
		if len(answers) == MaxBatchParts {
			writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: fmt.Sprintf("A batch request carries at most %d messages", MaxBatchParts)}, 0)
			return
		}
		inner, err := http.ReadRequest(bufio.NewReader(part))
		if err != nil {
			writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: fmt.Sprintf("Batch part %d is not an HTTP request: %v", len(answers)+1, err)}, 0)
			return
		}
		innerBody, err := io.ReadAll(inner.Body)
		if err != nil {
			writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: fmt.Sprintf("Batch part %d: %v", len(answers)+1, err)}, 0)
			return
		}
		p := inner.URL.Path
		rest, ok := strings.CutPrefix(p, "/v1/projects/")
		project, tail, _ := strings.Cut(rest, "/")
		if !ok || project == "" || tail != "messages:send" || inner.Method != http.MethodPost {
			st, env := envelope(&messaging.Error{Kind: messaging.ErrNotFound, Msg: fmt.Sprintf("No messaging endpoint at %s %s", inner.Method, p)})
			answers = append(answers, answer{st, env})
			continue
		}
		st, out := h.sendOne(id, project, innerBody)
		answers = append(answers, answer{st, out})
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i, a := range answers {
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Type", "application/http")
		hdr.Set("Content-ID", fmt.Sprintf("response-%d", i+1))
		pw, _ := mw.CreatePart(hdr)
		b, _ := json.Marshal(a.body)
		fmt.Fprintf(pw, "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: %d\r\n\r\n%s", a.status, http.StatusText(a.status), len(b), b)
	}
	mw.Close()
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// shimJS is the browser shim served at /emulator/v1/messaging.js:
// getMessaging / getToken / onMessage / deleteToken over the emulator
// endpoints and the delivery stream.
//
//go:embed shim.js
var shimJS []byte

// adminJS is the Node helper served at /emulator/v1/firebase-admin.cjs:
// the firebase-admin AppOptions (httpAgent, credential) that send its
// messaging calls to this port.
//
//go:embed firebase-admin.cjs
var adminJS []byte

// heartbeat keeps idle delivery streams open through proxies.
const heartbeat = 15 * time.Second

// stream serves a token's deliveries as server-sent events: one "message"
// event per delivery (the Delivery JSON), an "end" event when the token is
// deleted or the state reset.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, project, token string) {
	select {
	case <-h.drained:
		writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: "The messaging server is shutting down"}, http.StatusServiceUnavailable)
		return
	default:
	}
	watch, err := h.eng.Watch(project, token)
	if err != nil {
		writeError(w, err, 0)
		return
	}
	defer watch.Close()
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, ": pyric messaging stream\n\n")
	if flusher != nil {
		flusher.Flush()
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.drained:
			io.WriteString(w, "event: end\ndata: {}\n\n")
			if flusher != nil {
				flusher.Flush()
			}
			return
		case <-tick.C:
			io.WriteString(w, ": keep-alive\n\n")
		case d, ok := <-watch.C:
			if !ok {
				io.WriteString(w, "event: end\ndata: {}\n\n")
				if flusher != nil {
					flusher.Flush()
				}
				return
			}
			b, _ := json.Marshal(d)
			fmt.Fprintf(w, "event: message\nid: %s\ndata: %s\n\n", d.Name, b)
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// mintRequest is the body of POST /emulator/v1/projects/{p}/tokens.
type mintRequest struct {
	Platform string `json:"platform"`
	Instance string `json:"instance"`
	Token    string `json:"token"`
}

// emulator serves /emulator/v1/projects/{p}/...:
//
//	GET    messages                  every accepted message, oldest first
//	DELETE messages                  clear the inbox
//	GET    tokens                    the registry
//	GET    topics                    each topic with its live subscribers
//	POST   tokens                    mint (or register) a token
//	GET    tokens/{token}            one token
//	DELETE tokens/{token}            deleteToken: later sends say UNREGISTERED
//	GET    tokens/{token}/messages   what that token received
//	GET    tokens/{token}/stream     its deliveries as server-sent events
func (h *Handler) emulator(w http.ResponseWriter, r *http.Request, rest string) {
	project, tail, _ := strings.Cut(rest, "/")
	if project == "" {
		notFound(w, r.URL.Path)
		return
	}
	id := caller(r)
	parts := strings.Split(tail, "/")
	switch {
	case tail == "messages":
		switch r.Method {
		case http.MethodGet:
			msgs := h.eng.Messages(project)
			if msgs == nil {
				msgs = []*messaging.Sent{}
			}
			api.JSON(w, http.StatusOK, map[string]any{"messages": msgs})
		case http.MethodDelete:
			if err := h.eng.ClearMessages(id, project); err != nil {
				writeError(w, err, 0)
				return
			}
			api.JSON(w, http.StatusOK, map[string]any{})
		default:
			methodNotAllowed(w, r, "GET, DELETE")
		}
	case tail == "topics":
		if !allow(w, r, http.MethodGet) {
			return
		}
		api.JSON(w, http.StatusOK, map[string]any{"topics": h.eng.Topics(project)})
	case tail == "tokens":
		switch r.Method {
		case http.MethodGet:
			toks := h.eng.Tokens(project)
			if toks == nil {
				toks = []*messaging.TokenInfo{}
			}
			api.JSON(w, http.StatusOK, map[string]any{"tokens": toks})
		case http.MethodPost:
			body, ok := readBody(w, r, h.limit(false))
			if !ok {
				return
			}
			var req mintRequest
			if len(bytes.TrimSpace(body)) > 0 {
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&req); err != nil {
					writeError(w, &messaging.Error{Kind: messaging.ErrInvalidArgument, Msg: "Invalid mint request: " + err.Error() + ` (expected {"platform": "web"|"android"|"ios", "instance": "...", "token": "..."})`}, 0)
					return
				}
			}
			t, err := h.eng.MintToken(id, project, messaging.MintRequest{Platform: messaging.Platform(req.Platform), Instance: req.Instance, Token: req.Token})
			if err != nil {
				writeError(w, err, 0)
				return
			}
			api.JSON(w, http.StatusOK, t)
		default:
			methodNotAllowed(w, r, "GET, POST")
		}
	case len(parts) == 2 && parts[0] == "tokens" && parts[1] != "":
		switch r.Method {
		case http.MethodGet:
			t, err := h.eng.Token(project, parts[1])
			if err != nil {
				writeError(w, err, 0)
				return
			}
			api.JSON(w, http.StatusOK, t)
		case http.MethodDelete:
			if err := h.eng.DeleteToken(id, project, parts[1]); err != nil {
				writeError(w, err, 0)
				return
			}
			api.JSON(w, http.StatusOK, map[string]any{})
		default:
			methodNotAllowed(w, r, "GET, DELETE")
		}
	case len(parts) == 3 && parts[0] == "tokens" && parts[1] != "" && parts[2] == "stream":
		if !allow(w, r, http.MethodGet) {
			return
		}
		h.stream(w, r, project, parts[1])
	case len(parts) == 3 && parts[0] == "tokens" && parts[1] != "" && parts[2] == "messages":
		if !allow(w, r, http.MethodGet) {
			return
		}
		in, err := h.eng.Inbox(project, parts[1])
		if err != nil {
			writeError(w, err, 0)
			return
		}
		api.JSON(w, http.StatusOK, map[string]any{"messages": in})
	default:
		notFound(w, r.URL.Path)
	}
}
