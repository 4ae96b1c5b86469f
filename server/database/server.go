// Package databaseserver is the Realtime Database wire: one http.Handler serving
// the REST API (/<path>.json with queries, ETags, streaming), the SDKs'
// websocket protocol v5 (/.ws?v=5&ns=), its long-polling fallback (/.lp)
// and the emulator's extras (/.settings/rules.json; DELETE /.json as owner
// clears a namespace). It only decodes requests into calls on a
// database.Database or database.Conn and encodes what comes back.
package databaseserver

import (
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/memlimit"
	"github.com/pyric/pyric/server/httpjson"
)

// Options configure a Handler.
type Options struct {
	// Namespace is the default namespace when a request names none;
	// empty means <project>-default-rtdb.
	Namespace string
	// MaxInFlight bounds the body bytes REST writes hold at once (0:
	// DefaultMaxInFlight).
	MaxInFlight int64
}

// Handler serves one database engine.
type Handler struct {
	db       *database.Database
	opts     Options
	lp       lpSessions
	inflight memlimit.Budget

	closeOnce sync.Once
	done      chan struct{} // closed by Close

	wsMu     sync.Mutex
	wsClosed bool          // Close has begun: no new websocket session
	wsLive   int           // websocket sessions still tearing down
	wsIdle   chan struct{} // closed when wsLive drops to 0 after Close
}

// NewHandler returns the handler for db.
func NewHandler(db *database.Database, opts Options) *Handler {
	if opts.Namespace == "" {
		opts.Namespace = database.DefaultNamespace(db.Project())
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	return &Handler{db: db, opts: opts, inflight: memlimit.Budget{Max: opts.MaxInFlight}, done: make(chan struct{}), wsIdle: make(chan struct{})}
}

// Close ends every websocket and long-poll session (their onDisconnect
// operations run), for a server shutting down: http.Server.Shutdown does
// not wait for hijacked connections. Requests after Close are refused.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		close(h.done)
		h.wsMu.Lock()
		h.wsClosed = true
		if h.wsLive == 0 {
			close(h.wsIdle)
		}
		h.wsMu.Unlock()
	})
	// Websocket sessions end on their own goroutines once done is closed;
	// wait (a bounded time) until their onDisconnect operations have run.
	select {
	case <-h.wsIdle:
	case <-time.After(5 * time.Second):
	}
	h.lp.mu.Lock()
	var ss []*lpSession
	for _, s := range h.lp.m {
		ss = append(ss, s)
	}
	h.lp.mu.Unlock()
	for _, s := range ss {
		s.close()
	}
}

// ServeHTTP routes websocket, rules and REST requests.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			log.Printf("database: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
			api.Message(w, http.StatusInternalServerError, "internal error")
		}
	}()
	select {
	case <-h.done:
		api.Message(w, http.StatusServiceUnavailable, "the database is shutting down")
		return
	default:
	}
	if r.Method == http.MethodOptions { // CORS is the port's (server.Guard)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// The query is parsed once here (each r.URL.Query() parses it again,
	// maps and strings: a REST request asked it seven times).
	qv, ns := h.query(r)
	if !validNamespace(ns) {
		api.Message(w, http.StatusBadRequest, "invalid namespace "+strconv.Quote(ns)+": use 1 to 128 letters, digits, '-' or '_'")
		return
	}
	switch {
	case r.URL.Path == "/.ws":
		h.serveWS(w, r)
	case r.URL.Path == "/.lp":
		h.serveLP(w, r)
	case r.URL.Path == "/.settings/rules.json" || r.URL.Path == "/.settings/rules":
		h.serveRules(w, r)
	case r.URL.Path == "/.inspect/coverage":
		b, _ := json.Marshal(h.db.Coverage(ns))
		api.Body(w, http.StatusOK, b)
	case strings.HasSuffix(r.URL.Path, ".json"):
		h.serveREST(w, r, qv, ns)
	default:
		api.Message(w, http.StatusNotFound, "Not Found: use /<path>.json for REST or /.ws for the websocket protocol")
	}
}

// query is the request's parsed query and its namespace. A query that is
// only a namespace ("ns=<name>", as the Admin SDKs' REST clients send
// every request) is not parsed: its values are nil, which answer every
// lookup as an absent parameter, as the parsed query would for every
// parameter but ns — three allocations and the parse saved per request.
func (h *Handler) query(r *http.Request) (url.Values, string) {
	if ns, ok := onlyNamespace(r.URL.RawQuery); ok {
		return nil, ns
	}
	qv := r.URL.Query()
	return qv, h.namespaceOf(r, qv)
}

