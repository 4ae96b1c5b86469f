// Package event is the one stream every operation of every service flows
// into: engines emit, and the Studio, capture/verify, MCP and logs
// subscribe. This file is the schema, the one place that says what each
// kind of event carries.
//
// An Event is a header (sequence number, time, kind, service, actor,
// identity, method, path, origin, group, error) plus exactly one payload,
// chosen by Kind:
//
//	KindRequest   *Request   a request was decided: verdict, the deciding
//	                         rule, the trace, what the rules saw
//	KindCommit    *Commit    a document changed: before/after, sentinels,
//	                         request time
//	KindListener  *Listener  a listener attached, delivered, was
//	                         suppressed, errored, detached
//	KindMutation  *Mutation  a service's own state changed (Auth users;
//	                         RTDB, Storage, Messaging, AI records)
//	KindBoundary  *Boundary  the session was reset or restored
//	KindInvocation *Invocation a Cloud Function ran: its trigger, the
//	                         event that caused it, duration, outcome, logs
//	KindGap       *Gap       a subscriber missed events (never in history)
//
// The JSON encoding is stable and versioned (Schema): payload fields are
// flattened into the event object next to the header, with names unique
// across payloads, so a consumer reads e.g. {"kind":"request",
// "method":"create","path":"posts/p1","identity":{"uid":"alice"},
// "verdict":"deny","rule":{"line":6,...},"trace":[...]}.
package event

import (
	"time"

	"github.com/pyric/pyric/identity"
)

// Schema names this encoding; it changes when a field changes meaning.
const Schema = "pyric.event.v1"

// Kind is the closed set of event kinds.
type Kind string

// Kinds of event.
const (
	KindRequest  Kind = "request"
	KindCommit   Kind = "commit"
	KindListener Kind = "listener"
	KindMutation Kind = "mutation"
	KindBoundary Kind = "boundary"
	KindGap      Kind = "gap"
	// KindInvocation is one run of one of the app's Cloud Functions.
	KindInvocation Kind = "invocation"
)

// Verdict is how a request was decided.
type Verdict string

// Verdicts.
const (
	Allow       Verdict = "allow"       // the rules allowed it
	Deny        Verdict = "deny"        // the rules denied it
	Bypassed    Verdict = "bypassed"    // admin: rules were not consulted
	Unsupported Verdict = "unsupported" // the rules engine met a construct it cannot decide
	Error       Verdict = "error"       // the request failed before or besides the rules
)

// Origin says what issued a request.
type Origin string

// Origins.
const (
	OriginClient      Origin = "client"      // a single call of an app's client
	OriginListener    Origin = "listener"    // a listen/watch target
	OriginTransaction Origin = "transaction" // inside a transaction
	OriginBatch       Origin = "batch"       // inside a batch write
	OriginAdmin       Origin = "admin"       // the admin plane
)

// ActorKind says which tool acted.
type ActorKind = identity.ActorKind

// Actors.
const (
	ActorApp    = identity.App    // the developer's app (or its tests) through a client
	ActorStudio = identity.Studio // the Studio
	ActorAgent  = identity.Agent  // a coding agent through MCP
	ActorSystem = identity.System // pyric itself (reset, restore, onDisconnect)
)

// Actor is who drove the operation, independent of the identity it ran as.
type Actor struct {
	Kind ActorKind `json:"kind"`
	Name string    `json:"name,omitempty"` // the agent's name
	// Invocation is the function invocation (Invocation.InvocationID)
	// whose code made the operation; that invocation's event lists the
	// writes in Invocation.Writes.
	Invocation string `json:"invocation,omitempty"`
}

// Lens is the identity an operation was judged as.
type Lens string

// Lenses.
const (
	LensAdmin           Lens = "admin"           // bypasses rules
	LensUser            Lens = "user"            // a signed-in user (uid and token claims)
	LensUnauthenticated Lens = "unauthenticated" // no credential
)

// Identity is the auth lens of an event.
type Identity struct {
	Lens  Lens           `json:"lens"`
	UID   string         `json:"uid,omitempty"`
	Admin bool           `json:"admin,omitempty"`
	Token map[string]any `json:"token,omitempty"` // the token's claims as the rules see them
}

// Who sets the event's identity lens and actor from the identity an
// engine was called with.
func (e *Event) Who(id identity.Identity) {
	e.Identity = IdentityOf(id)
	e.Actor = Actor{Kind: id.Actor.Kind, Name: id.Actor.Name, Invocation: id.Actor.Invocation}
}

