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
	PublishGoogleEvents(who identity.Identity, events []json.RawMessage) error
	EventarcTriggers() map[string][]functions.EventarcTrigger
	RegisterEventarcTrigger(project, name string, body []byte) error
	RemoveEventarcTrigger(project, name string, body []byte) error
}

// EventarcHandler serves Eventarc's publishing API on the port
// CLOUD_EVENTARC_EMULATOR_HOST names, at the path firebase-admin's
// getEventarc().channel(c).publish() uses in emulator mode and at
// production's (/v1/…):
//
//	POST [/v1]/projects/P/locations/L/channels/C:publishEvents
//	     {"events": [CloudEvent in protobuf JSON, …]}  → 200 {}
//
// and the routes firebase-tools' Eventarc emulator serves besides:
//
//	POST /google/publishEvents {"events": [CloudEvent in JSON form, …]}
//	     → 200 "OK": Google's own events (Firebase Alerts), delivered as
//	     they are to the functions on trigger.GoogleChannel
//	GET  /google/getTriggers → 200 {"TYPE-CHANNEL": [{projectId,
//	     triggerName, eventTrigger}, …]}
//	POST /emulator/v1/projects/P/triggers/NAME {"eventTrigger": {…}}
//	POST /emulator/v1/remove/projects/P/triggers/NAME {"eventTrigger": {…}}
//	     → 200 {"res": "OK"}, or 400 {"error": "what is wrong"} as
//	     firebase-tools answers (its Error objects serialize to {}: ours
//	     say what is wrong)
//
// The publishes' errors are Google's JSON envelope (INVALID_ARGUMENT
// naming the event and field, NOT_FOUND for another path), where
// firebase-tools answers a bare "Bad Request" or a 500 page.
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
	switch path := r.URL.Path; {
	case path == "/google/publishEvents":
		if requirePost(w, r) {
			h.publish(w, r, "")
		}
		return
	case path == "/google/getTriggers":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use GET to list the triggers"})
			return
		}
		api.JSON(w, http.StatusOK, h.eng.EventarcTriggers())
		return
	case strings.HasPrefix(path, "/emulator/v1/"):
		h.registration(w, r, strings.TrimPrefix(path, "/emulator/v1/"))
		return
	}
	channel, ok := strings.CutSuffix(strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1"), "/"), ":publishEvents")
	if !ok || !strings.HasPrefix(channel, "projects/") {
		api.Fail(w, errcode.NotFound, fmt.Sprintf("%s is not an Eventarc channel's publishing URL: want POST /projects/PROJECT/locations/LOCATION/channels/CHANNEL:publishEvents", r.URL.Path))
		return
	}
	if requirePost(w, r) {
		h.publish(w, r, channel)
	}
}

// requirePost answers a request that is no POST with 405 and reports
// whether it was one.
func requirePost(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use POST to publish events"})
		return false
	}
	return true
}

// publish publishes a PublishEventsRequest to channel, or to Google's
// channel (the native route) when channel is "".
func (h *EventarcHandler) publish(w http.ResponseWriter, r *http.Request, channel string) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPublishRequest))
	if err != nil {
		api.Fail(w, errcode.InvalidArgument, fmt.Sprintf("the request is over %d bytes", maxPublishRequest))
		return
	}
	var req struct {
		Events *[]json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		api.Fail(w, errcode.InvalidArgument, fmt.Sprintf("Invalid JSON payload received. %v", err))
		return
	}
	if req.Events == nil {
		api.Fail(w, errcode.InvalidArgument, `the request has no "events": want {"events": [CloudEvent, …]}`)
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
	if channel == "" {
		err = h.eng.PublishGoogleEvents(who, *req.Events)
	} else {
		err = h.eng.PublishEvents(who, channel, *req.Events)
	}
	if err != nil {
		var invalid *functions.InvalidEventError
		if errors.As(err, &invalid) {
			api.Fail(w, errcode.InvalidArgument, err.Error())
			return
		}
		api.Fail(w, errcode.Unavailable, err.Error())
		return
	}
	if channel == "" {
		// firebase-tools' answer (Express's sendStatus(200)).
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "OK")
		return
	}
	api.JSON(w, http.StatusOK, map[string]any{})
}

// registration serves the functions emulator's trigger registrations:
// rest is "[remove/]projects/P/triggers/NAME" (NAME may hold slashes:
// firebase-tools appends a custom event's channel to it).
func (h *EventarcHandler) registration(w http.ResponseWriter, r *http.Request, rest string) {
	remove := false
	if after, ok := strings.CutPrefix(rest, "remove/"); ok {
		rest, remove = after, true
	}
	project, name, ok := strings.Cut(strings.TrimPrefix(rest, "projects/"), "/triggers/")
	if !strings.HasPrefix(rest, "projects/") || !ok || strings.Contains(project, "/") {
		api.Fail(w, errcode.NotFound, fmt.Sprintf("%s is no Eventarc route: want POST /emulator/v1/[remove/]projects/PROJECT/triggers/NAME", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use POST to register or remove a trigger"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPublishRequest))
	if err != nil {
		api.JSON(w, http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("the request is over %d bytes", maxPublishRequest)})
		return
	}
	if remove {
		err = h.eng.RemoveEventarcTrigger(project, name, body)
	} else {
		err = h.eng.RegisterEventarcTrigger(project, name, body)
	}
	if err != nil {
		api.JSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	api.JSON(w, http.StatusOK, map[string]any{"res": "OK"})
}
