// Package authserver is the HTTP adapter of the Auth engine: the Identity
// Toolkit (/identitytoolkit.googleapis.com/v1 and v2), securetoken
// (/securetoken.googleapis.com/v1/token) and Auth-emulator
// (/emulator/v1/..., /emulator/action) endpoints that the Firebase SDKs call
// under connectAuthEmulator / FIREBASE_AUTH_EMULATOR_HOST, and the fake IdP
// pages of the web SDK's popup and redirect sign-in (/emulator/auth/handler,
// /emulator/auth/iframe; widget.go). It decodes, picks the caller and
// project as the emulator does, calls the engine and encodes; no semantics
// live here.
//
// Mount it at the root of the Auth port (the emulator default is 9099):
//
//	eng := auth.New(auth.Options{Events: bus})
//	http.ListenAndServe("127.0.0.1:9099", authserver.New(eng, authserver.Options{DefaultProject: "demo-project"}))
package authserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/identity"

	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/httpjson"
)

// Options configure the handler.
type Options struct {
	// DefaultProject is the project of API-key requests and of admin
	// requests that name no project, as the emulator's --project is.
	// Empty means service.DefaultProject.
	DefaultProject string
	// APIKeys maps API keys to projects, so several projects can be served
	// to clients at once; keys not listed belong to DefaultProject (the
	// emulator accepts any key).
	APIKeys map[string]string
	// BaseURL is the externally visible URL of this server, used in OOB
	// links ("http://127.0.0.1:9099"). Empty means the address the request
	// arrived at (the listener's, never the client's Host header).
	BaseURL string
	// MaxBodyBytes bounds request bodies; 0 means 32 MiB.
	MaxBodyBytes int64
}

// Handler serves the Auth endpoints.
type Handler struct {
	eng  *auth.Engine
	opts Options
	// local is the URL of the local address requests arrive at, kept
	// for the next requests to the same one (every request to a port).
	local atomic.Pointer[localBase]
}

// localBase is one local TCP address and its URL.
type localBase struct {
	ip   net.IP
	port int
	zone string
	url  string
}

// New returns the handler for eng.
func New(eng *auth.Engine, opts Options) *Handler {
	if opts.DefaultProject == "" {
		opts.DefaultProject = service.DefaultProject
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 32 << 20
	}
	return &Handler{eng: eng, opts: opts}
}

// request is one decoded HTTP call on its way to the engine.
type request struct {
	w       http.ResponseWriter
	r       *http.Request
	body    []byte
	admin   bool
	keyUsed bool
	// pathProject says the URL named the project (a body targetProjectId
	// is then ignored).
	pathProject bool
	call        auth.Call
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// Never a bare 500: an engine bug still gets the JSON envelope.
		if v := recover(); v != nil {
			writeError(w, auth.Internal("INTERNAL_ERROR : unexpected failure"))
		}
	}()
	// CORS is the port's (server.Guard).
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, err := readBody(r, h.opts.MaxBodyBytes)
	if err != nil || int64(len(body)) > h.opts.MaxBodyBytes {
		writeError(w, auth.InvalidArgument("Invalid JSON payload received. request body too large or unreadable"))
		return
	}
	if r.Method == http.MethodDelete {
		body = nil // the emulator ignores DELETE bodies
	}
	req := &request{w: w, r: r, body: body}
	req.call.BaseURL = h.opts.BaseURL
	if req.call.BaseURL == "" {
		req.call.BaseURL = h.localURL(r)
	}
	path := r.URL.Path
	switch {
	case path == "/" && r.Method == http.MethodGet:
		api.JSON(w, 200, map[string]any{"authEmulator": map[string]any{"ready": true,
			"docs": "https://firebase.google.com/docs/emulator-suite", "apiSpec": "/emulator/openapi.json"}})
	case strings.HasPrefix(path, "/identitytoolkit.googleapis.com/v1/"):
		h.v1(req, strings.TrimPrefix(path, "/identitytoolkit.googleapis.com/v1/"))
	case strings.HasPrefix(path, "/identitytoolkit.googleapis.com/v2/"):
		h.v2(req, strings.TrimPrefix(path, "/identitytoolkit.googleapis.com/v2/"))
	case path == "/securetoken.googleapis.com/v1/token":
		h.token(req)
	case strings.HasPrefix(path, "/www.googleapis.com/identitytoolkit/v3/relyingparty/"):
		h.legacy(req, strings.TrimPrefix(path, "/www.googleapis.com/identitytoolkit/v3/relyingparty/"))
	case strings.HasPrefix(path, "/emulator/v1/projects/"):
		h.emulator(req, strings.TrimPrefix(path, "/emulator/v1/projects/"))
	case path == "/emulator/action" && r.Method == http.MethodGet:
		h.action(req)
	case path == "/emulator/auth/handler" && r.Method == http.MethodGet:
		h.idpWidget(req)
	case path == "/emulator/auth/iframe" && r.Method == http.MethodGet:
		h.idpIframe(req)
	default:
		writeError(w, auth.NotFound())
	}
}

