package firestore

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/firestore/fsvalue"
)

// The sentinel errors of the engine, defined by fsvalue (the layers below
// return them too). Every error the engine returns wraps exactly one of
// them (test with errors.Is) and carries a message written for a person
// that names the offending field, path or value. Code maps them to gRPC
// status codes; wire adapters call it and nothing else.
var (
	ErrInvalidArgument    = fsvalue.ErrInvalidArgument
	ErrNotFound           = fsvalue.ErrNotFound
	ErrAlreadyExists      = fsvalue.ErrAlreadyExists
	ErrFailedPrecondition = fsvalue.ErrFailedPrecondition
	ErrAborted            = fsvalue.ErrAborted
	ErrPermissionDenied   = fsvalue.ErrPermissionDenied
	ErrDeadlineExceeded   = fsvalue.ErrDeadlineExceeded
	ErrUnimplemented      = fsvalue.ErrUnimplemented
	ErrUnavailable        = fsvalue.ErrUnavailable
	ErrResourceExhausted  = fsvalue.ErrResourceExhausted
	ErrInternal           = fsvalue.ErrInternal
)

// Error is an engine error: a sentinel kind plus the precise message the
// client sees; for ErrPermissionDenied its Detail is the *Denial.
type Error = fsvalue.Error

// Denial describes a rules denial: which request was denied and why.
type Denial struct {
	Method   Method
	Path     string
	Decision AuthzDecision
}

// PermissionDeniedMessage is production's message for every rules denial.
const PermissionDeniedMessage = "Missing or insufficient permissions."

func denied(m Method, path string, d AuthzDecision) error {
	return &Error{Kind: ErrPermissionDenied, Msg: PermissionDeniedMessage,
		Detail: &Denial{Method: m, Path: path, Decision: d}}
}

// DenialOf returns the denial carried by err, if any.
func DenialOf(err error) (*Denial, bool) {
	var e *Error
	if errors.As(err, &e) {
		if d, ok := e.Detail.(*Denial); ok {
			return d, true
		}
	}
	return nil, false
}

// Code maps an engine error to its gRPC status code. It is the one mapping
// every transport uses (errcode.Of): nil maps to OK, context errors to
// CANCELLED and DEADLINE_EXCEEDED, and anything unrecognized to INTERNAL.
func Code(err error) codes.Code { return errcode.Of(err).GRPC() }

// Status converts err to a gRPC status with Code(err) and err's message.
func Status(err error) *status.Status {
	if err == nil {
		return status.New(codes.OK, "")
	}
	return status.New(Code(err), err.Error())
}