// IdentityOf converts the engines' identity to its lens.
func IdentityOf(id identity.Identity) Identity {
	switch id.Kind {
	case identity.Admin:
		return Identity{Lens: LensAdmin, Admin: true}
	case identity.User:
		return Identity{Lens: LensUser, UID: id.UID, Token: id.Token}
	}
	return Identity{Lens: LensUnauthenticated}
}

// Group ties the events of one batch or transaction together.
type Group struct {
	ID   string `json:"id"`
	Kind Origin `json:"kind"` // OriginBatch or OriginTransaction
}

// Event is one entry of the stream: the header and the payload its Kind
// names (the other payload pointers are nil).
type Event struct {
	// Seq is the bus's sequence number, from 1, strictly increasing.
	Seq uint64 `json:"seq"`
	// ID is "evt-<Seq>", the id Studio and MCP use.
	ID string `json:"id"`
	// At is when the event was emitted (the sandbox clock).
	At       time.Time `json:"at"`
	Kind     Kind      `json:"kind"`
	Service  string    `json:"service"`
	Actor    Actor     `json:"actor"`
	Identity Identity  `json:"identity"`
	Method   string    `json:"method,omitempty"`
	Path     string    `json:"path,omitempty"`
	Origin   Origin    `json:"origin,omitempty"`
	Group    *Group    `json:"group,omitempty"`
	Err      *Failure  `json:"error,omitempty"`

	*Request    `json:",omitempty"`
	*Commit     `json:",omitempty"`
	*Listener   `json:",omitempty"`
	*Mutation   `json:",omitempty"`
	*Boundary   `json:",omitempty"`
	*Gap        `json:",omitempty"`
	*Invocation `json:",omitempty"`

	// Held is the event's key in the sandbox's outbox when it was held
	// there with its commit (service.Outbox), for the consumer to take;
	// it is the process's own and never encoded.
	Held string `json:"-"`
	// Records names the records of its service that the change wrote, in
	// the service's own form, when the service says so: a token for its
	// service.Records (Auth's mutations touch an account and, with it,
	// codes and outbox entries its event does not name). Like Held it is
	// the process's own and never encoded.
	Records string `json:"-"`
}

// OutboxForm is implemented by a Mutation's Current whose JSON leaves out
// what a consumer of the event acts on (a Pub/Sub publish's messages):
// OutboxForm is the value a durable outbox (service.Outbox) keeps in its
// place, JSON-encoded, so that a consumer reading the event back after a
// crash has it all. The type's package says how to read it back.
type OutboxForm interface {
	OutboxForm() any
}

// Failure is an error a request or a listener ended with.
type Failure struct {
	Code    string `json:"code"`    // the gRPC code name or HTTP status text
	Message string `json:"message"` // what the client received
}

// Request is the payload of KindRequest: one decided request.
type Request struct {
	Verdict    Verdict `json:"verdict"`
	DurationMs float64 `json:"durationMs"`
	// Rule is the rule that decided (the allowing rule, or the first
	// denying one); nil when no rule did (no rules, no matching allow,
	// admin).
	Rule *Rule `json:"rule,omitempty"`
	// Trace is the deciding rule's sub-expression trace in evaluation
	// order (complete for denials).
	Trace []Step `json:"trace,omitempty"`
	// Decision is the whole explanation; nil when rules were bypassed.
	Decision *Explanation `json:"decision,omitempty"`
	// Seen is what the rules saw.
	Seen *Seen `json:"seen,omitempty"`
}

// Rule identifies one rule of a ruleset.
type Rule struct {
	Index      int      `json:"index"` // the allow's index within its match block
	Operations []string `json:"operations,omitempty"`
	Line       int      `json:"line,omitempty"`
	Column     int      `json:"column,omitempty"`
	MatchPath  string   `json:"matchPath,omitempty"`
	Condition  string   `json:"condition,omitempty"`
}

// Step is one evaluated (or short-circuit skipped) sub-expression.
type Step struct {
	Text    string `json:"text"`
	Value   string `json:"value,omitempty"` // rendered in rules syntax
	Error   string `json:"error,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Depth   int    `json:"depth"`
	Skipped bool   `json:"skipped,omitempty"`
}

// Explanation is a rules engine's whole explanation of a verdict, as an
// event carries it (Request.Decision).
type Explanation struct {
	Engine string `json:"engine"` // firestore | storage | database
	// Bindings are the path variables of the deciding rule's match block
	// (e.g. {"uid": "'alice'"}), values in rules syntax.
	Bindings map[string]string `json:"bindings,omitempty"`
	// Reason is the one-line explanation in the official emulator's words
	// (e.g. "false for 'create' @ L6").
	Reason string `json:"reason,omitempty"`
	// Evaluated lists every rule evaluated, in order, with its verdict.
	Evaluated []EvaluatedRule `json:"evaluated,omitempty"`
	// Failing are the false or erroring leaves of the deciding rule's
	// condition: what to change for the request to pass.
	Failing []Step   `json:"failing,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Expressions is the number of expressions evaluated (the budget
	// used); Lookups the distinct documents read by get()/exists().
	Expressions int `json:"expressions,omitempty"`
	Lookups     int `json:"lookups,omitempty"`
}

