// Package studio is pyric's developer UI and its JSON/event API, as one
// http.Handler: the event API (/api/events, /api/events/stream), the JSON
// endpoints the pages use (Firestore browse/edit in the admin or an app
// lens, Auth users, the Realtime Database tree, Storage objects, Messaging
// tokens and inboxes, AI calls and scripts, Cloud Functions (list,
// invocations, invoke), Pub/Sub (topics, backlogs, publish, peek), rules
// with diagnostics and coverage, services) and the embedded single-page
// UI (studio/dist, built from studio/web).
//
// The UI's navigation is a route table built here (/api/services
// "routes"): Home, the pages of every running service implementing
// service.Studio, Traffic and Rules. A new service gets its page by
// implementing that interface — with the generic state view until the UI
// has a view of its own — and nothing here changes. Explanations of rules
// decisions are rendered by package explain and sent as lines; the UI only
// shows them.
//
// The Studio answers only loopback hosts and its own origin, so a web page
// the developer visits cannot drive it. Every request it makes to an
// engine runs as identity.Studio, so its own traffic is marked and hidden
// from the Traffic view by default.
//
// It does not import package backend: the caller gives it the sandbox and
// a function listing the running endpoints; the services with rules are
// those of the sandbox implementing service.LiveRules.
package studio

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/server/httpjson"
)

// Endpoint is one running service endpoint, as the Home page shows it.
type Endpoint struct {
	Service string   `json:"service"`
	Addr    string   `json:"addr"`
	What    string   `json:"what,omitempty"`
	Env     []EnvVar `json:"env,omitempty"` // the variables that point clients here
}

// EnvVar is one environment variable and its value.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Options configure New.
type Options struct {
	// Sandbox owns the engines and the event bus (required).
	Sandbox *sandbox.Sandbox
	// RulesFiles are the rules files on disk by service ("firestore",
	// "storage", "database"), as `pyric serve` watches them: the Home and
	// Rules pages compile each to show the errors of a file that does not
	// compile.
	RulesFiles map[string]string
	// Endpoints lists the running endpoints (backend.Endpoints adapted).
	Endpoints func() []Endpoint
	// Mount adds handlers under the Studio's port, by path prefix (e.g.
	// "/mcp"); they get the same Host/Origin guard.
	Mount map[string]http.Handler
	// Now is the clock for coverage timestamps; nil means time.Now.
	Now func() time.Time
	// Beside are the Studio pages of services served beside the sandbox
	// (Hosting), by service name: they join the route table after the
	// sandbox's services' pages.
	Beside map[string]service.Studio
	// Policy is the origin and host policy every port applies
	// (server.Policy); nil allows loopback only. The Studio's own API is
	// stricter: a cross-origin page may not call it at all.
	Policy *server.Policy
}

// Studio is the handler.
type Studio struct {
	opts Options
	sb   *sandbox.Sandbox
	mux  *http.ServeMux
	cov  *verdictCounts
}

var studioActor = identity.Actor{Kind: identity.Studio}

// New returns the Studio handler.
func New(opts Options) http.Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Studio{opts: opts, sb: opts.Sandbox, mux: http.NewServeMux()}
	s.cov = newVerdictCounts(s.sb.Events())
	// The Rules page shows coverage: decisions count it from now on.
	for _, lr := range s.liveServices() {
		lr.CollectCoverage()
	}
	s.routes()
	return s
}

