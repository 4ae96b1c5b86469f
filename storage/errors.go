package storage

import (
	"errors"
	"fmt"
	"net/http"
)

// Code classifies an engine error; one mapping (HTTPStatus) turns it into
// the status every transport answers with.
type Code int

// Codes of engine errors.
const (
	Internal           Code = iota
	InvalidArgument         // malformed request: 400
	Unauthenticated         // a credential that cannot be read: 401
	PermissionDenied        // rules denied the request: 403
	NotFound                // no such object, bucket or upload: 404
	FailedPrecondition      // an if*Match condition failed: 412
	OutOfRange              // a Range outside the object: 416
	TooLarge                // beyond the engine's size limit: 413
	Cancelled               // the upload session was cancelled: 499 → 404 on the wire
	Conflict                // the upload session is already finalized: 409
	DataLoss                // the stored bytes are damaged: 410
)

// Error is the engine's typed error.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

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
	switch CodeOf(err) {
	case InvalidArgument:
		return http.StatusBadRequest
	case Unauthenticated:
		return http.StatusUnauthorized
	case PermissionDenied:
		return http.StatusForbidden
	case NotFound, Cancelled:
		return http.StatusNotFound
	case FailedPrecondition:
		return http.StatusPreconditionFailed
	case OutOfRange:
		return http.StatusRequestedRangeNotSatisfiable
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case Conflict:
		return http.StatusConflict
	case DataLoss:
		// Not a 5xx, which Google's clients retry for minutes: the
		// bytes stay damaged until someone replaces them.
		return http.StatusGone
	default:
		return http.StatusInternalServerError
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
