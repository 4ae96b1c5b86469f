// Package event is the one stream every operation of every service flows
// into: engines emit, and Studio, capture/verify, MCP and logs subscribe.
// Field names follow the original sandbox's canonical event kinds
// (operation, commit, listener, service_mutation, session_boundary,
// runtime_error) so persisted streams stay readable by its tools.
package event

import (
	"time"

	"github.com/pyric/pyric/identity"
)

// Kinds of event.
const (
	KindOperation       = "operation"        // a request was decided (allow/deny/unsupported/error)
	KindCommit          = "commit"           // state changed
	KindListener        = "listener"         // a listener attached, delivered, was suppressed, errored, detached
	KindServiceMutation = "service_mutation" // auth/storage/rtdb admin-ish changes (user_create, object_put, …)
	KindSessionBoundary = "session_boundary" // reset or dispose
	KindRuntimeError    = "runtime_error"    // a failure that is not a rules decision
)

// Results of an operation.
const (
	ResultAllow         = "allow"
	ResultDeny          = "deny"
	ResultUnsupported   = "unsupported"
	ResultError         = "error"
	ResultNotApplicable = "not-applicable"
)

// Origins of an operation.
const (
	OriginUser        = "user"
	OriginListener    = "listener"
	OriginTransaction = "transaction"
	OriginBatch       = "batch"
	OriginAdmin       = "admin"
	OriginSystem      = "system"
)

// Event is one entry of the stream. It is a tagged union: Kind says which
// fields are meaningful; the rest are zero and omitted from JSON.
type Event struct {
	Kind    string            `json:"kind"`
	ID      string            `json:"id"`
	At      int64             `json:"at"` // Unix milliseconds
	Service string            `json:"service,omitempty"`
	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	Auth    identity.Identity `json:"auth"`

	// operation
	Result         string    `json:"result,omitempty"`
	Origin         string    `json:"origin,omitempty"`
	DurationMs     float64   `json:"durationMs,omitempty"`
	Reasons        []string  `json:"reasons,omitempty"`
	Rules          *Rules    `json:"rules,omitempty"`
	Request        *Request  `json:"request,omitempty"`
	ResourceBefore *Resource `json:"resourceBefore,omitempty"`
	ResourceAfter  *Resource `json:"resourceAfter,omitempty"`

	// shared by operation and commit
	GroupID     string       `json:"groupId,omitempty"`
	GroupKind   string       `json:"groupKind,omitempty"` // batch | transaction
	TriggeredBy *TriggeredBy `json:"triggeredBy,omitempty"`

	// commit
	Data       any     `json:"data,omitempty"`
	PriorState any     `json:"priorState,omitempty"`
	NextState  any     `json:"nextState,omitempty"`
	Replay     *Replay `json:"replay,omitempty"`

	// listener
	Phase      string  `json:"phase,omitempty"` // attach | detach | delivery | suppressed | errored; reset | dispose for session_boundary
	ListenerID string  `json:"listenerId,omitempty"`
	Target     *Target `json:"target,omitempty"`
	Size       *int    `json:"size,omitempty"`
	Added      int     `json:"addedCount,omitempty"`
	Modified   int     `json:"modifiedCount,omitempty"`
	Removed    int     `json:"removedCount,omitempty"`
	Sample     any     `json:"sample,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	Error      *Error  `json:"error,omitempty"`

	// service_mutation
	Op     string `json:"op,omitempty"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`

	// session_boundary
	PriorOpCount int `json:"priorOpCount,omitempty"`

	Detail map[string]any `json:"detail,omitempty"`
}

// Rules explains a rules decision.
type Rules struct {
	Engine               string            `json:"engine"` // firestore | rtdb | storage
	MatchedPath          string            `json:"matchedPath,omitempty"`
	RuleIndex            *int              `json:"ruleIndex,omitempty"`
	Operations           []string          `json:"operations,omitempty"`
	Line                 int               `json:"line,omitempty"`
	Column               int               `json:"column,omitempty"`
	Condition            string            `json:"condition,omitempty"`
	PathVariableBindings map[string]string `json:"pathVariableBindings,omitempty"`
	Reason               string            `json:"reason,omitempty"`
	ErrorCode            string            `json:"errorCode,omitempty"`
	// Explanation is the engine's full explanation (for Firestore and
	// Storage a sim.Case: every evaluated rule with its expression trace).
	Explanation any `json:"explanation,omitempty"`
}

// Request is what the client asked to write or query.
type Request struct {
	Data         any `json:"data,omitempty"`
	ResourceData any `json:"resourceData,omitempty"`
	Query        any `json:"query,omitempty"`
}

// Resource is a document or object before or after an operation.
type Resource struct {
	Data   any  `json:"data"`
	Exists bool `json:"exists"`
}

// TriggeredBy names the write that caused a listener delivery.
type TriggeredBy struct {
	Method string `json:"method"`
	Path   string `json:"path,omitempty"`
}

// Replay holds what a replay needs to reproduce a commit bit for bit.
type Replay struct {
	RequestTime *time.Time `json:"requestTime,omitempty"`
	AutoID      string     `json:"autoId,omitempty"`
	Sentinels   []Sentinel `json:"sentinels,omitempty"`
}

// Sentinel is a server-side transform used by a write.
type Sentinel struct {
	Field string `json:"field"` // dotted path, e.g. a.b
	Kind  string `json:"kind"`  // serverTimestamp | increment | maximum | minimum | arrayUnion | arrayRemove | delete
}

// Target is what a listener watches.
type Target struct {
	Kind  string `json:"kind"` // doc | query | path
	Path  string `json:"path,omitempty"`
	Query any    `json:"query,omitempty"`
}

// Error describes a failure.
type Error struct {
	Code    string   `json:"code,omitempty"`
	Message string   `json:"message"`
	Reasons []string `json:"reasons,omitempty"`
}
