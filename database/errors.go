package database

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/errcode"
)

// Sentinel errors; engine errors wrap one of them (errors.Is). Each kind
// has its canonical code (errcode.Of reads it through any wrapping), which
// both transports turn into their own words: the REST status and the
// websocket's status string.
var (
	// ErrPermissionDenied: the rules (or their absence) deny the request.
	ErrPermissionDenied error = &kind{"permission denied", errcode.PermissionDenied}
	// ErrInvalidPath: a path has an illegal key or is too deep.
	ErrInvalidPath error = &kind{"invalid path", errcode.InvalidArgument}
	// ErrInvalidData: a value can't be stored (NaN, a bad key, a bad
	// server value or priority, too large).
	ErrInvalidData error = &kind{"invalid data", errcode.InvalidArgument}
	// ErrInvalidQuery: query parameters that don't form a query.
	ErrInvalidQuery error = &kind{"invalid query", errcode.InvalidArgument}
	// ErrIndexNotDefined: a REST query orders by a child or by value that
	// the rules do not index with .indexOn (FAILED_PRECONDITION, as
	// Firestore's missing index).
	ErrIndexNotDefined error = &kind{"index not defined", errcode.FailedPrecondition}
	// ErrStale: a compare-and-set whose expected hash or ETag no longer
	// matches the stored value (ABORTED: run the transaction again).
	ErrStale error = &kind{"datastale", errcode.Aborted}
	// ErrTooBig: a value over the size limits.
	ErrTooBig error = &kind{"too big", errcode.ResourceExhausted}
	// ErrClosed: the connection or database is closed.
	ErrClosed error = &kind{"closed", errcode.Unavailable}
)

// kind is a sentinel error with its code.
type kind struct {
	text string
	code errcode.Code
}

func (k *kind) Error() string { return k.text }

// ErrorCode is the kind's canonical code.
func (k *kind) ErrorCode() errcode.Code { return k.code }

func errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Error is an engine error with a message for the client.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

// Stale is returned by a failed compare-and-set; Current is the stored
// value (export format) and ETag its tag, which REST returns with 412.
type Stale struct {
	Current any
	ETag    string
}

func (e *Stale) Error() string { return "datastale" }

// Unwrap returns ErrStale.
func (e *Stale) Unwrap() error { return ErrStale }

// Denied is a rules denial, carrying the decision's explanation.
type Denied struct {
	Path   string
	Op     string
	Reason string
	// Why are the failing sub-expressions with their values, e.g.
	// "auth.uid === $uid → 'bob' === 'alice' is false" (explain.Lines).
	Why []string
}

func (e *Denied) Error() string { return "Permission denied" }

// Message is what a client receives where the protocol carries a message
// (the REST error body, the websocket status data): production's wording
// first, so tools matching it still work, then why on the following lines
// (the failing sub-expressions, else the reason).
func (e *Denied) Message() string {
	why := e.Why
	if len(why) == 0 && e.Reason != "" {
		why = []string{e.Reason}
	}
	if len(why) == 0 {
		return "Permission denied"
	}
	return "Permission denied\n" + strings.Join(why, "\n")
}

// Unwrap returns ErrPermissionDenied.
func (e *Denied) Unwrap() error { return ErrPermissionDenied }
