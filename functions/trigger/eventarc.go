package trigger

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pyric/pyric/event"
)

// Eventarc custom events: what the functions engine emits when
// firebase-admin's getEventarc().channel(c).publish(events) reaches the
// Eventarc port (service EventarcService, method and op OpPublishEvents,
// path the channel's full name, Mutation.Current a *CustomEvents), and
// the onCustomEventPublished functions they fire.
const (
	EventarcService = "eventarc"
	OpPublishEvents = "publishEvents"
	// DefaultChannel is the channel firebase-functions gives an
	// onCustomEventPublished without one.
	DefaultChannel = "locations/us-central1/channels/firebase"
	// GoogleChannel is where the events Google itself publishes arrive
	// (Firebase Alerts' onAlertPublished and the other v2 functions of
	// event types no Pyric service emits): the Eventarc emulator's
	// native route, POST /google/publishEvents, publishes to it.
	GoogleChannel = "google"
)

// OnGoogleChannel reports whether f takes the events published to
// GoogleChannel: a v2 function without a channel whose event type no
// service of Pyric emits (firebase-tools registers the Firebase Alerts
// ones, google.firebase.firebasealerts.alerts.v1.published, under that
// channel; the others it cannot deliver at all).
func OnGoogleChannel(f Function) bool {
	return f.Channel == "" && f.Platform == GCFv2 && kindOf(f.EventType) == kindUnknown
}

// CustomEvents are the events of one publish to a channel, each a
// CloudEvent in the JSON (structured mode) form a function receives.
type CustomEvents struct {
	Channel string           `json:"channel"` // projects/P/locations/L/channels/C
	Events  []map[string]any `json:"events"`
	// Size is the publish request's size, what the event history
	// counts the events as (HeapSize).
	Size int `json:"-"`
}

// customEventsOf is the CustomEvents of a publish event's
// Mutation.Current: the *CustomEvents itself, or, for an event read back
// from the sandbox's outbox, its JSON decoded.
func customEventsOf(v any) (*CustomEvents, bool) {
	switch v := v.(type) {
	case *CustomEvents:
		return v, v != nil
	case map[string]any:
		var ce CustomEvents
		if err := event.DecodeHeld(v, &ce); err != nil || ce.Channel == "" {
			return nil, false
		}
		return &ce, true
	}
	return nil, false
}

// HeapSize is about what the events take in memory (event.Bus bounds
// its history by it).
func (c *CustomEvents) HeapSize() int { return 64 + len(c.Channel) + 2*c.Size }

// channelPattern is a channel's name as Eventarc accepts it, the project
// optional (firebase-tools' discovery uses the same pattern).
var channelPattern = regexp.MustCompile(`^(?:projects/([A-Za-z0-9][A-Za-z0-9-]*)/)?locations/([A-Za-z0-9_-]+)/channels/([A-Za-z0-9_-]+)$`)

// ErrChannelName is a channel name of no form Eventarc accepts.
var ErrChannelName = errors.New("invalid channel name: want CHANNEL, locations/LOCATION/channels/CHANNEL or projects/PROJECT/locations/LOCATION/channels/CHANNEL")

// ChannelName resolves a function's (or a publisher's) channel to its
// full name as production and firebase-tools do: a bare id is in region
// (the function's), a name without a project is in project.
func ChannelName(project, region, channel string) (string, error) {
	if channel == "" {
		channel = DefaultChannel
	}
	if !strings.Contains(channel, "/") {
		if region == "" {
			region = "us-central1"
		}
		channel = "locations/" + region + "/channels/" + channel
	}
	m := channelPattern.FindStringSubmatch(channel)
	if m == nil {
		return "", ErrChannelName
	}
	if m[1] != "" {
		project = m[1]
	}
	return "projects/" + project + "/locations/" + m[2] + "/channels/" + m[3], nil
}

// FunctionChannel is the channel whose publishes f takes: GoogleChannel
// (OnGoogleChannel), else its channel's full name.
func FunctionChannel(f Function, project string) (string, error) {
	if OnGoogleChannel(f) {
		return GoogleChannel, nil
	}
	return ChannelName(project, f.Region, f.Channel)
}

// eventarcDeliveries are the invocations of an onCustomEventPublished
// function (or one on GoogleChannel) for a publish: each event of its
// type on its channel whose attributes equal every one of its filters,
// delivered as published.
func eventarcDeliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	if ev.Service != EventarcService || ev.Kind != event.KindMutation || ev.Mutation == nil || ev.Mutation.Op != OpPublishEvents {
		return nil, nil
	}
	ce, ok := customEventsOf(ev.Mutation.Current)
	if !ok {
		return nil, nil
	}
	channel, err := FunctionChannel(f, env.Project)
	if err != nil || channel != ce.Channel {
		return nil, err
	}
	var out []Delivery
	for _, e := range ce.Events {
		if e["type"] != f.EventType || !attributesMatch(e, f.EventFilters) {
			continue
		}
		p, err := marshal(e)
		if err != nil {
			return out, err
		}
		out = append(out, Delivery{Function: f.ID, Params: map[string]string{}, Payload: p})
	}
	return out, nil
}

// attributesMatch reports whether every filter equals the event's
// attribute of its name (exact match, as Eventarc's filters are).
func attributesMatch(e map[string]any, filters map[string]string) bool {
	for k, want := range filters {
		got, ok := e[k]
		if !ok || k == "data" || k == "data_base64" {
			return false
		}
		// An integer or boolean extension compares as its canonical
		// string, the form Eventarc's filters are written in.
		if fmt.Sprint(got) != want {
			return false
		}
	}
	return true
}
