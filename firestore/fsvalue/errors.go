package fsvalue

import (
	"fmt"

	"github.com/pyric/pyric/errcode"
)

// The error kinds of the Firestore engine: the canonical codes (package
// errcode). Every error the engine and its layers return wraps exactly one
// of them (test with errors.Is) and carries a message written for a
// person that names the offending field, path or value; errcode.Of (and
// firestore.Code) read the kind back.
var (
	ErrInvalidArgument    error = errcode.InvalidArgument
	ErrNotFound           error = errcode.NotFound
	ErrAlreadyExists      error = errcode.AlreadyExists
	ErrFailedPrecondition error = errcode.FailedPrecondition
	ErrAborted            error = errcode.Aborted
	ErrPermissionDenied   error = errcode.PermissionDenied
	ErrDeadlineExceeded   error = errcode.DeadlineExceeded
	ErrUnimplemented      error = errcode.Unimplemented
	ErrUnavailable        error = errcode.Unavailable
	ErrResourceExhausted  error = errcode.ResourceExhausted
	ErrInternal           error = errcode.Internal
)

// Error is an engine error: a kind plus the precise message the client
// sees. errors.Is(err, ErrNotFound) works through wrapping.
type Error struct {
	Kind error  // one of the kinds above
	Msg  string // the client-visible message
	// Detail is what a layer above attaches for its own callers (the
	// engine's rules gate puts its *firestore.Denial here); nil otherwise.
	Detail any
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }

// Errorf returns an *Error of the kind with a formatted message.
func Errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