// EvaluatedRule is a rule with its verdict and trace.
type EvaluatedRule struct {
	Rule
	Verdict string `json:"verdict"` // ALLOW | DENY | ERROR | SKIPPED as the simulator says
	Message string `json:"message,omitempty"`
	Trace   []Step `json:"trace,omitempty"`
}

// Seen is what the rules saw of a request.
type Seen struct {
	// Data is the request's data as the caller sent it
	// (request.resource.data before transforms; sentinels as markers).
	Data any `json:"data,omitempty"`
	// Before is the resource before the request.
	Before *Resource `json:"resource,omitempty"`
	// Query is the list request's query, as the rules see it.
	Query any `json:"query,omitempty"`
	// Updates is a multi-location write's values by path relative to the
	// request's path (a Realtime Database update), as the caller sent
	// them; Data is unset then.
	Updates map[string]any `json:"updates,omitempty"`
	// After is request.resource as the rules saw it: the document after
	// the write, transforms applied (create and update).
	After *Resource `json:"requestResource,omitempty"`
	// Lookups are the documents the rules read (get, exists, getAfter,
	// existsAfter) with what each read returned, so a re-run decides
	// against exactly the state the request was decided on.
	Lookups []Lookup `json:"lookups,omitempty"`
	// Time is request.time.
	Time time.Time `json:"time,omitzero"`
}

// Lookup is one document the rules read while deciding a request.
type Lookup struct {
	// Function is "get" for get()/exists() (committed state) or "getAfter"
	// for getAfter()/existsAfter() (the state after the batch).
	Function string `json:"function"`
	Path     string `json:"path"`
	Exists   bool   `json:"exists"`
	Data     any    `json:"data,omitempty"`
}

// Resource is a document or object at one moment.
type Resource struct {
	Exists bool `json:"exists"`
	Data   any  `json:"data,omitempty"`
}

// Commit is the payload of KindCommit: one document's change.
type Commit struct {
	RequestTime time.Time `json:"requestTime"`
	// Before and After are the document's fields (nil: absent).
	Before any `json:"before"`
	After  any `json:"after"`
	// Written is what the write carried, before transforms.
	Written   any        `json:"written,omitempty"`
	Sentinels []Sentinel `json:"sentinels,omitempty"`
	// AutoID is the id the server minted for this document, if any.
	AutoID string `json:"autoId,omitempty"`
	// Database is the database the change is in: the Firestore database
	// id ("(default)") or the Realtime Database instance (namespace).
	Database string `json:"database,omitempty"`
	// CreateTime and UpdateTime are a Firestore document's times after
	// the change (zero when it was deleted); BeforeCreateTime and
	// BeforeUpdateTime before it (zero when it did not exist). Triggers
	// send them in their payloads.
	CreateTime       time.Time `json:"createTime,omitzero"`
	UpdateTime       time.Time `json:"updateTime,omitzero"`
	BeforeCreateTime time.Time `json:"beforeCreateTime,omitzero"`
	BeforeUpdateTime time.Time `json:"beforeUpdateTime,omitzero"`
	// Scope is a Realtime Database location enclosing the written one
	// whose whole value a consumer asked for (a Cloud Function watching
	// it); nil otherwise.
	Scope *Scope `json:"scope,omitempty"`
	// Final says After is the record as the whole commit leaves it (no
	// later write of the commit changed it again): session capture then
	// takes the record from the event (service.EventRecords). Like
	// Event.Held it is the process's own, never encoded.
	Final bool `json:"-"`
}

