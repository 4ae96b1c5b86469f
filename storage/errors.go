package storage

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/pyric/pyric/errcode"
)

// Code classifies an engine error: a canonical code (package errcode).
// One mapping (HTTPStatus) turns it into the status GCS's JSON and XML
// APIs and the Firebase v0 API answer with, which is not Google's newer
// canonical mapping (a failed precondition is 412 there, not 400).
type Code = errcode.Code

// Codes of engine errors, under the names the engine's callers use.
const (
	Internal           = errcode.Internal
	InvalidArgument    = errcode.InvalidArgument    // malformed request: 400
	Unauthenticated    = errcode.Unauthenticated    // a credential that cannot be read: 401
	PermissionDenied   = errcode.PermissionDenied   // rules denied the request: 403
	NotFound           = errcode.NotFound           // no such object, bucket or upload: 404
	FailedPrecondition = errcode.FailedPrecondition // an if*Match condition failed: 412
	OutOfRange         = errcode.OutOfRange         // a Range outside the object: 416
	TooLarge           = errcode.ResourceExhausted  // beyond the engine's size limit: 413
	Cancelled          = errcode.Cancelled          // the upload session was cancelled: 499 → 404 on the wire
	Conflict           = errcode.Aborted            // the upload session is already finalized: 409
	DataLoss           = errcode.DataLoss           // the stored bytes are damaged: 410
)

// Error is the engine's typed error.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// ErrorCode is the error's code (errcode.Of reads it).
func (e *Error) ErrorCode() errcode.Code { return e.Code }

// Is makes errors.Is(err, ErrNotFound) and friends match by code.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code && t.Message == ""
	}
	return false
}

// Sentinels for errors.Is: they match any Error with their code.
var (
	ErrInvalidArgument    = &Error{Code: InvalidArgument}
	ErrUnauthenticated    = &Error{Code: Unauthenticated}
	ErrPermissionDenied   = &Error{Code: PermissionDenied}
	ErrNotFound           = &Error{Code: NotFound}
	ErrFailedPrecondition = &Error{Code: FailedPrecondition}
	ErrOutOfRange         = &Error{Code: OutOfRange}
	ErrTooLarge           = &Error{Code: TooLarge}
	ErrCancelled          = &Error{Code: Cancelled}
	ErrDataLoss           = &Error{Code: DataLoss}
)

func errorf(c Code, format string, args ...any) error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

func objectNotFound(bucket, name string) error {
	return errorf(NotFound, "No such object: %s/%s", bucket, name)
}

// CodeOf returns the code of err (Internal for errors the engine did not
// classify).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// HTTPStatus is the status production answers an error with. A client
// mistake is never a 5xx: Google's clients retry 5xx for minutes.
func HTTPStatus(err error) int {
	switch c := CodeOf(err); c {
	case Cancelled:
		return http.StatusNotFound
	case FailedPrecondition:
		return http.StatusPreconditionFailed
	case OutOfRange:
		return http.StatusRequestedRangeNotSatisfiable
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case DataLoss:
		// Not a 5xx, which Google's clients retry for minutes: the
		// bytes stay damaged until someone replaces them.
		return http.StatusGone
	default:
		// 400, 401, 403, 404, 409 and 500: Google's canonical mapping.
		return c.HTTPStatus()
	}
}

// Reason is the GCS error envelope's errors[].reason for err.
func Reason(err error) string {
	switch CodeOf(err) {
	case InvalidArgument:
		return "invalid"
	case Unauthenticated:
		return "required"
	case PermissionDenied:
		return "forbidden"
	case NotFound, Cancelled:
		return "notFound"
	case FailedPrecondition:
		return "conditionNotMet"
	case OutOfRange:
		return "requestedRangeNotSatisfiable"
	case TooLarge:
		return "uploadTooLarge"
	case Conflict:
		return "conflict"
	case DataLoss:
		return "dataLoss"
	default:
		return "backendError"
	}
}
