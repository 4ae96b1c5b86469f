package trigger

import "strings"

// Platform is a function's generation as the manifest names it.
type Platform string

// Platforms.
const (
	GCFv1 Platform = "gcfv1"
	GCFv2 Platform = "gcfv2"
)

// Function is one event-triggered function: the fields of its
// `__endpoint` the dispatcher needs (package functions reads the
// endpoint and builds it: functions.Endpoint.TriggerFunction). The JSON
// names are the manifest's.
type Function struct {
	// ID is how the functions engine names the function when delivering
	// (its own key, e.g. "us-central1-onUserWrite" or the export name).
	ID       string   `json:"id"`
	Platform Platform `json:"platform"`
	// EventType is eventTrigger.eventType, e.g.
	// "google.cloud.firestore.document.v1.written" or
	// "providers/cloud.firestore/eventTypes/document.write".
	EventType string `json:"eventType"`
	// EventFilters are the exact-match filters (database, namespace,
	// document, instance, bucket; v1: resource).
	EventFilters map[string]string `json:"eventFilters,omitempty"`
	// EventFilterPathPatterns are the path-pattern filters (v2 document,
	// ref, instance).
	EventFilterPathPatterns map[string]string `json:"eventFilterPathPatterns,omitempty"`
	// Retry is eventTrigger.retry: a failed delivery is retried.
	Retry bool `json:"retry,omitempty"`
	// Channel is an Eventarc custom event function's channel
	// (eventTrigger.channel, e.g. "locations/us-central1/channels/firebase");
	// set, it makes the function an onCustomEventPublished whose
	// EventType is the custom event's type.
	Channel string `json:"channel,omitempty"`
	// Region is the function's (first) region; "us-central1" when unset.
	Region string `json:"region,omitempty"`
}

// kind is the service and generation of an event type.
type kind int

const (
	kindUnknown kind = iota
	kindFirestoreV2
	kindFirestoreV1
	kindDatabaseV2
	kindDatabaseV1
	kindStorageV2
	kindStorageV1
	kindAuthV2
	kindAuthV1
	kindPubSubV2
	kindPubSubV1
)

// Event type prefixes, as firebase-functions 7.4.0 declares them.
const (
	firestoreV2Prefix = "google.cloud.firestore.document.v1."
	firestoreV1Prefix = "providers/cloud.firestore/eventTypes/document."
	databaseV2Prefix  = "google.firebase.database.ref.v1."
	databaseV1Prefix  = "providers/google.firebase.database/eventTypes/ref."
	storageV2Prefix   = "google.cloud.storage.object.v1."
	storageV1Prefix   = "google.storage.object."
	authV2Prefix      = "google.firebase.auth.user.v2."
	authV1Prefix      = "providers/firebase.auth/eventTypes/user."
	withAuthContext   = ".withAuthContext"
)

func kindOf(eventType string) kind {
	switch {
	case strings.HasPrefix(eventType, firestoreV2Prefix):
		return kindFirestoreV2
	case strings.HasPrefix(eventType, firestoreV1Prefix):
		return kindFirestoreV1
	case strings.HasPrefix(eventType, databaseV2Prefix):
		return kindDatabaseV2
	case strings.HasPrefix(eventType, databaseV1Prefix):
		return kindDatabaseV1
	case strings.HasPrefix(eventType, storageV2Prefix):
		return kindStorageV2
	case strings.HasPrefix(eventType, storageV1Prefix):
		return kindStorageV1
	case strings.HasPrefix(eventType, authV2Prefix):
		return kindAuthV2
	case strings.HasPrefix(eventType, authV1Prefix):
		return kindAuthV1
	case eventType == pubsubV2Type:
		return kindPubSubV2
	case eventType == pubsubV1Type:
		return kindPubSubV1
	}
	return kindUnknown
}

// op is what a change did to the watched thing, in the vocabulary of
// each generation's event types.
type op int

const (
	opCreate op = iota + 1
	opUpdate
	opDelete
)

// action is the operation an event type asks for: the last segment
// (created, update, write, finalize, …) normalized; write matches every
// op. For Storage it is the object action.
func action(eventType string) string {
	t := strings.TrimSuffix(eventType, withAuthContext)
	return t[strings.LastIndexAny(t, "./")+1:]
}

// fires reports whether an event type's action fires for op.
func fires(act string, o op) bool {
	switch act {
	case "written", "write":
		return true
	case "created", "create":
		return o == opCreate
	case "updated", "update":
		return o == opUpdate
	case "deleted", "delete":
		return o == opDelete
	}
	return false
}
