package auth

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/errcode"
)

// Error is an Identity Toolkit error: the HTTP status, the optional
// google.rpc status name, and the message the SDKs map to error codes
// (EMAIL_EXISTS, "WEAK_PASSWORD : Password should be at least 6 characters").
type Error struct {
	HTTP    int    // HTTP status code
	Status  string // INVALID_ARGUMENT, PERMISSION_DENIED, … ("" for plain 400s, as the emulator sends)
	Message string // full message
	Reason  string // errors[0].reason
	Domain  string // errors[0].domain ("" omits it)
	// Details replaces the default one-element errors list when set.
	Details []ErrorDetail
	// cause is what an INTERNAL error wraps (errors.Is reaches it).
	cause error
}

// ErrorDetail is one element of the error envelope's "errors" list.
type ErrorDetail struct {
	Message      string `json:"message"`
	Domain       string `json:"domain,omitempty"`
	Reason       string `json:"reason,omitempty"`
	Location     string `json:"location,omitempty"`
	LocationType string `json:"locationType,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// ErrorCode is the error's canonical code: its Status, else the code its
// HTTP status stands for (the emulator's plain 400s are INVALID_ARGUMENT).
func (e *Error) ErrorCode() errcode.Code {
	if c, ok := errcode.Parse(e.Status); ok {
		return c
	}
	return errcode.FromHTTP(e.HTTP)
}

// Unwrap returns the underlying failure of an internal error.
func (e *Error) Unwrap() error { return e.cause }

// Code is the message up to " : " or "((" — the identifier the SDKs match.
func (e *Error) Code() string { return codeOf(e.Message) }

func codeOf(msg string) string {
	for _, sep := range []string{" : ", ":", " ((", "(("} {
		if i := strings.Index(msg, sep); i > 0 {
			msg = msg[:i]
		}
	}
	return strings.TrimSpace(msg)
}

// Is makes errors.Is(err, ErrEmailExists) match any error with that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.HTTP == e.HTTP && t.Code() == e.Code()
}

// ErrorDetails returns the "errors" list of the JSON envelope.
func (e *Error) ErrorDetails() []ErrorDetail {
	if e.Details != nil {
		return e.Details
	}
	return []ErrorDetail{{Message: e.Message, Reason: e.Reason, Domain: e.Domain}}
}

// badRequest is the emulator's plain 400 (no status field).
func badRequest(msg string) *Error {
	return &Error{HTTP: 400, Message: msg, Reason: "invalid", Domain: "global"}
}

// InvalidArgument is a 400 INVALID_ARGUMENT, used for malformed payloads.
func InvalidArgument(msg string) *Error {
	return &Error{HTTP: 400, Status: "INVALID_ARGUMENT", Message: msg, Reason: "invalid", Domain: "global"}
}

// NotImplemented is the emulator's 501 for features it does not model.
func NotImplemented(msg string) *Error {
	return &Error{HTTP: 501, Status: "NOT_IMPLEMENTED", Message: msg, Reason: "unimplemented"}
}

// NotFound is the emulator's 404 for unknown routes.
func NotFound() *Error {
	return &Error{HTTP: 404, Status: "NOT_FOUND", Message: "Not Found", Reason: "notFound"}
}

// PermissionDenied is a 403 (for example a missing API key).
func PermissionDenied(msg string) *Error {
	return &Error{HTTP: 403, Status: "PERMISSION_DENIED", Message: msg, Reason: "forbidden", Domain: "global"}
}

// Internal is a 500 INTERNAL.
func Internal(msg string) *Error {
	return &Error{HTTP: 500, Status: "INTERNAL", Message: msg, Reason: "INTERNAL"}
}

func assert(ok bool, msg string) error {
	if ok {
		return nil
	}
	return badRequest(msg)
}

// Sentinel errors, for errors.Is. The messages are the Identity Toolkit codes.
var (
	ErrEmailExists             = badRequest("EMAIL_EXISTS")
	ErrEmailNotFound           = badRequest("EMAIL_NOT_FOUND")
	ErrInvalidPassword         = badRequest("INVALID_PASSWORD")
	ErrInvalidLoginCredentials = badRequest("INVALID_LOGIN_CREDENTIALS")
	ErrWeakPassword            = badRequest(weakPassword)
	ErrUserDisabled            = badRequest("USER_DISABLED")
	ErrUserNotFound            = badRequest("USER_NOT_FOUND")
	ErrInvalidIDToken          = badRequest("INVALID_ID_TOKEN")
	ErrTokenExpired            = badRequest("TOKEN_EXPIRED")
	ErrMissingPassword         = badRequest("MISSING_PASSWORD")
	ErrMissingEmail            = badRequest("MISSING_EMAIL")
	ErrInvalidEmail            = badRequest("INVALID_EMAIL")
	ErrInvalidOOBCode          = badRequest("INVALID_OOB_CODE")
	ErrInvalidCustomToken      = badRequest("INVALID_CUSTOM_TOKEN")
	ErrInvalidRefreshToken     = badRequest("INVALID_REFRESH_TOKEN")
	ErrInvalidIDPResponse      = badRequest("INVALID_IDP_RESPONSE")
	ErrFederatedUserIDLinked   = badRequest("FEDERATED_USER_ID_ALREADY_LINKED")
	ErrOperationNotAllowed     = badRequest("OPERATION_NOT_ALLOWED")
	ErrTenantIDMismatch        = badRequest("TENANT_ID_MISMATCH")
	ErrInsufficientPermission  = badRequest("INSUFFICIENT_PERMISSION")
)

const weakPassword = "WEAK_PASSWORD : Password should be at least 6 characters"

func errorf(format string, args ...any) *Error { return badRequest(fmt.Sprintf(format, args...)) }
