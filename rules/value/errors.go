package value

import "fmt"

// ErrorKind distinguishes ordinary evaluation errors from the simulator
// abstaining and from exhausted budgets.
type ErrorKind int

// Error kinds.
const (
	// Failed is an ordinary evaluation error: the rule denies.
	Failed ErrorKind = iota
	// Unsupported means production's semantics are unknown here; the
	// decision becomes UNSUPPORTED rather than a disguised deny.
	Unsupported
	// Exhausted means a per-request budget (expressions or document
	// lookups) ran out; like production, the request is denied.
	Exhausted
)

// Error is an evaluation error carried as a value. Message uses production's
// wording, e.g. "Property x is undefined on object.".
type Error struct {
	Kind    ErrorKind
	Message string
	// Offset is the byte offset of the expression that failed, or -1 until
	// the evaluator attaches a position.
	Offset int
}

// Type implements Value.
func (*Error) Type() Type { return TError }

func (e *Error) Error() string { return e.Message }

// Errorf returns an ordinary evaluation error.
func Errorf(format string, args ...any) *Error {
	return &Error{Kind: Failed, Message: fmt.Sprintf(format, args...), Offset: -1}
}

// UnsupportedErrorf returns an error that makes the decision UNSUPPORTED.
func UnsupportedErrorf(format string, args ...any) *Error {
	return &Error{Kind: Unsupported, Message: fmt.Sprintf(format, args...), Offset: -1}
}

// IsError reports whether v is an error value.
func IsError(v Value) bool {
	_, ok := v.(*Error)
	return ok
}

// Production's error texts.

// ErrUndefinedProperty is reading a missing key with .name or [name].
func ErrUndefinedProperty(name string) *Error {
	return Errorf("Property %s is undefined on object.", name)
}

// ErrNull is any access through null, and an unbound variable.
func ErrNull() *Error { return Errorf("Null value error.") }

// ErrFunctionNotFound is calling an unknown function or method.
func ErrFunctionNotFound(name string) *Error {
	return Errorf("Function not found error: Name: [%s].", name)
}

// ErrDivideByZero is integer division or modulo by zero.
func ErrDivideByZero() *Error { return Errorf("Divide by zero error.") }

// ErrIntRange is integer overflow.
func ErrIntRange() *Error {
	return Errorf("Integer value is out of the [-9223372036854775808, 9223372036854775807] range.")
}

// ErrUnsupportedOp is an operator or function applied to the wrong types.
func ErrUnsupportedOp(received, expected string) *Error {
	return Errorf("Unsupported operation error. Received: %s. Expected: %s.", received, expected)
}

// ErrIndexOutOfBounds is an index or slice bound outside a list or string.
func ErrIndexOutOfBounds(index, size int64) *Error {
	return Errorf("Index out of bound error. Index: [%d] , size: [%d].", index, size)
}

// ErrType is a value of the wrong type where a specific one is required
// (a non-boolean condition or operand of && and ||).
func ErrType(received Type, expected string) *Error {
	return Errorf("Type error. Received: [%s] Expected: [%s].", received, expected)
}

// ErrConversion is a failed int(), float() or similar conversion.
func ErrConversion(arg string, from Type, to string) *Error {
	return Errorf("Type conversion error. Argument: [%s], From type: [%s], To type: [%s].", arg, from, to)
}
