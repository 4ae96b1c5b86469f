package pubsub

import (
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/pyric/pyric/errcode"
)

// The sentinel errors of the engine: the canonical codes (package
// errcode). Every *Error wraps exactly one of them (test with errors.Is);
// Code gives its gRPC code.
var (
	ErrInvalidArgument    error = errcode.InvalidArgument
	ErrNotFound           error = errcode.NotFound
	ErrAlreadyExists      error = errcode.AlreadyExists
	ErrFailedPrecondition error = errcode.FailedPrecondition
	ErrResourceExhausted  error = errcode.ResourceExhausted
	ErrUnavailable        error = errcode.Unavailable
	ErrInternal           error = errcode.Internal
)

// Error is an engine error: a sentinel kind and the message the client
// sees, in the official emulator's words where it has them.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the sentinel kind.
func (e *Error) Unwrap() error { return e.Kind }

// Code maps an engine error to its gRPC code: the one mapping every
// transport uses (errcode.Of; the REST adapter derives the HTTP status
// from it).
func Code(err error) codes.Code { return errcode.Of(err).GRPC() }

func invalid(format string, args ...any) *Error {
	return &Error{Kind: ErrInvalidArgument, Msg: fmt.Sprintf(format, args...)}
}

// The official emulator's messages (0.8.20, observed over REST and gRPC).
var (
	errTopicNotFound     = &Error{Kind: ErrNotFound, Msg: "Topic not found"}
	errTopicExists       = &Error{Kind: ErrAlreadyExists, Msg: "Topic already exists"}
	errSubNotFound       = &Error{Kind: ErrNotFound, Msg: "Subscription does not exist"}
	errSubExists         = &Error{Kind: ErrAlreadyExists, Msg: "Subscription already exists"}
	errSubTopicNotFound  = &Error{Kind: ErrNotFound, Msg: "Subscription topic does not exist"}
	errSnapshotNotFound  = &Error{Kind: ErrNotFound, Msg: "Snapshot does not exist"}
	errSnapshotExists    = &Error{Kind: ErrAlreadyExists, Msg: "Snapshot already exists"}
	errEmptyMessages     = invalid("Some messages are empty")
	errNoMessages        = invalid("No messages to publish")
	errAckDeadline       = invalid("ack_deadline_secs out of bounds")
	errNoAckIDs          = invalid("No ack ids specified.")
	errNegativeDeadline  = invalid("Ack deadline cannot be negative")
	errNoMaxMessages     = invalid("No max_messages specified")
	errDetached          = &Error{Kind: ErrFailedPrecondition, Msg: "Subscription is detached."}
	errSnapshotTopic     = &Error{Kind: ErrFailedPrecondition, Msg: "The subscription's topic is not the topic of the snapshot."}
	errDeadLetterMissing = &Error{Kind: ErrNotFound, Msg: "Dead letter topic does not exist"}
)

// AckIDsError is the failure of an ack or deadline change on a
// subscription with exactly-once delivery: the ack ids that named no
// outstanding delivery (expired, already acknowledged, or never handed
// out). The official emulator (0.8.20, observed) and production answer
// INVALID_ARGUMENT with an empty message and a google.rpc.ErrorInfo whose
// metadata maps each such ack id to PERMANENT_FAILURE_INVALID_ACK_ID; the
// valid ack ids of the same request take effect.
type AckIDsError struct {
	Invalid []string
}

func (e *AckIDsError) Error() string { return "" }

// Is reports that the error is an invalid argument.
func (e *AckIDsError) Is(target error) bool { return target == ErrInvalidArgument }

func errInvalidName(kind, name string) *Error {
	return invalid("Invalid [%s] name: (name=%s)", kind, name)
}

func errInvalidAckID(id string) *Error { return invalid("Invalid ack id (ack_id=%s)", id) }

func errUpdateMask(req, path, kind, example string) *Error {
	return invalid("Invalid update_mask provided in the %s: %s is not a known %s field. Note that field paths must be of the form '%s' rather than '%s'.",
		req, path, kind, example, snakeToCamelMistake(example))
}

// snakeToCamelMistake is the camel-case spelling the emulator's hint
// warns against ("push_config" rather than "pushConfig").
func snakeToCamelMistake(s string) string {
	switch s {
	case "schema_settings":
		return "schemaSetings" // sic: the emulator's own spelling
	}
	out := make([]byte, 0, len(s))
	up := false
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			up = true
			continue
		}
		c := s[i]
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}
