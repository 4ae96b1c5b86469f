package ai

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/pyric/pyric/errcode"
)

// Error is an API error as Google's JSON error envelope carries it:
// {"error": {"code", "message", "status", "details"}}. Every transport
// answers an engine error with that envelope and HTTPStatus.
type Error struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Status, e.Message) }

// ErrorCode is the error's canonical code: its status, else the code its
// HTTP status stands for.
func (e *Error) ErrorCode() errcode.Code {
	if c, ok := errcode.Parse(e.Status); ok {
		return c
	}
	return errcode.FromHTTP(e.Code)
}

// HTTPStatus is the response status of the error.
func (e *Error) HTTPStatus() int {
	if e.Code >= 400 && e.Code <= 599 {
		return e.Code
	}
	return http.StatusInternalServerError
}

// AsError returns err as an *Error; errors that are not API errors become
// 500 INTERNAL (never a client's fault).
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: 500, Status: "INTERNAL", Message: "Internal error encountered."}
}

// ErrInvalidScript is wrapped by every script decoding error.
var ErrInvalidScript = errors.New("invalid script")

func invalidArgument(format string, args ...any) *Error {
	return &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}

// InvalidArgument is a 400 INVALID_ARGUMENT with the message.
func InvalidArgument(msg string) *Error { return invalidArgument("%s", msg) }

// NotFound is a 404 NOT_FOUND with the message.
func NotFound(msg string) *Error { return &Error{Code: 404, Status: "NOT_FOUND", Message: msg} }

// errInvalidJSON is production's answer to a body that does not decode
// (the "Invalid JSON payload received." family), naming no field.
func errInvalidJSON(detail string) *Error {
	return errBadRequest([]violation{{description: "Invalid JSON payload received. " + detail}})
}

// errUnknownModel is ai-error-unknown-model: 404 without details; the
// message names the method ("generateContent", "countTokens", ...).
func errUnknownModel(model, method string) *Error {
	return NotFound(fmt.Sprintf("models/%s is not found for API version v1main, or is not supported for %s. Call ModelService.ListModels to see the list of available models and their supported methods.", model, method))
}

// errRetiredModel is ai-error-retired-model: 404 with an ErrorInfo detail.
func errRetiredModel(family, date string) *Error {
	return &Error{Code: 404, Status: "NOT_FOUND",
		Message: fmt.Sprintf("%s models are retired as of %s. Update to a newer model version. [Learn more.](https://firebase.google.com/docs/ai-logic/faq-and-troubleshooting#discontinued-models)", family, date),
		Details: []map[string]any{{
			"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": "RETIRED_MODEL",
			"domain": "firebasevertexai.googleapis.com",
		}}}
}

// errBadAPIKey is ai-error-bad-api-key: 400 (not 401) with ErrorInfo and
// LocalizedMessage details.
func errBadAPIKey(service string) *Error {
	const msg = "API key not valid. Please pass a valid API key."
	return &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: msg,
		Details: []map[string]any{
			{
				"@type":    "type.googleapis.com/google.rpc.ErrorInfo",
				"reason":   "API_KEY_INVALID",
				"domain":   "googleapis.com",
				"metadata": map[string]any{"service": service},
			},
			{
				"@type":   "type.googleapis.com/google.rpc.LocalizedMessage",
				"locale":  "en-US",
				"message": msg,
			},
		}}
}

// errNoCredentials is production's answer to a call with neither an API
// key nor an OAuth token.
func errNoCredentials() *Error {
	return &Error{Code: 403, Status: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
}

// errEmptyContents is ai-error-empty-contents (the trailing newline is
// production's).
func errEmptyContents(message string) *Error {
	return invalidArgument("* %s.contents: contents is not specified\n", message)
}

// errBadRole is ai-error-bad-role, listing the roles as production does.
func errBadRole(role string) *Error {
	return invalidArgument("Role '%s' is not supported. Please use a valid role: SYSTEM, SYSTEM_1, USER, ASSISTANT, DEVELOPER, CONTEXT, USER_CONTEXT, MODEL, USER.", role)
}

// errMissingThoughtSignature is ai-error-fncall-missing-thought-signature;
// position is the 1-based index of the content holding the call.
func errMissingThoughtSignature(name string, position int) *Error {
	return invalidArgument("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", name, position)
}

// errUpstream is the OpenAI-compatible answerer's failure to reach or
// understand its upstream.
func errUpstream(format string, args ...any) *Error {
	return &Error{Code: 503, Status: "UNAVAILABLE", Message: "OpenAI-compatible upstream: " + fmt.Sprintf(format, args...)}
}
