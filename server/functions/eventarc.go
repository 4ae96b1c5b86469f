package functionsserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/server/httpjson"
)

// EventarcEngine is what the Eventarc port needs of the functions engine.
type EventarcEngine interface {
	PublishEvents(who identity.Identity, channel string, events []json.RawMessage) error
}

// EventarcHandler serves Eventarc's publishing API on the port
// CLOUD_EVENTARC_EMULATOR_HOST names, at the path firebase-admin's
// getEventarc().channel(c).publish() uses in emulator mode and at
// production's (/v1/…):
//
//	POST [/v1]/projects/P/locations/L/channels/C:publishEvents
//	     {"events": [CloudEvent in protobuf JSON, …]}  → 200 {}
//
// Errors are Google's JSON envelope (INVALID_ARGUMENT naming the event
// and field, NOT_FOUND for another path).
type EventarcHandler struct{ eng EventarcEngine }

// NewEventarcHandler returns the Eventarc adapter over eng.
func NewEventarcHandler(eng EventarcEngine) *EventarcHandler { return &EventarcHandler{eng: eng} }

// maxPublishRequest bounds a publish request (Eventarc's request limit).
const maxPublishRequest = 10 << 20

func (h *EventarcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Ok\n")
		return
	}
	channel, ok := strings.CutSuffix(strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1"), "/"), ":publishEvents")
	if !ok || !strings.HasPrefix(channel, "projects/") {
		api.Fail(w, errcode.NotFound, fmt.Sprintf("%s is not an Eventarc channel's publishing URL: want POST /projects/PROJECT/locations/LOCATION/channels/CHANNEL:publishEvents", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use POST to publish events"})
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPublishRequest))
	if err != nil {
		api.Fail(w, errcode.InvalidArgument, fmt.Sprintf("the request is over %d bytes", maxPublishRequest))
		return
	}
	var req struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		api.Fail(w, errcode.InvalidArgument, fmt.Sprintf("Invalid JSON payload received. %v", err))
		return
	}
	// Eventarc's publishers authenticate as service accounts: a bearer
	// that is no emulator JWT (an OAuth access token) acts as admin.
	who, err := identity.FromAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		who = identity.AdminIdentity()
	}
	// A publish from a function names its run, as its writes do.
	who = who.ByInvocation(r.Header.Get(identity.InvocationHeader))
	if err := h.eng.PublishEvents(who, channel, req.Events); err != nil {
		var invalid *functions.InvalidEventError
		if errors.As(err, &invalid) {
			api.Fail(w, errcode.InvalidArgument, err.Error())
			return
		}
		api.Fail(w, errcode.Unavailable, err.Error())
		return
	}
	api.JSON(w, http.StatusOK, map[string]any{})
}
