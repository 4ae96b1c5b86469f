package database

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; engine errors wrap one of them (errors.Is).
var (
	// ErrPermissionDenied: the rules (or their absence) deny the request.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrInvalidPath: a path has an illegal key or is too deep.
	ErrInvalidPath = errors.New("invalid path")
	// ErrInvalidData: a value can't be stored (NaN, a bad key, a bad
	// server value or priority, too large).
	ErrInvalidData = errors.New("invalid data")
	// ErrInvalidQuery: query parameters that don't form a query.
	ErrInvalidQuery = errors.New("invalid query")
	// ErrIndexNotDefined: a REST query orders by a child or by value that
	// the rules do not index with .indexOn.
	ErrIndexNotDefined = errors.New("index not defined")
	// ErrStale: a compare-and-set whose expected hash or ETag no longer
	// matches the stored value.
	ErrStale = errors.New("datastale")
	// ErrTooBig: a value over the size limits.
	ErrTooBig = errors.New("too big")
	// ErrClosed: the connection or database is closed.
	ErrClosed = errors.New("closed")
)

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
