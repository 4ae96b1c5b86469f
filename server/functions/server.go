// Package functionsserver is the Cloud Functions wire adapter: the
// Emulator Suite's functions port, routing
// http://HOST:PORT/{project}/{region}/{name}[/path] to the functions
// engine as production routes a function's URL. The callable protocol,
// CORS and body parsing happen in the function itself (firebase-functions'
// own code, inside the engine's worker); this package only routes and
// answers the emulator's errors for URLs that name no function.
package functionsserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/server/httpjson"
)

// maxEventBody bounds an event body posted to a function's URL, as an
// HTTP function's request is bounded in production.
const maxEventBody = 32 << 20

// Engine is what the adapter needs of the functions engine.
type Engine interface {
	Project() string
	Endpoints() []functions.Endpoint
	ServeFunction(w http.ResponseWriter, r *http.Request, id, path string)
	DeliverEvent(ctx context.Context, id string, payload []byte) error
	// Codebases are the configured codebases, loaded or not.
	Codebases() []functions.Codebase
	// Loaded is closed once every codebase's first load ended: until
	// then a request naming a function not (yet) loaded waits for it.
	Loaded() <-chan struct{}
}

// Handler serves the functions port.
type Handler struct {
	eng Engine
}

// NewHandler returns the adapter over eng.
func NewHandler(eng Engine) *Handler { return &Handler{eng: eng} }

// AnswersCORS marks the port's CORS as the functions' own
// (server.CORSAnswerer): a preflight reaches the function, whose
// firebase-functions answers it (the Emulator Suite's debug features make
// it wrap every HTTPS and callable function in cors), and no header is
// added to a function's answer.
func (h *Handler) AnswersCORS() {}

// Route is where a URL leads: the function (nil when none) and the path
// the function sees.
type Route struct {
	Endpoint *functions.Endpoint
	// Key is the emulator's name for the URL's function: region-name.
	Key string
	// Path is what the function sees as its URL path ("/" at least).
	Path string
	// Project is false when the URL's project is not the engine's.
	Project bool
}

// Resolve routes a URL path as the emulator does:
// /{project}/{region}/{name}[/rest], where name is the function's id
// (group-name for a member of an exported group) and the function is
// deployed to region. ok is false when the path has no such shape.
func Resolve(project string, eps []functions.Endpoint, urlPath string) (Route, bool) {
	parts := strings.SplitN(strings.TrimPrefix(urlPath, "/"), "/", 4)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Route{}, false
	}
	rt := Route{Key: parts[1] + "-" + parts[2], Path: "/", Project: parts[0] == project}
	if len(parts) == 4 {
		rt.Path += parts[3]
	}
	if !rt.Project {
		return rt, true
	}
	for i := range eps {
		if eps[i].ID != parts[2] {
			continue
		}
		for _, reg := range eps[i].Regions {
			if reg == parts[1] {
				rt.Endpoint = &eps[i]
				return rt, true
			}
		}
	}
	return rt, true
}

// ServeHTTP routes one request. The port serves from the start: its own
// routes answer at once, and a request to a function while the
// codebases still load waits for the load (the cold start), then finds
// the function or gets the emulator's 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/backends" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		h.backends(w)
		return
	}
	eps := h.eng.Endpoints()
	if !h.loaded() && h.namesFunction(r, eps) {
		select {
		case <-h.eng.Loaded():
		case <-r.Context().Done():
			return // the client went away: nothing to answer
		}
		eps = h.eng.Endpoints()
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/functions/projects/"); ok && strings.Contains(rest, "/schedules/") {
		h.runSchedule(w, r, rest, eps)
		return
	}
	// The emulator's route for events posted by other emulators:
	// POST /functions/projects/{project}/triggers/{region-name}.
	if rest, ok := strings.CutPrefix(r.URL.Path, "/functions/projects/"); ok && r.Method == http.MethodPost {
		project, trigger, _ := strings.Cut(rest, "/triggers/")
		if project == h.eng.Project() {
			for i := range eps {
				for _, reg := range eps[i].Regions {
					if reg+"-"+eps[i].ID == trigger && !eps[i].IsHTTP() {
						h.deliver(w, r, &eps[i])
						return
					}
				}
			}
			notFound(w, trigger, eps)
			return
		}
	}
	rt, ok := Resolve(h.eng.Project(), eps, r.URL.Path)
	if !ok || !rt.Project {
		// Express's 404 for a route the emulator does not serve
		// (sendStatus: the bare reason phrase, no newline).
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Not Found")
		return
	}
	if rt.Endpoint == nil {
		notFound(w, rt.Key, eps)
		return
	}
	if !rt.Endpoint.IsHTTP() {
		h.deliver(w, r, rt.Endpoint)
		return
	}
	h.eng.ServeFunction(w, r, rt.Endpoint.ID, rt.Path)
}

func (h *Handler) loaded() bool {
	select {
	case <-h.eng.Loaded():
		return true
	default:
		return false
	}
}