// onlyNamespace is the name of a raw query that is exactly "ns=<name>"
// with a valid namespace name, whose characters (letters, digits, '-',
// '_') are their own encoding: url.ParseQuery would read the same name.
func onlyNamespace(raw string) (string, bool) {
	name, ok := strings.CutPrefix(raw, "ns=")
	if !ok || !validNamespace(name) {
		return "", false
	}
	return name, true
}

// namespace is the request's namespace: ?ns=, else the first label of a
// <ns>.<host> Host header, else the default.
func (h *Handler) namespace(r *http.Request) string { return h.namespaceOf(r, r.URL.Query()) }

// namespaceOf is namespace with the request's query qv already parsed.
func (h *Handler) namespaceOf(r *http.Request, qv url.Values) string {
	if ns := qv.Get("ns"); ns != "" {
		return ns
	}
	host := r.Host
	if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if i := strings.IndexByte(host, '.'); i > 0 && !isIP(host) {
		if first := host[:i]; first != "www" {
			return first
		}
	}
	return h.opts.Namespace
}

func validNamespace(ns string) bool {
	if ns == "" || len(ns) > 128 {
		return false
	}
	for _, c := range ns {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func isIP(host string) bool {
	for _, c := range host {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// caller derives the identity of a REST request: Authorization (Bearer
// owner is admin, a JWT is its claims) or ?auth=, then admin's
// auth_variable_override; qv is the request's parsed query.
func caller(r *http.Request, qv url.Values) (identity.Identity, error) {
	who := identity.Anonymous()
	var err error
	if a := r.Header.Get("Authorization"); a != "" {
		who, err = identity.FromAuthorization(a)
	} else if tok := qv.Get("auth"); tok != "" {
		who, err = credential(tok)
	} else if tok := qv.Get("access_token"); tok != "" {
		who, err = credential(tok)
	}
	if err != nil {
		return who, errors.New("Could not parse auth token.")
	}
	inv := r.Header.Get(invocationHeader)
	if ov, ok := qv["auth_variable_override"]; ok {
		if !who.IsAdmin() {
			return who, errors.New("auth_variable_override can only be used with admin credentials")
		}
		who, err = override(ov[0])
		return who.ByInvocation(inv), err
	}
	return who.ByInvocation(inv), nil
}

// invocationHeader is identity.InvocationHeader in http.Header's
// canonical form, built once instead of by every request's Header.Get.
var invocationHeader = textproto.CanonicalMIMEHeaderKey(identity.InvocationHeader)

// credential is the identity of a token sent in a request parameter or
// the websocket's auth action.
func credential(tok string) (identity.Identity, error) {
	return identity.FromAuthorization("Bearer " + tok)
}

// override turns auth_variable_override into an identity: null is
// signed out, an object is a user whose uid is its "uid" and whose token
// is the object (its "token" member when it has one).
func override(s string) (identity.Identity, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return identity.Identity{}, errors.New("auth_variable_override must be a JSON object or null")
	}
	return overrideValue(v)
}

func overrideValue(v any) (identity.Identity, error) {
	if v == nil {
		return identity.Anonymous(), nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return identity.Identity{}, errors.New("auth_variable_override must be a JSON object or null")
	}
	uid, _ := m["uid"].(string)
	tok := m
	if t, ok := m["token"].(map[string]any); ok {
		tok = t
	}
	return identity.NewUser(uid, tok), nil
}

// api is how the RTDB REST API writes JSON: errors as {"error": "..."}.
var api = httpjson.Style{Charset: "utf-8", Newline: true, Header: map[string]string{"Cache-Control": "no-cache"}}

// statusOf maps an engine error to the REST status and message: the REST
// API's own table over the error's code (the API is older than Google's
// canonical mapping: a denial is 401, a value too large 413).
func statusOf(err error) (int, string) {
	switch errcode.Of(err) {
	case errcode.PermissionDenied:
		var den *database.Denied
		if errors.As(err, &den) {
			return http.StatusUnauthorized, den.Message()
		}
	case errcode.InvalidArgument, errcode.FailedPrecondition:
		var e *database.Error
		if errors.As(err, &e) {
			return http.StatusBadRequest, e.Msg
		}
		return http.StatusBadRequest, err.Error()
	case errcode.ResourceExhausted:
		return http.StatusRequestEntityTooLarge, err.Error()
	}
	return http.StatusInternalServerError, "internal error: " + err.Error()
}

func writeErr(w http.ResponseWriter, err error) {
	status, msg := statusOf(err)
	api.Message(w, status, msg)
}
