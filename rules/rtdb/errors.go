package rtdb

import (
	"errors"
	"fmt"
)

// Errors returned by Evaluate for requests it cannot judge. Rule evaluation
// errors are not among them: they deny the rule that raised them.
var (
	// ErrInvalidPath: the request path has an illegal key.
	ErrInvalidPath = errors.New("invalid path")
	// ErrInvalidRequest: the operation is unknown or the request is malformed.
	ErrInvalidRequest = errors.New("invalid request")
)

func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
