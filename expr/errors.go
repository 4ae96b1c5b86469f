package expr

import (
	"errors"
	"fmt"
)

// The limits production-shaped tools rely on: an expression is at most
// MaxLength bytes, a string literal at most MaxLiteral bytes, and the
// parsed tree at most MaxDepth levels deep.
const (
	MaxLength  = 256
	MaxLiteral = 1024
	MaxDepth   = 16
)

// ErrLimit is wrapped by every error caused by one of the limits above.
var ErrLimit = errors.New("expression limit exceeded")

// Pos is a position in an expression: a byte offset and its 1-based line
// and column.
type Pos struct {
	Offset int `json:"offset"`
	Line   int `json:"line"`
	Column int `json:"column"`
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// posAt computes the line and column of a byte offset in src.
func posAt(src string, off int) Pos {
	if off > len(src) {
		off = len(src)
	}
	line, col := 1, 1
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return Pos{Offset: off, Line: line, Column: col}
}

// LexError reports characters the lexer does not recognise, an unterminated
// string, or a source or literal over its limit.
type LexError struct {
	Pos   Pos
	Msg   string
	limit bool
}

func (e *LexError) Error() string { return fmt.Sprintf("$expr %s: %s", e.Pos, e.Msg) }

// Unwrap returns ErrLimit for limit violations.
func (e *LexError) Unwrap() error {
	if e.limit {
		return ErrLimit
	}
	return nil
}

// ParseError reports a token stream that does not form an expression, or
// a tree deeper than MaxDepth.
type ParseError struct {
	Pos   Pos
	Msg   string
	limit bool
}

func (e *ParseError) Error() string { return fmt.Sprintf("$expr %s: %s", e.Pos, e.Msg) }

// Unwrap returns ErrLimit for limit violations.
func (e *ParseError) Unwrap() error {
	if e.limit {
		return ErrLimit
	}
	return nil
}

// EvalError reports an expression that parsed but failed at run time: a
// missing identifier or field, a type mismatch, a division by zero, an
// integer overflow.
type EvalError struct {
	Pos Pos
	Msg string
}

func (e *EvalError) Error() string { return fmt.Sprintf("$expr %s: %s", e.Pos, e.Msg) }

// WalkError reports a malformed {"$expr": ...} wrapper in a payload, or an
// expression inside one that failed (Err). Path is the dotted path of the
// offending value in the payload.
type WalkError struct {
	Path string
	Msg  string
	Err  error
}

func (e *WalkError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Unwrap returns the expression's own error, if any.
func (e *WalkError) Unwrap() error { return e.Err }
