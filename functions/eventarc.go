package functions

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions/trigger"
	"github.com/pyric/pyric/identity"
)

// InvalidEventError is a publish to the Eventarc port that Eventarc
// refuses (INVALID_ARGUMENT): Reason names the event and the field.
type InvalidEventError struct{ Reason string }

func (e *InvalidEventError) Error() string { return e.Reason }

func invalidEvent(format string, args ...any) error {
	return &InvalidEventError{Reason: fmt.Sprintf(format, args...)}
}

// cloudEventType is the @type firebase-admin gives each published event:
// io.cloudevents.v1.CloudEvent in protobuf's JSON form.
const cloudEventType = "type.googleapis.com/io.cloudevents.v1.CloudEvent"

// protoCloudEvent is one event of a PublishEventsRequest as
// firebase-admin's toCloudEventProtoFormat writes it.
type protoCloudEvent struct {
	Type        string                     `json:"@type"`
	ID          *string                    `json:"id"`
	Source      *string                    `json:"source"`
	SpecVersion *string                    `json:"specVersion"`
	EventType   *string                    `json:"type"`
	Attributes  map[string]json.RawMessage `json:"attributes"`
	TextData    *string                    `json:"textData"`
	BinaryData  *string                    `json:"binaryData"`
	ProtoData   json.RawMessage            `json:"protoData"`
}

// attributeName is a CloudEvents attribute (extension) name: lower-case
// letters and digits, at most 20 of them (CloudEvents 1.0 recommends the
// bound; Eventarc enforces it).
var attributeName = regexp.MustCompile(`^[a-z0-9]{1,20}$`)

// PublishEvents publishes a PublishEventsRequest's events (the JSON
// firebase-admin's getEventarc().channel(c).publish() sends) to a
// channel, as who: each event is checked as Eventarc checks it and
// turned into the CloudEvent a function receives (structured mode:
// attributes at the top, JSON data parsed), and the publish goes on the
// event stream, where the onCustomEventPublished functions of the
// channel with the event's type and matching filters pick it up. An
// *InvalidEventError says which event and field Eventarc refuses; then
// none of the request's events is published.
func (e *Engine) PublishEvents(who identity.Identity, channel string, events []json.RawMessage) error {
	full, err := trigger.ChannelName(e.project, "", channel)
	if err != nil || full != channel {
		return invalidEvent("%s: %v", channel, trigger.ErrChannelName)
	}
	if len(events) == 0 {
		return invalidEvent("PublishEventsRequest.events is empty: publish at least one event")
	}
	out := make([]map[string]any, 0, len(events))
	size := 0
	for i, raw := range events {
		size += len(raw)
		ce, err := e.cloudEvent(raw)
		if err != nil {
			return invalidEvent("events[%d]: %v", i, err)
		}
		out = append(out, ce)
	}
	ev := event.Event{Kind: event.KindMutation, Service: trigger.EventarcService, Method: trigger.OpPublishEvents, Path: full,
		Mutation: &event.Mutation{Op: trigger.OpPublishEvents, Project: strings.Split(full, "/")[1],
			Current: &trigger.CustomEvents{Channel: full, Events: out, Size: size}}}
	ev.Who(who)
	return e.publishDurably(ev)
}

// publishDurably emits an Eventarc publish once it is durable. Eventarc
// keeps an event it accepted until the triggers it routes to took it,
// and pyric keeps nothing else of a publish, so when a trigger wants the
// event (the sandbox's outbox holds it) it is held by a Log append of
// its own before the publish is acknowledged: a kill right after the
// acknowledgement no longer loses it. An append that fails fails the
// publish, as nothing of it is kept.
func (e *Engine) publishDurably(ev event.Event) error {
	if e.outbox != nil && e.log != nil {
		evs := []event.Event{ev}
		if held := e.outbox.Hold(evs); len(held) > 0 {
			if err := e.log.Append(pendingSpace, held); err != nil {
				return fmt.Errorf("Eventarc could not keep the events: %w", err)
			}
			ev = evs[0]
		}
	}
	e.events.Emit(ev)
	return nil
}