func (s *Studio) routes() {
	m := s.mux
	m.HandleFunc("GET /api/events", s.events)
	m.HandleFunc("GET /api/events/stream", s.stream)
	m.HandleFunc("GET /api/events/{id}", s.eventByID)
	m.HandleFunc("POST /api/events/{id}/rerun", s.rerun)
	m.HandleFunc("GET /api/services", s.services)
	m.HandleFunc("GET /api/conformance", s.conformance)
	m.HandleFunc("GET /api/firestore/collections", s.firestoreOnly(s.fsCollections))
	m.HandleFunc("GET /api/firestore/documents", s.firestoreOnly(s.fsDocuments))
	m.HandleFunc("GET /api/firestore/document", s.firestoreOnly(s.fsGet))
	m.HandleFunc("PUT /api/firestore/document", s.firestoreOnly(s.fsPut))
	m.HandleFunc("DELETE /api/firestore/document", s.firestoreOnly(s.fsDelete))
	m.HandleFunc("POST /api/firestore/query", s.firestoreOnly(s.fsQuery))
	m.HandleFunc("GET /api/auth/users", s.authUsers)
	m.HandleFunc("POST /api/auth/users", s.authCreate)
	m.HandleFunc("PATCH /api/auth/users/{uid}", s.authUpdate)
	m.HandleFunc("DELETE /api/auth/users/{uid}", s.authDelete)
	m.HandleFunc("GET /api/auth/oob", s.authOOB)
	m.HandleFunc("GET /api/rules", s.rules)
	m.HandleFunc("POST /api/rules/check", s.rulesCheck)
	m.HandleFunc("GET /api/service/{name}", s.genericService)
	m.HandleFunc("GET /api/database/tree", s.dbTree)
	m.HandleFunc("PUT /api/database/value", s.dbSet)
	m.HandleFunc("DELETE /api/database/value", s.dbDelete)
	m.HandleFunc("GET /api/storage/buckets", s.gcsBuckets)
	m.HandleFunc("GET /api/storage/objects", s.gcsList)
	m.HandleFunc("GET /api/storage/object", s.gcsStat)
	m.HandleFunc("GET /api/storage/media", s.gcsDownload)
	m.HandleFunc("POST /api/storage/object", s.gcsUpload)
	m.HandleFunc("PATCH /api/storage/object", s.gcsPatch)
	m.HandleFunc("DELETE /api/storage/object", s.gcsDelete)
	m.HandleFunc("GET /api/messaging", s.fcmState)
	m.HandleFunc("POST /api/messaging/tokens", s.fcmMint)
	m.HandleFunc("DELETE /api/messaging/tokens/{token}", s.fcmDeleteToken)
	m.HandleFunc("GET /api/messaging/tokens/{token}/inbox", s.fcmInbox)
	m.HandleFunc("POST /api/messaging/topics", s.fcmTopic)
	m.HandleFunc("POST /api/messaging/send", s.fcmSend)
	m.HandleFunc("DELETE /api/messaging/messages", s.fcmClear)
	m.HandleFunc("GET /api/ai", s.aiState)
	m.HandleFunc("PUT /api/ai/script", s.aiScript)
	m.HandleFunc("POST /api/ai/script", s.aiScript)
	m.HandleFunc("DELETE /api/ai/script", s.aiScript)
	m.HandleFunc("DELETE /api/ai", s.aiClear)
	m.HandleFunc("GET /api/functions", s.fnList)
	m.HandleFunc("GET /api/functions/{id}/payload", s.fnPayload)
	m.HandleFunc("POST /api/functions/{id}/invoke", s.fnInvoke)
	m.HandleFunc("GET /api/pubsub", s.psOverview)
	m.HandleFunc("POST /api/pubsub/publish", s.psPublish)
	m.HandleFunc("GET /api/pubsub/messages", s.psMessages)
	m.HandleFunc("GET /", s.ui)
}

// ServeHTTP guards by Host and Origin, then routes.
func (s *Studio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := checkOrigin(s.opts.Policy, r); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	// Mounted handlers (/mcp, admin routes) own their path and everything
	// under it, whatever the method.
	for p, h := range s.opts.Mount {
		p = strings.TrimSuffix(p, "/")
		if r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
			h.ServeHTTP(w, r)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// checkOrigin returns why a request is refused, or "". The Host must pass
// the ports' policy (DNS rebinding defence); an Origin, when sent, must be
// the same host:port (a page on another site, even one the policy allows
// to call the services, cannot drive the Studio).
func checkOrigin(p *server.Policy, r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	host := r.Host
	if !p.AllowsHost(host, local) {
		return "studio: refusing Host " + quote(host) + ": the Studio answers only loopback hosts (localhost, 127.0.0.1, [::1]), its own address and configured hosts"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != host || (u.Scheme != "http" && u.Scheme != "https") {
			return "studio: refusing Origin " + quote(o) + ": only the Studio's own origin may call its API"
		}
	}
	if sf := r.Header.Get("Sec-Fetch-Site"); sf == "cross-site" {
		return "studio: refusing a cross-site request"
	}
	return ""
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// apiError is the JSON error body.
type apiError struct {
	Error   string `json:"error"`
	Code    string `json:"code,omitempty"`
	Details any    `json:"details,omitempty"`
}

// api is how the Studio's API writes JSON: the adapters' one writer
// (httpjson), in the Studio's style: never cached, HTML left unescaped.
var api = httpjson.Style{Charset: "utf-8", Newline: true, RawHTML: true, Header: map[string]string{"Cache-Control": "no-store"}}

// writeJSON answers status with v in the Studio's style.
func writeJSON(w http.ResponseWriter, status int, v any) { api.JSON(w, status, v) }

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// readJSON decodes a bounded request body into v.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			fail(w, http.StatusRequestEntityTooLarge, "request body larger than 4 MiB")
			return false
		}
		fail(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

func (s *Studio) services(w http.ResponseWriter, r *http.Request) {
	var eps []Endpoint
	if s.opts.Endpoints != nil {
		eps = s.opts.Endpoints()
	}
	names := []string{}
	for _, sv := range s.sb.Services() {
		names = append(names, sv.Name())
	}
	bus := s.sb.Events()
	writeJSON(w, http.StatusOK, map[string]any{
		"project":   s.sb.Project(),
		"endpoints": eps,
		"services":  names,
		"events":    map[string]any{"seq": bus.Seq(), "kept": bus.Len()},
		"counts":    s.cov.counts(),
		"rules":     s.rulesStatuses(),
		"routes":    s.routeTable(),
	})
}

// genericService reports a service's presence (database, storage, ...), so
// pages for services built later render from data, not from code.
func (s *Studio) genericService(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	sv := s.sb.Service(name)
	if sv == nil {
		fail(w, http.StatusNotFound, "no service "+quote(name)+" in this sandbox")
		return
	}
	snap, err := sv.Snapshot()
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(snap) > 4<<20 {
		writeJSON(w, http.StatusOK, map[string]any{"service": name, "truncated": true, "bytes": len(snap)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"service": name, "state": json.RawMessage(snap)})
}