// namesFunction reports whether a request is to a function's URL (an
// HTTPS function's, an event function's triggers route, a schedule's
// run) naming none of eps: one that may name a function still loading.
func (h *Handler) namesFunction(r *http.Request, eps []functions.Endpoint) bool {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/functions/projects/"); ok {
		return strings.Contains(rest, "/triggers/") || strings.Contains(rest, "/schedules/")
	}
	rt, ok := Resolve(h.eng.Project(), eps, r.URL.Path)
	return ok && rt.Project && rt.Endpoint == nil
}

// backends answers GET /backends as the emulator does: each codebase's
// directory and the functions loaded from it so far (none while it
// loads), with "loading" true until the first load of every codebase
// ended.
func (h *Handler) backends(w http.ResponseWriter) {
	type backend struct {
		Directory        string               `json:"directory"`
		Codebase         string               `json:"codebase"`
		Env              map[string]string    `json:"env"`
		FunctionTriggers []functions.Endpoint `json:"functionTriggers"`
	}
	eps := h.eng.Endpoints()
	out := struct {
		Backends []backend `json:"backends"`
		Loading  bool      `json:"loading"`
	}{Backends: []backend{}, Loading: !h.loaded()}
	for _, cb := range h.eng.Codebases() {
		b := backend{Directory: cb.Source, Codebase: cb.Name, Env: map[string]string{}, FunctionTriggers: []functions.Endpoint{}}
		for _, ep := range eps {
			if ep.Codebase == cb.Name {
				b.FunctionTriggers = append(b.FunctionTriggers, ep)
			}
		}
		out.Backends = append(out.Backends, b)
	}
	api.JSON(w, http.StatusOK, out)
}

// scheduleRunner is the engine's run-now of a scheduled function.
type scheduleRunner interface {
	RunScheduled(ctx context.Context, id string) (time.Time, error)
}

// runSchedule serves pyric's run-now of a scheduled function (what
// `pyric functions run NAME` posts):
// POST /functions/projects/{project}/schedules/{name}:run, where name is
// the function's id or region-id. It answers once the run finished:
// 200 {"function", "scheduleTime"}, 404 for an unknown function or
// project, 400 for a function that is not scheduled, 500 with the
// failure when the run failed, 405 for another method.
func (h *Handler) runSchedule(w http.ResponseWriter, r *http.Request, rest string, eps []functions.Endpoint) {
	project, name, _ := strings.Cut(rest, "/schedules/")
	name, ok := strings.CutSuffix(name, ":run")
	if !ok || name == "" {
		api.Fail(w, errcode.NotFound, "want POST /functions/projects/{project}/schedules/{name}:run")
		return
	}
	if r.Method != http.MethodPost {
		api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use POST to run a scheduled function"})
		return
	}
	if project != h.eng.Project() && project != "-" { // "-": whichever project is served
		api.Fail(w, errcode.NotFound, fmt.Sprintf("project %q is not served here (functions run in %q)", project, h.eng.Project()))
		return
	}
	run, ok := h.eng.(scheduleRunner)
	if !ok {
		api.Fail(w, errcode.Unimplemented, "this functions engine does not run schedules")
		return
	}
	var ep *functions.Endpoint
	for i := range eps {
		if eps[i].ID == name {
			ep = &eps[i]
		}
		for _, reg := range eps[i].Regions {
			if reg+"-"+eps[i].ID == name {
				ep = &eps[i]
			}
		}
	}
	if ep == nil {
		api.Fail(w, errcode.NotFound, fmt.Sprintf("Function %s does not exist", name))
		return
	}
	if ep.Schedule == nil {
		api.Fail(w, errcode.FailedPrecondition, fmt.Sprintf("Function %s is a %s function, not a scheduled one", ep.ID, ep.Kind()))
		return
	}
	at, err := run.RunScheduled(r.Context(), ep.ID)
	if err != nil {
		api.Fail(w, errcode.Internal, fmt.Sprintf("the run of %s failed: %v", ep.ID, err))
		return
	}
	api.JSON(w, http.StatusOK, map[string]string{"function": ep.ID, "scheduleTime": at.UTC().Format(time.RFC3339Nano)})
}

// api is how the emulator's functions endpoints write JSON.
var api = httpjson.Style{Charset: "utf-8", Newline: true}

// deliver runs an event function with the posted body, as the emulator
// does for a request to an event function's URL.
func (h *Handler) deliver(w http.ResponseWriter, r *http.Request, ep *functions.Endpoint) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
	if err != nil {
		http.Error(w, "PayloadTooLargeError: request entity too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := h.eng.DeliverEvent(r.Context(), ep.ID, body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	io.WriteString(w, `{"status":"acknowledged"}`)
}

// notFound is the emulator's answer for a function it does not have.
func notFound(w http.ResponseWriter, key string, eps []functions.Endpoint) {
	var names []string
	for _, ep := range eps {
		for _, reg := range ep.Regions {
			names = append(names, reg+"-"+ep.ID)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, "Function %s does not exist, valid functions are: %s", key, strings.Join(names, ", "))
}