// cloudEvent checks one event in protobuf JSON form and returns it in
// CloudEvents' JSON form, the one firebase-functions hands the handler.
func (e *Engine) cloudEvent(raw json.RawMessage) (map[string]any, error) {
	var pe protoCloudEvent
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pe); err != nil {
		return nil, fmt.Errorf("not a CloudEvent: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if pe.Type != "" && pe.Type != cloudEventType {
		return nil, fmt.Errorf("@type is %q, want %q", pe.Type, cloudEventType)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"id", pe.ID}, {"source", pe.Source}, {"specVersion", pe.SpecVersion}, {"type", pe.EventType}} {
		if f.v == nil || *f.v == "" {
			return nil, fmt.Errorf("CloudEvent '%s' is required", f.name)
		}
	}
	if *pe.SpecVersion != "1.0" {
		return nil, fmt.Errorf("CloudEvent 'specVersion' is %q: only 1.0 is supported", *pe.SpecVersion)
	}
	ce := map[string]any{"specversion": "1.0", "id": *pe.ID, "source": *pe.Source, "type": *pe.EventType}
	for name, rawVal := range pe.Attributes {
		if !attributeName.MatchString(name) {
			return nil, fmt.Errorf("attribute %q: a CloudEvent attribute's name is 1 to 20 lower-case letters or digits", name)
		}
		switch name {
		case "id", "source", "specversion", "type", "data", "data_base64":
			return nil, fmt.Errorf("attribute %q: %s is a field of the CloudEvent, not an attribute", name, name)
		}
		v, err := attributeValue(rawVal)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %v", name, err)
		}
		ce[name] = v
	}
	if t, ok := ce["time"]; ok {
		s, _ := t.(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, fmt.Errorf("attribute \"time\": %q is not an RFC 3339 timestamp", s)
		}
	} else {
		// Eventarc stamps an event without a time with its arrival.
		ce["time"] = e.now().UTC().Format("2006-01-02T15:04:05.000Z")
	}
	ctype, _ := ce["datacontenttype"].(string)
	switch {
	case pe.ProtoData != nil:
		return nil, fmt.Errorf("protoData is not supported by Cloud Functions triggers: send textData or binaryData")
	case pe.TextData != nil && pe.BinaryData != nil:
		return nil, fmt.Errorf("textData and binaryData are both set: an event has one data")
	case pe.TextData != nil:
		if isJSON(ctype) {
			var data any
			if err := json.Unmarshal([]byte(*pe.TextData), &data); err != nil {
				return nil, fmt.Errorf("textData is not the JSON its datacontenttype %q says: %v", ctype, err)
			}
			ce["data"] = data
		} else {
			ce["data"] = *pe.TextData
		}
	case pe.BinaryData != nil:
		if _, err := base64.StdEncoding.DecodeString(*pe.BinaryData); err != nil {
			return nil, fmt.Errorf("binaryData is not base64: %v", err)
		}
		ce["data_base64"] = *pe.BinaryData
	}
	return ce, nil
}

