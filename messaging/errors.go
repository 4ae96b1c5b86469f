package messaging

import (
	"fmt"

	"github.com/pyric/pyric/errcode"
)

// The sentinel errors of the engine: canonical codes (package errcode).
// Every *Error wraps exactly one of them (test with errors.Is); Status and
// HTTP give the google.rpc code and the HTTP status production answers
// with.
var (
	ErrInvalidArgument   error = errcode.InvalidArgument
	ErrNotFound          error = errcode.NotFound
	ErrPermissionDenied  error = errcode.PermissionDenied
	ErrResourceExhausted error = errcode.ResourceExhausted
	ErrUnauthenticated   error = errcode.Unauthenticated
)

// FCM error codes (google.firebase.fcm.v1.FcmError.errorCode) the engine
// produces. The admin SDKs key their error predicates on these.
const (
	FcmInvalidArgument  = "INVALID_ARGUMENT"
	FcmUnregistered     = "UNREGISTERED"
	FcmSenderIDMismatch = "SENDER_ID_MISMATCH"
	FcmQuotaExceeded    = "QUOTA_EXCEEDED"
)

// FieldViolation is one google.rpc.BadRequest.FieldViolation.
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// Error is an engine error in the shape production reports it: a kind, the
// top-level message, the FcmError code (empty when production sends no
// FcmError detail, as for JSON syntax errors the API front end rejects),
// and the BadRequest field violations (nil when production sends none).
type Error struct {
	Kind    error
	Msg     string
	FcmCode string
	// BadRequest is true when the envelope carries a google.rpc.BadRequest
	// detail; Violations may still be empty (production's "message is too
	// big" carries an empty BadRequest).
	BadRequest bool
	Violations []FieldViolation
	// Debug is pyric's own explanation where production's text is fixed
	// and says less (a condition's parse error); the HTTP adapter sends it
	// as a google.rpc.DebugInfo detail, which the SDKs, picking details by
	// type, ignore. Empty when the message already says everything.
	Debug string
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the sentinel kind.
func (e *Error) Unwrap() error { return e.Kind }

// Status is the google.rpc status name of the error ("INVALID_ARGUMENT").
func (e *Error) Status() string { return errcode.Of(e).String() }

// HTTP is the HTTP status of the error.
func (e *Error) HTTP() int { return errcode.Of(e).HTTPStatus() }

// invalidField is the common 400: INVALID_ARGUMENT with an FcmError and one
// field violation whose description is also the message.
func invalidField(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Kind: ErrInvalidArgument, Msg: msg, FcmCode: FcmInvalidArgument,
		BadRequest: true, Violations: []FieldViolation{{Field: field, Description: msg}}}
}

// invalidJSON is the API front end's rejection of a body that does not fit
// the message schema: a BadRequest naming the field and no FcmError.
func invalidJSON(field, msg string) *Error {
	return &Error{Kind: ErrInvalidArgument, Msg: msg, BadRequest: true,
		Violations: []FieldViolation{{Field: field, Description: msg}}}
}

// Production's messages. Where each text was verified (captured
// production responses quoted in public reports; "inferred" where none
// was found):
//
//   - msgInvalidToken: firebase/firebase-admin-java#1064 (2025),
//     healthjoy/async-firebase#15, firebase/firebase-admin-dotnet#45; the
//     message.token field violation is the seeds' recorded observation
//     (messaging-send-invalid-token-error-envelope), its description
//     "Invalid registration token" from a captured envelope in the pushiko
//     docs (bloomberg.github.io/pushiko/fcm_responses).
//   - msgUnregistered (404 NOT_FOUND, FcmError UNREGISTERED, no
//     BadRequest): the pushiko captures; novuhq/novu#12659 keys on it.
//   - msgNoRecipient (400, BadRequest on "message" with the same text,
//     FcmError INVALID_ARGUMENT): the pushiko captures.
//   - msgInvalidArgument with a "message.condition" violation
//     "Invalid condition expression provided." (msgInvalidCondition):
//     firebase/quickstart-python#11.
//   - msgSenderMismatch (403 PERMISSION_DENIED, FcmError
//     SENDER_ID_MISMATCH, no BadRequest): dcai/airnotifier#211 and #219,
//     laravel-notification-channels/fcm#84.
//   - errQuota's "Quota exceeded for ..." (429 RESOURCE_EXHAUSTED, FcmError
//     QUOTA_EXCEEDED): the code and status are the ErrorCode reference's;
//     the text is inferred (no capture found).
//   - "Invalid data payload key: <key>": beste/firebase-php#574 (the
//     message; its BadRequest on message.data is inferred from the
//     ErrorCode reference: "An extension of type google.rpc.BadRequest is
//     returned to specify which field was invalid").
//   - "Android message is too big": firebase/firebase-admin-go#580; the
//     web push and APNs forms are inferred by analogy.
const (
	msgInvalidToken      = "The registration token is not a valid FCM registration token"
	msgInvalidTokenField = "Invalid registration token"
	msgUnregistered      = "Requested entity was not found."
	msgSenderMismatch    = "SenderId mismatch"
	msgNoRecipient       = "Recipient of the message is not set."
	msgInvalidArgument   = "Request contains an invalid argument."
	msgInvalidCondition  = "Invalid condition expression provided."
	msgInvalidDataKeyPfx = "Invalid data payload key: "
)

func errInvalidToken() *Error {
	return &Error{Kind: ErrInvalidArgument, Msg: msgInvalidToken, FcmCode: FcmInvalidArgument,
		BadRequest: true, Violations: []FieldViolation{{Field: "message.token", Description: msgInvalidTokenField}}}
}

func errUnregistered() *Error {
	return &Error{Kind: ErrNotFound, Msg: msgUnregistered, FcmCode: FcmUnregistered}
}

func errSenderMismatch() *Error {
	return &Error{Kind: ErrPermissionDenied, Msg: msgSenderMismatch, FcmCode: FcmSenderIDMismatch}
}

func errQuota(what string) *Error {
	return &Error{Kind: ErrResourceExhausted, Msg: "Quota exceeded for " + what + ".", FcmCode: FcmQuotaExceeded}
}
