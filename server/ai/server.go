// Package aiserver is the HTTP adapter of the AI Logic engine: the Gemini
// REST paths the Firebase AI Logic SDK (firebase/ai with
// RequestOptions.baseUrl) and the Google Gen AI SDKs (HTTPOptions.BaseURL)
// call — generateContent, streamGenerateContent (server-sent events with
// alt=sse, else a JSON array) and countTokens, in the Google AI and the
// Vertex AI path shapes — and the emulator endpoints that load scripts,
// read the call log and clear a project. It decodes, calls the engine and
// encodes; no semantics live here.
//
// Mount it at the root of the AI port and point clients at it:
//
//	eng, _ := ai.New(env, ai.Options{})
//	http.ListenAndServe("127.0.0.1:9988", aiserver.NewHandler(eng, aiserver.Options{}))
//	// firebase/ai: getGenerativeModel(ai, {model}, {baseUrl: "http://127.0.0.1:9988"})
//	// genai:       genai.ClientConfig{HTTPOptions: genai.HTTPOptions{BaseURL: "http://127.0.0.1:9988"}}
package aiserver

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/server/httpjson"
)

// Options configure the handler.
type Options struct {
	// DefaultProject is the project of paths that name none (the Gen AI
	// SDKs' Gemini API and Vertex express shapes). Empty means the
	// engine's default project.
	DefaultProject string
}

// Handler serves the AI endpoints.
type Handler struct {
	eng  *ai.Engine
	opts Options
}

// NewHandler returns the handler for eng.
func NewHandler(eng *ai.Engine, opts Options) *Handler {
	if opts.DefaultProject == "" {
		opts.DefaultProject = eng.DefaultProject()
	}
	return &Handler{eng: eng, opts: opts}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// Never a bare 500: an engine bug still gets the JSON envelope.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			writeError(w, &ai.Error{Code: 500, Status: "INTERNAL", Message: "Internal error encountered."})
		}
	}()
	// CORS is the port's (server.Guard).
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	path := r.URL.Path
	switch {
	case path == "/" && r.Method == http.MethodGet:
		api.JSON(w, 200, map[string]any{"ai": map[string]any{"ready": true, "project": h.opts.DefaultProject}})
	case strings.HasPrefix(path, "/emulator/v1/projects/"):
		h.emulator(w, r, strings.TrimPrefix(path, "/emulator/v1/projects/"))
	default:
		rt, ok := ParsePath(path)
		if !ok {
			writeError(w, ai.NotFound("Requested entity was not found."))
			return
		}
		h.model(w, r, rt)
	}
}

// Route is a model call's path, decoded.
type Route struct {
	Version  string // v1beta, v1beta1, v1, v1alpha
	Project  string // empty when the path names none
	Location string
	Model    string
	Task     string // generateContent, streamGenerateContent, countTokens
	Backend  string
	Service  string // the Google API the path shape belongs to
}

var versions = map[string]bool{"v1": true, "v1beta": true, "v1alpha": true, "v1beta1": true}

// ParsePath decodes the model-call paths of both SDK families:
//
//	/v1beta/projects/{p}/models/{m}:{task}                                  firebase/ai, Google AI
//	/v1beta/projects/{p}/locations/{l}/publishers/google/models/{m}:{task}  firebase/ai, Vertex AI / Agent Platform
//	/{v}/models/{m}:{task}                                                  genai, Gemini API
//	/{v}/projects/{p}/locations/{l}/publishers/google/models/{m}:{task}     genai, Vertex AI
//	/{v}/publishers/google/models/{m}:{task}                                genai, Vertex AI express mode
func ParsePath(path string) (Route, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) < 3 || !versions[segs[0]] {
		return Route{}, false
	}
	rt := Route{Version: segs[0]}
	rest := segs[1:]
	last := rest[len(rest)-1]
	i := strings.LastIndexByte(last, ':')
	if i <= 0 || i == len(last)-1 {
		return Route{}, false
	}
	rt.Model, rt.Task = last[:i], last[i+1:]
	rest = rest[:len(rest)-1]
	if len(rest) >= 2 && rest[0] == "projects" && rest[1] != "" {
		rt.Project = rest[1]
		rest = rest[2:]
		if len(rest) >= 2 && rest[0] == "locations" && rest[1] != "" {
			rt.Location = rest[1]
			rest = rest[2:]
		}
	}
	vertex := false
	if len(rest) >= 2 && rest[0] == "publishers" && rest[1] != "" {
		vertex = true
		rest = rest[2:]
	}
	if len(rest) != 1 || rest[0] != "models" {
		return Route{}, false
	}
	switch {
	case vertex && rt.Version == "v1beta" && rt.Project != "":
		rt.Backend, rt.Service = ai.BackendVertexAI, "firebasevertexai.googleapis.com"
	case vertex:
		rt.Backend, rt.Service = ai.BackendVertexAI, "aiplatform.googleapis.com"
	case rt.Location != "":
		return Route{}, false
	case rt.Project != "":
		rt.Backend, rt.Service = ai.BackendGoogleAI, "firebasevertexai.googleapis.com"
	default:
		rt.Backend, rt.Service = ai.BackendGoogleAI, "generativelanguage.googleapis.com"
	}
	return rt, true
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request, rt Route) {
	if r.Method != http.MethodPost {
		writeError(w, ai.NotFound("Method not found."))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, ai.MaxRequestBytes+1))
	if err != nil {
		writeError(w, ai.InvalidArgument("Request body could not be read."))
		return
	}
	c := ai.Call{
		Project: rt.Project, Location: rt.Location, Backend: rt.Backend, Model: rt.Model,
		Service: rt.Service, Body: body,
	}
	if c.Project == "" {
		c.Project = h.opts.DefaultProject
	}
	c.APIKey = r.Header.Get("x-goog-api-key")
	if c.APIKey == "" {
		c.APIKey = r.URL.Query().Get("key")
	}
	c.Auth, c.OAuth = caller(r.Header.Get("Authorization"))
	switch rt.Task {
	case "generateContent":
		out, err := h.eng.GenerateContent(r.Context(), c)
		if err != nil {
			writeError(w, err)
			return
		}
		api.Body(w, http.StatusOK, out)
	case "streamGenerateContent":
		h.stream(w, r, c)
	case "countTokens":
		out, err := h.eng.CountTokens(r.Context(), c)
		if err != nil {
			writeError(w, err)
			return
		}
		api.Body(w, http.StatusOK, out)
	default:
		writeError(w, ai.NotFound("Method not found."))
	}
}