// isJSON reports whether a content type is JSON (application/json or a
// +json type), whose data CloudEvents' JSON form carries as JSON.
func isJSON(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// attributeValue is a CloudEventAttributeValue in its JSON form: exactly
// one of its typed members.
func attributeValue(raw json.RawMessage) (any, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 1 {
		return nil, fmt.Errorf("want an object with one of ceBoolean, ceInteger, ceString, ceBytes, ceUri, ceUriRef, ceTimestamp")
	}
	for kind, val := range v {
		switch kind {
		case "ceBoolean":
			var b bool
			if json.Unmarshal(val, &b) != nil {
				return nil, fmt.Errorf("ceBoolean is not a boolean")
			}
			return b, nil
		case "ceInteger":
			var n int32
			if json.Unmarshal(val, &n) != nil {
				return nil, fmt.Errorf("ceInteger is not a 32-bit integer")
			}
			return int64(n), nil
		case "ceString", "ceUri", "ceUriRef", "ceTimestamp", "ceBytes":
			var s string
			if json.Unmarshal(val, &s) != nil {
				return nil, fmt.Errorf("%s is not a string", kind)
			}
			if kind == "ceBytes" {
				if _, err := base64.StdEncoding.DecodeString(s); err != nil {
					return nil, fmt.Errorf("ceBytes is not base64")
				}
			}
			return s, nil
		default:
			return nil, fmt.Errorf("unknown attribute value %q: want one of ceBoolean, ceInteger, ceString, ceBytes, ceUri, ceUriRef, ceTimestamp", kind)
		}
	}
	return nil, nil
}

// PublishGoogleEvents publishes events to trigger.GoogleChannel, as the
// Eventarc emulator's native route (POST /google/publishEvents) does for
// the events Google publishes (Firebase Alerts): each event is a
// CloudEvent already in its JSON form and is delivered as it is, to the
// functions of its type on that channel whose filters its attributes
// meet. An event must be an object with a type (firebase-tools checks
// nothing else); an *InvalidEventError names the first that is not, and
// then none is published. No events publish nothing.
func (e *Engine) PublishGoogleEvents(who identity.Identity, events []json.RawMessage) error {
	out := make([]map[string]any, 0, len(events))
	size := 0
	for i, raw := range events {
		size += len(raw)
		var ce map[string]any
		if err := json.Unmarshal(raw, &ce); err != nil || ce == nil {
			return invalidEvent("events[%d]: not a CloudEvent in JSON form (an object)", i)
		}
		if t, _ := ce["type"].(string); t == "" {
			return invalidEvent("events[%d]: CloudEvent 'type' is required", i)
		}
		out = append(out, ce)
	}
	if len(out) == 0 {
		return nil
	}
	ev := event.Event{Kind: event.KindMutation, Service: trigger.EventarcService, Method: trigger.OpPublishEvents, Path: trigger.GoogleChannel,
		Mutation: &event.Mutation{Op: trigger.OpPublishEvents, Project: e.project,
			Current: &trigger.CustomEvents{Channel: trigger.GoogleChannel, Events: out, Size: size}}}
	ev.Who(who)
	return e.publishDurably(ev)
}

// EventarcTrigger is one Eventarc trigger as the Eventarc emulator lists
// it (GET /google/getTriggers) and takes it from the functions emulator
// (POST /emulator/v1/projects/P/triggers/NAME): the function it calls,
// by the name the functions port's trigger route takes
// (/functions/projects/P/triggers/NAME: REGION-ID), and its event
// trigger.
type EventarcTrigger struct {
	ProjectID    string         `json:"projectId"`
	TriggerName  string         `json:"triggerName"`
	EventTrigger map[string]any `json:"eventTrigger"`
}

// eventarcRegistration is a trigger registered through the Eventarc
// port, and the function it resolved to.
type eventarcRegistration struct {
	EventarcTrigger
	fn trigger.Function
}

// EventarcTriggers lists the triggers the Eventarc port delivers to, by
// "EVENTTYPE-CHANNEL" (CHANNEL a channel's full name, or "google"), as
// firebase-tools' GET /google/getTriggers does: the loaded
// onCustomEventPublished functions and those on trigger.GoogleChannel
// (Firebase Alerts), then the triggers registered through the port.
func (e *Engine) EventarcTriggers() map[string][]EventarcTrigger {
	out := map[string][]EventarcTrigger{}
	for _, ep := range e.Endpoints() {
		if ep.Event == nil {
			continue
		}
		f := ep.TriggerFunction()
		if f.Channel == "" && !trigger.OnGoogleChannel(f) {
			continue
		}
		channel, err := trigger.FunctionChannel(f, e.project)
		if err != nil {
			continue
		}
		et := map[string]any{"eventType": f.EventType}
		if f.Channel != "" {
			et["channel"] = channel
			et["service"] = "eventarc.googleapis.com"
		} else if strings.HasPrefix(f.EventType, "google.firebase.firebasealerts.") {
			et["service"] = "firebasealerts.googleapis.com"
		}
		if len(f.EventFilters) > 0 {
			et["eventFilters"] = f.EventFilters
		}
		if f.Retry {
			et["retry"] = true
		}
		key := f.EventType + "-" + channel
		out[key] = append(out[key], EventarcTrigger{ProjectID: e.project, TriggerName: f.Region + "-" + ep.ID, EventTrigger: et})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.registered {
		key := r.fn.EventType + "-" + registeredChannel(r.fn)
		out[key] = append(out[key], r.EventarcTrigger)
	}
	return out
}

func registeredChannel(f trigger.Function) string {
	if f.Channel == "" {
		return trigger.GoogleChannel
	}
	return f.Channel
}

// RegisterEventarcTrigger adds a trigger as the functions emulator
// registers one with the Eventarc emulator: body is
// {"eventTrigger": {"eventType", "channel"?, "eventFilters"?, …}}, with
// ${PROJECT_ID} standing for project. name is the function it calls:
// REGION-ID of a loaded v2 event function (firebase-tools' own form,
// REGION-ID-GENERATION[-CHANNEL], is taken too). Publishes then deliver
// to that function as to the ones declared in code, once per
// registration, as firebase-tools does.
func (e *Engine) RegisterEventarcTrigger(project, name string, body []byte) error {
	r, err := e.eventarcRegistration(project, name, body)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.registered = append(e.registered, r)
	e.mu.Unlock()
	e.syncTriggers()
	return nil
}

// RemoveEventarcTrigger removes a trigger RegisterEventarcTrigger added
// with the same project, name and event trigger.
func (e *Engine) RemoveEventarcTrigger(project, name string, body []byte) error {
	r, err := e.eventarcRegistration(project, name, body)
	if err != nil {
		return err
	}
	want, _ := json.Marshal(r.EventarcTrigger)
	e.mu.Lock()
	i := slices.IndexFunc(e.registered, func(x eventarcRegistration) bool {
		got, _ := json.Marshal(x.EventarcTrigger)
		return string(got) == string(want)
	})
	if i >= 0 {
		e.registered = slices.Delete(e.registered, i, i+1)
	}
	e.mu.Unlock()
	if i < 0 {
		return invalidEvent("Unable to delete function trigger %s: no trigger of that name and event trigger is registered", name)
	}
	e.syncTriggers()
	return nil
}

// eventarcRegistration checks a registration's body and resolves its
// function.
func (e *Engine) eventarcRegistration(project, name string, body []byte) (eventarcRegistration, error) {
	if project == "" || name == "" {
		return eventarcRegistration{}, invalidEvent("Missing project ID or trigger name.")
	}
	if project != e.project {
		return eventarcRegistration{}, invalidEvent("project %s: this emulator runs the functions of %s", project, e.project)
	}
	var req struct {
		EventTrigger map[string]any `json:"eventTrigger"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(body), "${PROJECT_ID}", project)), &req); err != nil {
		return eventarcRegistration{}, invalidEvent("the body is not JSON: %v", err)
	}
	if req.EventTrigger == nil {
		return eventarcRegistration{}, invalidEvent("Missing event trigger for %s.", name)
	}
	eventType, _ := req.EventTrigger["eventType"].(string)
	if eventType == "" {
		return eventarcRegistration{}, invalidEvent("eventTrigger.eventType of %s is missing or not a string", name)
	}
	ep, ok := e.triggerByName(name)
	if !ok {
		return eventarcRegistration{}, invalidEvent("trigger name %s names no loaded v2 event function: want REGION-ID", name)
	}
	fn := ep.TriggerFunction()
	fn.EventType, fn.Channel, fn.EventFilters = eventType, "", nil
	if ch, ok := req.EventTrigger["channel"].(string); ok && ch != "" {
		full, err := trigger.ChannelName(project, fn.Region, ch)
		if err != nil {
			return eventarcRegistration{}, invalidEvent("eventTrigger.channel of %s: %v", name, err)
		}
		fn.Channel = full
	} else if !trigger.OnGoogleChannel(fn) {
		return eventarcRegistration{}, invalidEvent("eventTrigger of %s has no channel and its type %s is a Pyric service's: its events come from that service", name, eventType)
	}
	if filters, ok := req.EventTrigger["eventFilters"].(map[string]any); ok {
		var err error
		if fn.EventFilters, err = stringFilters(name, "eventFilters", filters); err != nil {
			return eventarcRegistration{}, invalidEvent("%v", err)
		}
	}
	return eventarcRegistration{EventarcTrigger: EventarcTrigger{ProjectID: project, TriggerName: name, EventTrigger: req.EventTrigger}, fn: fn}, nil
}

// generationSuffix is what firebase-tools appends to an event trigger's
// REGION-ID: "-GENERATION", then "-CHANNEL" for a custom event.
var generationSuffix = regexp.MustCompile(`^-[0-9]+(-.*)?$`)

// triggerByName is the v2 event function a trigger name calls.
func (e *Engine) triggerByName(name string) (Endpoint, bool) {
	eps := e.Endpoints()
	for _, exact := range []bool{true, false} {
		for _, ep := range eps {
			if ep.Event == nil || ep.Platform != GCFv2 {
				continue
			}
			for _, reg := range ep.Regions {
				rest, ok := strings.CutPrefix(name, reg+"-"+ep.ID)
				if ok && (rest == "") == exact && (exact || generationSuffix.MatchString(rest)) {
					return ep, true
				}
			}
		}
	}
	return Endpoint{}, false
}
