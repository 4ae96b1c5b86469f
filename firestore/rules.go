package firestore

import (
	"context"
	"github.com/pyric/pyric/event"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/identity"
)

// Rules is the security-rules gate the engine consults for every client
// (non-admin) operation. The engine never evaluates rules itself; an
// adapter from rules/firestore implements this interface. Admin callers
// bypass it entirely.
//
// Authorize is called with the database lock held, so it must not call back
// into the Engine; it reads documents only through req.Get and req.GetAfter,
// which are valid only for the duration of the call.
type Rules interface {
	Authorize(ctx context.Context, req *AuthzRequest) AuthzDecision
}

// Method is the rules method a request is judged under.
type Method string

// Rules methods. A set is judged as create when the document does not exist
// and as update when it does.
const (
	MethodGet    Method = "get"
	MethodList   Method = "list"
	MethodCreate Method = "create"
	MethodUpdate Method = "update"
	MethodDelete Method = "delete"
)

// Verdict is the outcome of a rules decision: the verdict events carry,
// one type for every engine. A decision is Allow, Deny or Unsupported
// (the rules engine met a construct it does not model; the engine treats
// it as a denial but reports it distinctly).
type Verdict = event.Verdict

// The verdicts a decision has.
const (
	Deny        = event.Deny
	Allow       = event.Allow
	Unsupported = event.Unsupported
)

// AuthzDecision is what Rules.Authorize returns for an AuthzRequest: the
// engine's decision, as distinct from the rules language's own
// (rules/firestore.Decision, which Explanation carries).
type AuthzDecision struct {
	Verdict Verdict
	// Reason is one line for a person: why the request was allowed or denied.
	Reason string
	// Explanation is the rules engine's full explanation (for example a
	// rules/sim case with the evaluated rules and expression traces). It is
	// opaque to the engine, carried on denial errors and in events.
	Explanation any
	// seen is what the rules saw, recorded for the request event when
	// events are on (Engine.authorize).
	seen *seenRequest
}

// AuthzRequest is everything production's rules see for one request.
type AuthzRequest struct {
	Database DatabaseName
	Method   Method
	// Path is the document path relative to the database's documents root
	// ("users/alice"). For list it is the queried collection path
	// ("users", "users/alice/posts"); for a collection-group query it is
	// Query.Parent joined with the collection id, and Query.AllDescendants
	// is set (the rules engine matches it as parent/**/collectionId/{doc}).
	Path string
	Auth identity.Identity
	// Resource is the stored document (resource); nil when it does not exist
	// or for list.
	Resource *pb.Document
	// After is the document after the write (request.resource), with
	// transforms applied at Time; set for create and update, nil otherwise.
	After *pb.Document
	// Time is request.time; for writes it equals the commit time that
	// serverTimestamp transforms resolve to.
	Time time.Time
	// Query describes a list request's constraints (request.query and the
	// filters the rules engine uses to decide "rules are not filters").
	Query *QueryInfo
	// Get reads committed state for get()/exists(): the document at a path
	// relative to the documents root, nil when missing.
	Get Lookup
	// GetAfter reads the state after every write of the batch or
	// transaction (getAfter()/existsAfter()); nil for reads.
	GetAfter Lookup
	// Group is set when the request is one write of a batch or transaction.
	Group *Group
}

// Lookup reads one document by relative path; it returns (nil, nil) when the
// document does not exist and an ErrInvalidArgument error for a bad path.
type Lookup func(path string) (*pb.Document, error)

// QueryInfo describes a list request.
type QueryInfo struct {
	// Parent is the relative path of the parent document ("" for the root).
	Parent         string
	CollectionID   string
	AllDescendants bool
	// Where is the query's filter as sent (nil for none).
	Where   *pb.StructuredQuery_Filter
	OrderBy []*pb.StructuredQuery_Order
	Limit   *int32
	Offset  int32
	// Structured is the complete query as sent.
	Structured *pb.StructuredQuery
}

// Group identifies the batch or transaction a write belongs to.
type Group struct {
	ID   string
	Kind string // "batch" or "transaction"
}

// NoRules is the gate in force when no rules are loaded: it denies every
// client request and says why. Admin requests never reach it.
type NoRules struct{}

// NoRulesReason is the reason NoRules gives.
const NoRulesReason = "no Firestore security rules are loaded: every client request is denied (admin requests bypass rules); load firestore.rules to allow access"

// Authorize denies.
func (NoRules) Authorize(context.Context, *AuthzRequest) AuthzDecision {
	return AuthzDecision{Verdict: Deny, Reason: NoRulesReason}
}

// RulesFunc adapts a function to Rules.
type RulesFunc func(ctx context.Context, req *AuthzRequest) AuthzDecision

// Authorize calls f.
func (f RulesFunc) Authorize(ctx context.Context, req *AuthzRequest) AuthzDecision {
	return f(ctx, req)
}

// AllowAll allows every request; for tests and for explicitly open setups.
var AllowAll Rules = RulesFunc(func(context.Context, *AuthzRequest) AuthzDecision {
	return AuthzDecision{Verdict: Allow, Reason: "all requests allowed"}
})

// FakeRules is a test double: it decides with Decide (allow all when nil)
// and records every request it was asked about.
type FakeRules struct {
	Decide func(req *AuthzRequest) AuthzDecision

	mu       sync.Mutex
	requests []AuthzRequest
}

// Authorize records req and applies Decide.
func (f *FakeRules) Authorize(_ context.Context, req *AuthzRequest) AuthzDecision {
	f.mu.Lock()
	f.requests = append(f.requests, *req)
	f.mu.Unlock()
	if f.Decide == nil {
		return AuthzDecision{Verdict: Allow, Reason: "fake: allow"}
	}
	return f.Decide(req)
}

// Requests returns a copy of the recorded requests. Their Get/GetAfter
// lookups are no longer valid.
func (f *FakeRules) Requests() []AuthzRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]AuthzRequest(nil), f.requests...)
}

// Reset forgets the recorded requests.
func (f *FakeRules) Reset() {
	f.mu.Lock()
	f.requests = nil
	f.mu.Unlock()
}
