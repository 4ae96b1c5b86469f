// Package errcode holds the google.rpc canonical error codes that every
// engine classifies its errors by, with the one mapping from a code to its
// gRPC code, its HTTP status in Google's JSON APIs, and its canonical name
// ("NOT_FOUND"). It is a leaf: engines and wire adapters import it, it
// imports only the standard library and grpc's codes.
//
// An engine keeps its own error type and production's wording; the type
// says its code by wrapping a Code (a Code is an error, so it serves as
// the sentinel kind: errors.Is(err, errcode.NotFound)) or by implementing
// Coder. Of reads the code of any error, and transports call it and
// nothing else.
package errcode

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
)

// Code is a google.rpc.Code; its values are the gRPC codes'.
type Code int32

// The canonical codes (google/rpc/code.proto).
const (
	OK                 Code = 0
	Cancelled          Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

var names = [...]string{
	OK: "OK", Cancelled: "CANCELLED", Unknown: "UNKNOWN", InvalidArgument: "INVALID_ARGUMENT",
	DeadlineExceeded: "DEADLINE_EXCEEDED", NotFound: "NOT_FOUND", AlreadyExists: "ALREADY_EXISTS",
	PermissionDenied: "PERMISSION_DENIED", ResourceExhausted: "RESOURCE_EXHAUSTED",
	FailedPrecondition: "FAILED_PRECONDITION", Aborted: "ABORTED", OutOfRange: "OUT_OF_RANGE",
	Unimplemented: "UNIMPLEMENTED", Internal: "INTERNAL", Unavailable: "UNAVAILABLE",
	DataLoss: "DATA_LOSS", Unauthenticated: "UNAUTHENTICATED",
}

// String is the canonical name, the "status" of Google's JSON error
// envelope: "NOT_FOUND", "CANCELLED" (google.rpc's spelling, not gRPC-Go's
// "Canceled"). A value outside the table is "CODE(n)".
func (c Code) String() string {
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return "CODE(" + strconv.Itoa(int(c)) + ")"
}

// Error makes a Code usable as a sentinel error kind; its text is the name
// in lower case words ("not found").
func (c Code) Error() string {
	return strings.ReplaceAll(strings.ToLower(c.String()), "_", " ")
}

// Parse returns the code named name ("NOT_FOUND").
func Parse(name string) (Code, bool) {
	for c, n := range names {
		if n == name {
			return Code(c), true
		}
	}
	return Unknown, false
}

// GRPC is the gRPC code of c (the same number).
func (c Code) GRPC() codes.Code { return codes.Code(c) }

// FromGRPC is the code of a gRPC code.
func FromGRPC(c codes.Code) Code { return Code(c) }

// HTTPStatus is the HTTP status Google's JSON APIs answer c with (the
// mapping google/rpc/code.proto documents). APIs older than that mapping
// (the RTDB REST API, GCS's JSON and XML APIs) keep tables of their own in
// their engines.
func (c Code) HTTPStatus() int {
	switch c {
	case OK:
		return http.StatusOK
	case Cancelled:
		return 499 // Client Closed Request
	case InvalidArgument, FailedPrecondition, OutOfRange:
		return http.StatusBadRequest
	case Unauthenticated:
		return http.StatusUnauthorized
	case PermissionDenied:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case AlreadyExists, Aborted:
		return http.StatusConflict
	case ResourceExhausted:
		return http.StatusTooManyRequests
	case Unimplemented:
		return http.StatusNotImplemented
	case Unavailable:
		return http.StatusServiceUnavailable
	case DeadlineExceeded:
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

// FromHTTP is the code an HTTP error status stands for: the inverse of
// HTTPStatus where it is one to one (409 is Aborted, 400
// InvalidArgument), FailedPrecondition for any other 4xx and Internal for
// any other status.
func FromHTTP(status int) Code {
	switch status {
	case http.StatusOK:
		return OK
	case 499:
		return Cancelled
	case http.StatusBadRequest:
		return InvalidArgument
	case http.StatusUnauthorized:
		return Unauthenticated
	case http.StatusForbidden:
		return PermissionDenied
	case http.StatusNotFound:
		return NotFound
	case http.StatusConflict:
		return Aborted
	case http.StatusTooManyRequests:
		return ResourceExhausted
	case http.StatusNotImplemented:
		return Unimplemented
	case http.StatusServiceUnavailable:
		return Unavailable
	case http.StatusGatewayTimeout:
		return DeadlineExceeded
	}
	if status >= 400 && status < 500 {
		return FailedPrecondition
	}
	return Internal
}

// Coder is an error that knows its code without wrapping a Code (an
// engine error whose kinds are finer than codes).
type Coder interface {
	error
	ErrorCode() Code
}

// Of is the code of err: OK for nil; the code a Coder in err's chain
// reports, else the Code err wraps; DeadlineExceeded and Cancelled for the
// context errors; Internal for anything unclassified (an engine's own
// failure, never the client's).
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var cd Coder
	if errors.As(err, &cd) {
		return cd.ErrorCode()
	}
	var c Code
	switch {
	case errors.As(err, &c):
		return c
	case errors.Is(err, context.DeadlineExceeded):
		return DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return Cancelled
	}
	return Internal
}