// stream writes chunks as server-sent events under alt=sse — each event
// `data: <complete JSON>` ended by CRLF CRLF, as production frames them —
// and otherwise as a JSON array streamed element by element.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, c ai.Call) {
	sse := r.URL.Query().Get("alt") == "sse"
	flusher, _ := w.(http.Flusher)
	started := false
	err := h.eng.StreamGenerateContent(r.Context(), c, func(chunk []byte) error {
		if !started {
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
			} else {
				api.Headers(w)
			}
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(200)
		}
		var err error
		switch {
		case sse:
			_, err = w.Write(append(append([]byte("data: "), ai.SpacedJSON(chunk)...), "\r\n\r\n"...))
		case !started:
			_, err = w.Write(append([]byte("["), chunk...))
		default:
			_, err = w.Write(append([]byte(",\r\n"), chunk...))
		}
		started = true
		if flusher != nil {
			flusher.Flush()
		}
		return err
	})
	switch {
	case err != nil && !started:
		writeError(w, err)
	case err != nil:
		var ae *ai.Error
		if errors.As(err, &ae) {
			env, _ := httpjson.Style{}.Encode(envelope(ae))
			if sse {
				w.Write(append(append([]byte("data: "), env...), "\r\n\r\n"...))
			} else {
				w.Write(append(append([]byte(",\r\n"), env...), ']'))
			}
		}
	case !sse && started:
		w.Write([]byte("]"))
	case !sse:
		api.Body(w, http.StatusOK, []byte("[]"))
	}
}

// caller derives the identity of a call from its Authorization header:
// "Firebase <ID token>" (firebase/ai with Auth) or "Bearer <token>" (an
// OAuth access token from a Vertex AI client, or a JWT). Tokens are not
// verified; an opaque one leaves the caller anonymous.
func caller(header string) (identity.Identity, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || strings.TrimSpace(tok) == "" {
		return identity.Anonymous(), false
	}
	oauth := strings.EqualFold(scheme, "Bearer")
	if !oauth && !strings.EqualFold(scheme, "Firebase") {
		return identity.Anonymous(), false
	}
	id, err := identity.FromAuthorization("Bearer " + strings.TrimSpace(tok))
	if err != nil {
		return identity.Anonymous(), oauth
	}
	return id, oauth
}

// api is how the Gemini and Vertex AI front ends write JSON; errAPI how
// they write errors (pretty-printed, with <, > and & as they are).
var (
	api    = httpjson.Style{Charset: "UTF-8", Indent: true}
	errAPI = httpjson.Style{Charset: "UTF-8", Indent: true, RawHTML: true}
)

// envelope is Google's error envelope of an engine error.
func envelope(ae *ai.Error) httpjson.Envelope {
	st := httpjson.Status{Code: ae.Code, Message: ae.Message, Status: ae.Status}
	if ae.Details != nil {
		st.Details = ae.Details
	}
	return httpjson.Envelope{Error: st}
}

func writeError(w http.ResponseWriter, err error) {
	ae := ai.AsError(err)
	errAPI.JSON(w, ae.HTTPStatus(), envelope(ae))
}
