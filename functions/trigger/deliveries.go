package trigger

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/pyric/pyric/event"
)

// Env is what payloads need besides the event: the project and where its
// services are, as the functions see them.
type Env struct {
	// Project is the project id.
	Project string
	// DatabaseInstance is the Realtime Database instance of events whose
	// path names none (the project's default namespace).
	DatabaseInstance string
	// DatabaseHost is the host the v2 events name
	// (firebasedatabasehost); "firebaseio.com" when empty.
	DatabaseHost string
	// StorageURL is the Storage emulator's base URL for an object's
	// selfLink and mediaLink ("http://127.0.0.1:9199").
	StorageURL string
	// NewID mints event ids; nil means 16 random bytes in hex.
	NewID func() string
}

func (env Env) id() string {
	if env.NewID != nil {
		return env.NewID()
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (env Env) dbHost() string {
	if env.DatabaseHost != "" {
		return env.DatabaseHost
	}
	return "firebaseio.com"
}

// Delivery is one invocation a change causes: the function, the params
// its wildcards captured and the request body it receives.
type Delivery struct {
	Function string
	Params   map[string]string
	// Payload is the JSON body: a CloudEvent in structured mode for v2
	// functions; for v1 functions {"data": …, "context": …} as the
	// Emulator Suite's runtime hands them to the handler (context.resource
	// lifted to its name, except for Storage).
	Payload []byte
}

// Deliveries returns the invocations of f that ev causes, none when f
// does not fire for it. Errors are payloads that cannot be built (a
// document that does not decode), never a mismatch.
func Deliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	if f.Channel != "" || OnGoogleChannel(f) {
		return eventarcDeliveries(f, ev, env)
	}
	switch kindOf(f.EventType) {
	case kindFirestoreV1, kindFirestoreV2:
		return firestoreDeliveries(f, ev, env)
	case kindDatabaseV1, kindDatabaseV2:
		return databaseDeliveries(f, ev, env)
	case kindStorageV1, kindStorageV2:
		return storageDeliveries(f, ev, env)
	case kindAuthV1, kindAuthV2:
		return authDeliveries(f, ev, env)
	case kindPubSubV1, kindPubSubV2:
		return pubsubDeliveries(f, ev, env)
	}
	return nil, nil
}

// timestamp is how every payload writes a time: RFC 3339, UTC.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// eventTime is when the change happened: the commit's time, else the
// event's.
func eventTime(ev event.Event) time.Time {
	if ev.Commit != nil && !ev.Commit.RequestTime.IsZero() {
		return ev.Commit.RequestTime
	}
	return ev.At
}

func marshal(v any) ([]byte, error) { return json.Marshal(v) }

// cloudEvent is the common part of a v2 event in structured mode.
func cloudEvent(env Env, typ, source, subject string, t time.Time) map[string]any {
	ce := map[string]any{"specversion": "1.0", "id": env.id(), "type": typ, "source": source,
		"time": timestamp(t), "datacontenttype": "application/json"}
	if subject != "" {
		ce["subject"] = subject
	}
	return ce
}

// legacyContext is a v1 event's context.
func legacyContext(env Env, f Function, resource any, t time.Time, params map[string]string) map[string]any {
	if params == nil {
		params = map[string]string{}
	}
	return map[string]any{"eventId": env.id(), "timestamp": timestamp(t), "eventType": f.EventType,
		"resource": resource, "params": params}
}

// authContext is the authtype/authid pair of the …WithAuthContext and
// Realtime Database v2 events for the identity a change was made as.
// adminType is what an admin write reports: production's Firestore says
// service_account; its Realtime Database leaves the type out (the SDK
// then says "unknown", as observed in functions-rtdb#10).
func authContext(id event.Identity, adminType string) (authType, authID string) {
	switch id.Lens {
	case event.LensAdmin:
		return adminType, ""
	case event.LensUser:
		return "app_user", id.UID
	}
	return "unauthenticated", ""
}