// readBody reads at most max+1 bytes, in one allocation when the length
// is announced.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, errors.New("body too large")
	}
	if r.ContentLength > 0 {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, max+1))
}

// localURL is http://<the local address the connection arrived at>; the
// Host header is the client's to choose and must not end up in links the
// server hands out.
// The URL of a TCP address is kept (h.local) and reused while requests
// arrive at the same address, rather than written out for each.
func (h *Handler) localURL(r *http.Request) string {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return "http://127.0.0.1:9099"
	}
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	if l := h.local.Load(); l != nil && l.port == t.Port && l.zone == t.Zone && l.ip.Equal(t.IP) {
		return l.url
	}
	u := "http://" + t.String()
	h.local.Store(&localBase{ip: slices.Clone(t.IP), port: t.Port, zone: t.Zone, url: u})
	return u
}

// authenticate applies the emulator's security rules for Identity Toolkit
// operations: a bearer token is checked first ("owner" or a service-account
// "ya29." token is admin; anything else is 401) when oauth is allowed, then
// the API key (?key= or X-Goog-Api-Key); neither is 403.
func (h *Handler) authenticate(req *request, oauth bool) bool {
	if oauth {
		if a := req.r.Header.Get("Authorization"); len(a) >= 7 && strings.EqualFold(a[:7], "bearer ") {
			tok := a[7:]
			if strings.EqualFold(tok, "owner") || strings.HasPrefix(tok, "ya29.") {
				req.admin = true
				// A function's Admin SDK call names its invocation.
				req.call.Caller = identity.AdminIdentity().ByInvocation(req.r.Header.Get(identity.InvocationHeader))
				req.call.Project = h.opts.DefaultProject
				return true
			}
			writeError(req.w, unauthenticated())
			return false
		}
	}
	key := queryValue(req.r.URL.RawQuery, "key")
	if key == "" {
		key = req.r.Header.Get("X-Goog-Api-Key")
	}
	if key == "" {
		writeError(req.w, auth.PermissionDenied("The request is missing a valid API key."))
		return false
	}
	req.keyUsed = true
	req.call.Caller = identity.Anonymous()
	req.call.Project = h.projectOfKey(key)
	return true
}

// projectOfKey is the project an API key belongs to: its APIKeys entry, or
// DefaultProject (the emulator accepts any key).
func (h *Handler) projectOfKey(key string) string {
	if p := h.opts.APIKeys[key]; p != "" {
		return p
	}
	return h.opts.DefaultProject
}

var adminCaller = identity.AdminIdentity()

func unauthenticated() *auth.Error {
	m := "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
	return &auth.Error{HTTP: 401, Status: "UNAUTHENTICATED", Message: m, Details: []auth.ErrorDetail{{Message: "Invalid Credentials",
		Domain: "global", Reason: "authError", Location: "Authorization", LocationType: "header"}}}
}

// targetProject applies a project id from the path or body: only admin
// calls may name one.
func (req *request) targetProject(p string) error {
	if p == "" {
		return nil
	}
	if !req.admin {
		return &auth.Error{HTTP: 400, Message: "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.",
			Reason: "invalid", Domain: "global"}
	}
	req.call.Project = p
	return nil
}

// api is how the Identity Toolkit and the emulator's endpoints write JSON.
var api = httpjson.Style{Charset: "utf-8", Newline: true}

// writeError encodes the Google JSON error envelope with the "errors"
// list the SDKs read.
func writeError(w http.ResponseWriter, err error) {
	ae, ok := err.(*auth.Error)
	if !ok {
		ae = auth.Internal(err.Error())
	}
	api.Error(w, httpjson.Status{Code: ae.HTTP, Errors: ae.ErrorDetails(), Message: ae.Message, Status: ae.Status})
}

func methodNotAllowed(req *request) {
	api.JSON(req.w, 405, map[string]any{"message": "Method " + req.r.Method + " not allowed for " + req.r.URL.RequestURI()})
}

// respond writes an engine result; the answers of the hot calls write
// their own JSON (httpjson.Appender).
func respond[T any](req *request, v T, err error) {
	if err != nil {
		writeError(req.w, err)
		return
	}
	if a, ok := any(v).(httpjson.Appender); ok {
		api.Append(req.w, 200, a)
		return
	}
	api.JSON(req.w, 200, v)
}

// queryValue is url.ParseQuery(rawQuery).Get(name) without building the
// map of every parameter: the first value of name, pairs that do not
// unescape (or hold a semicolon) skipped as ParseQuery skips them. Every
// client call reads its API key this way.
func queryValue(rawQuery, name string) string {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(k)
		if err != nil || k != name {
			continue
		}
		if v, err = url.QueryUnescape(v); err != nil {
			continue
		}
		return v
	}
	return ""
}
