// Package ast declares the syntax tree of the Security Rules language shared
// by Cloud Firestore and Cloud Storage. Every node carries its source span.
package ast

import (
	"github.com/pyric/pyric/rules/source"
)

// Ruleset is a parsed rules file.
type Ruleset struct {
	File *source.File
	// Version is the rules_version string; "1" when the statement is absent.
	Version string
	// VersionSpan is the span of the version string literal, or zero.
	VersionSpan source.Span
	Functions   []*Function // declared above the service block
	Service     *Service    // nil only in a partial tree after a parse error
}

// Service is the `service <name> { ... }` block.
type Service struct {
	Name      string // e.g. cloud.firestore, firebase.storage
	NameSpan  source.Span
	Functions []*Function
	Matches   []*Match
	Span      source.Span
}

// Match is a `match /path { ... }` block.
type Match struct {
	Path      *MatchPath
	Functions []*Function
	Allows    []*Allow
	Matches   []*Match
	Span      source.Span
}

// MatchPath is the path pattern of a match block.
type MatchPath struct {
	Segments []*Segment
	Span     source.Span
}

// String renders the path as written, e.g. /users/{uid}/{rest=**}.
func (p *MatchPath) String() string {
	s := ""
	for _, seg := range p.Segments {
		s += "/" + seg.String()
	}
	if s == "" {
		return "/"
	}
	return s
}

// SegmentKind says how a path segment matches.
type SegmentKind int

// Segment kinds.
const (
	SegLiteral   SegmentKind = iota // matches itself
	SegWildcard                     // {name}: one segment
	SegRecursive                    // {name=**}: the rest of the path
)

// Segment is one segment of a match path.
type Segment struct {
	Kind SegmentKind
	// Text is the literal text, or the variable name of a wildcard.
	Text string
	Span source.Span
}

func (s *Segment) String() string {
	switch s.Kind {
	case SegWildcard:
		return "{" + s.Text + "}"
	case SegRecursive:
		return "{" + s.Text + "=**}"
	}
	return s.Text
}

// Method is a verb an allow statement grants.
type Method struct {
	Name string // read, write, get, list, create, update, delete (or anything else, which is a warning)
	Span source.Span
}

// Allow is an `allow m1, m2: if cond;` statement.
type Allow struct {
	Methods []Method
	// Cond is the condition; nil for an unconditional `allow read;`.
	Cond Expr
	Span source.Span
}

// Function is a user function declaration.
type Function struct {
	Name     string
	NameSpan source.Span
	Params   []*Ident
	Lets     []*Let
	Return   Expr // nil only in a partial tree
	Span     source.Span
}

// Let is a `let name = value;` binding inside a function.
type Let struct {
	Name  *Ident
	Value Expr
	Span  source.Span
}

// Expr is an expression node.
type Expr interface {
	Span() source.Span
	exprNode()
}

// LiteralKind says which literal a Literal is.
type LiteralKind int

// Literal kinds.
const (
	Null LiteralKind = iota
	Bool
	Int
	Float
	String
	Bytes
)

// Literal is a constant: null, true/false, 12, 1.5, 'text', b'\x01'.
type Literal struct {
	Kind  LiteralKind
	Bool  bool
	Int   int64
	Float float64
	Str   string // String: the unescaped text; Bytes: the raw bytes
	Raw   string // the source text
	Sp    source.Span
}

// Ident is a name: a variable, a path variable, a binding like request.
type Ident struct {
	Name string
	Sp   source.Span
}

// Unary is !x or -x.
type Unary struct {
	Op    string // "!" or "-"
	X     Expr
	OpPos source.Pos
	Sp    source.Span
}

// Binary is a binary operation: || && == != < <= > >= + - * / %.
type Binary struct {
	Op     string
	X, Y   Expr
	OpSpan source.Span
	Sp     source.Span
}

// In is `x in collection`.
type In struct {
	X, Collection Expr
	OpSpan        source.Span
	Sp            source.Span
}

// Is is `x is type`.
type Is struct {
	X        Expr
	Type     string
	TypeSpan source.Span
	OpSpan   source.Span
	Sp       source.Span
}

// Ternary is `cond ? then : else`.
type Ternary struct {
	Cond, Then, Else Expr
	Sp               source.Span
}

// Member is `x.name`.
type Member struct {
	X      Expr
	Name   string
	NameSp source.Span
	Sp     source.Span
}

// Index is `x[i]`.
type Index struct {
	X, Index Expr
	Sp       source.Span
}

// Slice is `x[lo:hi]`; Lo or Hi may be nil.
type Slice struct {
	X, Lo, Hi Expr
	Sp        source.Span
}

// Call is a function call `f(args)`, a namespaced call `math.abs(x)` or a
// method call `x.size()`; Fn is an *Ident or a *Member.
type Call struct {
	Fn     Expr
	Args   []Expr
	Lparen source.Pos
	Sp     source.Span
}

// List is a list literal `[a, b]`.
type List struct {
	Elems []Expr
	Sp    source.Span
}

// MapEntry is one `key: value` of a map literal.
type MapEntry struct {
	Key   Expr
	Value Expr
}

// Map is a map literal `{'k': v}`.
type Map struct {
	Entries []MapEntry
	Sp      source.Span
}

// PathSegment is one segment of a path literal: either literal text or an
// interpolated `$(expr)`.
type PathSegment struct {
	Text   string // literal text when Interp is nil
	Interp Expr
	Sp     source.Span
}

// Path is a path literal `/databases/$(database)/documents/users/$(uid)`.
type Path struct {
	Segments []*PathSegment
	Sp       source.Span
}

// Paren is a parenthesized expression `(x)`. It is kept in the tree because
// production counts parentheses toward its nesting limit.
type Paren struct {
	X  Expr
	Sp source.Span
}

// Bad is a placeholder for an expression that failed to parse.
type Bad struct {
	Sp source.Span
}

func (e *Literal) Span() source.Span { return e.Sp }
func (e *Ident) Span() source.Span   { return e.Sp }
func (e *Unary) Span() source.Span   { return e.Sp }
func (e *Binary) Span() source.Span  { return e.Sp }
func (e *In) Span() source.Span      { return e.Sp }
func (e *Is) Span() source.Span      { return e.Sp }
func (e *Ternary) Span() source.Span { return e.Sp }
func (e *Member) Span() source.Span  { return e.Sp }
func (e *Index) Span() source.Span   { return e.Sp }
func (e *Slice) Span() source.Span   { return e.Sp }
func (e *Call) Span() source.Span    { return e.Sp }
func (e *List) Span() source.Span    { return e.Sp }
func (e *Map) Span() source.Span     { return e.Sp }
func (e *Path) Span() source.Span    { return e.Sp }
func (e *Paren) Span() source.Span   { return e.Sp }
func (e *Bad) Span() source.Span     { return e.Sp }

func (*Literal) exprNode() {}
func (*Ident) exprNode()   {}
func (*Unary) exprNode()   {}
func (*Binary) exprNode()  {}
func (*In) exprNode()      {}
func (*Is) exprNode()      {}
func (*Ternary) exprNode() {}
func (*Member) exprNode()  {}
func (*Index) exprNode()   {}
func (*Slice) exprNode()   {}
func (*Call) exprNode()    {}
func (*List) exprNode()    {}
func (*Map) exprNode()     {}
func (*Path) exprNode()    {}
func (*Paren) exprNode()   {}
func (*Bad) exprNode()     {}