// Scope is an enclosing location of a Realtime Database write with its
// whole value before and after the commit. The events of one commit's
// writes under it share it.
type Scope struct {
	Path   string `json:"path"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	// Writes are the commit's written locations under Path, in order.
	Writes []string `json:"writes"`
}

// SentinelKind is a server-side transform.
type SentinelKind string

// Sentinel kinds.
const (
	ServerTimestamp SentinelKind = "serverTimestamp"
	Increment       SentinelKind = "increment"
	Maximum         SentinelKind = "maximum"
	Minimum         SentinelKind = "minimum"
	ArrayUnion      SentinelKind = "arrayUnion"
	ArrayRemove     SentinelKind = "arrayRemove"
	DeleteField     SentinelKind = "delete"
)

// Sentinel is a server-side transform used by a write.
type Sentinel struct {
	Field string       `json:"field"` // dotted path, e.g. a.b
	Kind  SentinelKind `json:"kind"`
}

// Phase is a listener's lifecycle step.
type Phase string

// Listener phases.
const (
	Attach   Phase = "attach"
	Deliver  Phase = "deliver"
	Suppress Phase = "suppress" // a change touched the target but changed nothing it shows
	Detach   Phase = "detach"
	Errored  Phase = "error"
)

// Listener is the payload of KindListener.
type Listener struct {
	Phase      Phase   `json:"phase"`
	ListenerID string  `json:"listenerId"`
	Target     *Target `json:"target,omitempty"`
	// Size is the number of results delivered (Deliver).
	Size     int `json:"size,omitempty"`
	Added    int `json:"addedCount,omitempty"`
	Modified int `json:"modifiedCount,omitempty"`
	Removed  int `json:"removedCount,omitempty"`
	// Trigger names the write that caused a delivery or suppression.
	Trigger *Trigger `json:"trigger,omitempty"`
}

// Target is what a listener watches.
type Target struct {
	Kind  string `json:"kind"` // doc | query | path
	Path  string `json:"path,omitempty"`
	Query any    `json:"query,omitempty"`
}

// Trigger names the write behind a listener event.
type Trigger struct {
	Method string `json:"method"`
	Path   string `json:"path,omitempty"`
}

// Mutation is the payload of KindMutation: a change to a service's own
// records (an Auth user, an RTDB node, a Storage object, a message).
type Mutation struct {
	Op      string `json:"op"` // e.g. user_create, sign_in, object_put
	Project string `json:"project,omitempty"`
	Tenant  string `json:"tenant,omitempty"`
	// Previous and Current are the record before and after (redacted of
	// secrets); nil when absent.
	Previous any `json:"previous,omitempty"`
	Current  any `json:"current,omitempty"`
	// Provider is the sign-in provider of an Auth change.
	Provider string `json:"provider,omitempty"`
	// Note qualifies the change (import, batch, upgrade, password_reset).
	Note string `json:"note,omitempty"`
}

// BoundaryKind says how the session was cut.
type BoundaryKind string

// Boundaries.
const (
	Reset   BoundaryKind = "reset"
	Restore BoundaryKind = "restore"
)

// Boundary is the payload of KindBoundary.
type Boundary struct {
	Boundary BoundaryKind `json:"boundary"`
	// PriorEvents is how many events the history held before the cut.
	PriorEvents int `json:"priorEvents"`
}

// Invocation is the payload of KindInvocation: one run of a function.
// The event's Path is the function's id and Method its trigger kind
// (https, callable, event, blocking, task, schedule).
type Invocation struct {
	Function string `json:"function"`
	Codebase string `json:"codebase,omitempty"`
	// TriggerType is the event type of an event function (e.g.
	// google.cloud.firestore.document.v1.created) or the trigger kind.
	TriggerType string `json:"triggerType"`
	// CauseEventID is the id of the event whose write caused the run.
	CauseEventID string `json:"causeEventId,omitempty"`
	InvocationID string `json:"invocationId"`
	// InvocationMs is how long it ran, waiting for a worker included.
	InvocationMs float64 `json:"invocationMs"`
	// Outcome is ok, error (the function threw or answered 5xx),
	// timeout, crash (its worker ended) or cancelled.
	Outcome string `json:"outcome"`
	// Writes are the events (ids) of the writes the function made
	// through the Admin SDK while it ran (commits and service
	// mutations, whose Actor.Invocation is InvocationID), in order; the
	// first MaxInvocationWrites.
	Writes []string `json:"writes,omitempty"`
	// MoreWrites counts the writes past MaxInvocationWrites.
	MoreWrites int `json:"moreWrites,omitempty"`
	// HTTPStatus is the status an HTTP function answered.
	HTTPStatus int `json:"httpStatus,omitempty"`
	// Logs are the first lines the invocation logged.
	Logs []LogLine `json:"logs,omitempty"`
}

// MaxInvocationWrites bounds Invocation.Writes.
const MaxInvocationWrites = 100

// LogLine is one console or logger line of an invocation.
type LogLine struct {
	Severity string `json:"severity"`
	Text     string `json:"text"`
}

// Gap is the payload of KindGap, delivered to a subscriber in place of
// the events it was too slow to receive.
type Gap struct {
	Missed uint64 `json:"missed"`
}
