package fsvalue

import (
	"errors"
	"fmt"
)

// The error kinds of the Firestore engine. Every error the engine and its
// layers return wraps exactly one of them (test with errors.Is) and carries
// a message written for a person that names the offending field, path or
// value. firestore.Code maps them to gRPC status codes.
var (
	ErrInvalidArgument    = errors.New("invalid argument")
	ErrNotFound           = errors.New("not found")
	ErrAlreadyExists      = errors.New("already exists")
	ErrFailedPrecondition = errors.New("failed precondition")
	ErrAborted            = errors.New("aborted")
	ErrPermissionDenied   = errors.New("permission denied")
	ErrDeadlineExceeded   = errors.New("deadline exceeded")
	ErrUnimplemented      = errors.New("unimplemented")
	ErrUnavailable        = errors.New("unavailable")
	ErrResourceExhausted  = errors.New("resource exhausted")
	ErrInternal           = errors.New("internal error")
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
