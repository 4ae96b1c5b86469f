// Package storageserver serves the Cloud Storage engine on one port, in the
// dialects the official clients speak: the Firebase v0 REST API of the JS
// SDK (/v0/b/{bucket}/o…, Authorization: Firebase <token>), the GCS JSON
// API (/storage/v1/…, /upload/storage/v1/…, /download/storage/v1/…) and the
// XML API's reads (GET /{bucket}/{object}) of cloud.google.com/go/storage
// and the admin SDKs, plus the Storage emulator's /internal endpoints.
// It only decodes, calls the engine with an explicit identity and encodes;
// the semantics live in package storage.
package storageserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pyric/pyric/identity"
	engine "github.com/pyric/pyric/storage"
)

// DefaultPort is the Storage emulator's port.
const DefaultPort = 9199

// Handler serves every Storage route.
type Handler struct {
	e *engine.Engine
}

// NewHandler serves e.
func NewHandler(e *engine.Engine) *Handler { return &Handler{e: e} }

// StreamsBodies makes h a server.BodyStreamer: object bytes go to disk as
// they arrive and metadata bodies are bounded (maxMetadataBytes), so no
// body here is decoded whole and none waits at the heavy-work gate.
func (h *Handler) StreamsBodies() {}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { // a response cut off on purpose
				panic(v)
			}
			gcsError(w, fmt.Errorf("internal error: %v", v))
		}
	}()
	if r.Method == http.MethodOptions { // CORS is the port's (server.Guard)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p := r.URL.EscapedPath()
	switch {
	case p == "/internal/setRules":
		h.setRules(w, r)
	case p == "/internal/reset":
		h.reset(w, r)
	case strings.HasPrefix(p, "/v0/b/"):
		h.firebase(w, r, p[len("/v0"):])
	case strings.HasPrefix(p, "/upload/storage/v1/b/"):
		h.gcsUpload(w, r, p[len("/upload/storage/v1"):])
	case strings.HasPrefix(p, "/download/storage/v1/b/"):
		h.gcsDownload(w, r, p[len("/download/storage/v1"):])
	case strings.HasPrefix(p, "/storage/v1/b"):
		h.gcs(w, r, p[len("/storage/v1"):])
	case p == "/b" || strings.HasPrefix(p, "/b/"):
		h.gcs(w, r, p)
	case p == "/" || p == "":
		api.JSON(w, http.StatusOK, map[string]any{"service": "storage", "buckets": h.e.Buckets()})
	default:
		h.xml(w, r, p)
	}
}

// firebaseIdentity reads the v0 API's Authorization: Firebase <token> (or
// Bearer). "owner" is admin; any other token is a JWT read without
// verification, uid from user_id as the Storage emulator does (sub when
// absent). A token that is not a JWT is 401.
func firebaseIdentity(r *http.Request) (identity.Identity, error) {
	id, err := firebaseCaller(r)
	return id.ByInvocation(r.Header.Get(identity.InvocationHeader)), err
}

// firebaseCaller is firebaseIdentity before the invocation is named.
func firebaseCaller(r *http.Request) (identity.Identity, error) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return identity.Anonymous(), nil
	}
	scheme, tok, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Firebase") && !strings.EqualFold(scheme, "Bearer") {
		return identity.Identity{}, wireErr(engine.Unauthenticated, "Invalid Authorization header: expected 'Firebase <token>'.")
	}
	tok = strings.TrimSpace(tok)
	if tok == "owner" {
		return identity.AdminIdentity(), nil
	}
	claims, err := identity.DecodeJWTPayload(tok)
	if err != nil {
		return identity.Identity{}, wireErr(engine.Unauthenticated, "Invalid auth token: not a JWT.")
	}
	uid, _ := claims["user_id"].(string)
	if uid == "" {
		uid, _ = claims["sub"].(string)
	}
	return identity.NewUser(uid, claims), nil
}

// gcsIdentity is the GCS API's caller: admin (the emulator treats the
// unauthenticated GCS clients as admin) unless a Firebase token says
// otherwise.
func gcsIdentity(r *http.Request) (identity.Identity, error) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if scheme, _, _ := strings.Cut(h, " "); strings.EqualFold(scheme, "Firebase") {
		return firebaseIdentity(r)
	}
	return identity.AdminIdentity().ByInvocation(r.Header.Get(identity.InvocationHeader)), nil
}

// setRules is the Storage emulator's PUT /internal/setRules:
// {"rules":{"files":[{"name":"storage.rules","content":"..."}]}}.
func (h *Handler) setRules(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		h.gcsFail(w, r, badRequest("setRules takes PUT"))
		return
	}
	var body struct {
		Rules struct {
			Files []struct {
				Name    string `json:"name"`
				Content string `json:"content"`
			} `json:"files"`
		} `json:"rules"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&body); err != nil || len(body.Rules.Files) == 0 {
		api.JSON(w, http.StatusBadRequest, map[string]any{"message": "Request body must include 'rules.files' array"})
		return
	}
	f := body.Rules.Files[0]
	if _, err := h.e.SetRules(f.Name, f.Content); err != nil {
		var ce *engine.CompileError
		if errors.As(err, &ce) {
			api.JSON(w, http.StatusBadRequest, map[string]any{"message": "There was an error updating rules, see logs for more details", "error": err.Error()})
			return
		}
		h.gcsFail(w, r, err)
		return
	}
	api.JSON(w, http.StatusOK, map[string]any{})
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.gcsFail(w, r, badRequest("reset takes POST"))
		return
	}
	if err := h.e.Reset(); err != nil {
		h.gcsFail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func methodNotAllowed(r *http.Request) error {
	return badRequest("%s is not supported on %s", r.Method, r.URL.Path)
}
