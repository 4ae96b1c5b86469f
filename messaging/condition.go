package messaging

import (
	"fmt"
	"strings"
)

// Production's limits on a condition: at most five topics (FCM's topic
// messaging guide: "You can include up to five topics in your conditional
// expression"). Nesting is bounded so a pathological expression of
// parentheses cannot grow the stack; five topics never need more.
const (
	MaxConditionTopics = 5
	maxConditionDepth  = 32
	maxConditionBytes  = 4096
)

// Condition is a parsed topic condition such as
// "'a' in topics && ('b' in topics || 'c' in topics)".
type Condition struct {
	root condNode
	// Topics are the topics the condition names, in order of appearance.
	Topics []string
}

// Eval reports whether a token subscribed to the topics in subscribed
// matches the condition.
func (c *Condition) Eval(subscribed func(topic string) bool) bool {
	return c.root.eval(subscribed)
}

// String renders the condition in a canonical, fully parenthesised form.
func (c *Condition) String() string { return c.root.String() }

type condNode interface {
	eval(func(string) bool) bool
	String() string
}

type condTopic string

func (t condTopic) eval(in func(string) bool) bool { return in(string(t)) }
func (t condTopic) String() string                 { return "'" + string(t) + "' in topics" }

type condNot struct{ x condNode }

func (n condNot) eval(in func(string) bool) bool { return !n.x.eval(in) }
func (n condNot) String() string                 { return "!" + n.x.String() }

type condBinary struct {
	op   string // "&&" or "||"
	l, r condNode
}

func (b condBinary) eval(in func(string) bool) bool {
	if b.op == "&&" {
		return b.l.eval(in) && b.r.eval(in)
	}
	return b.l.eval(in) || b.r.eval(in)
}
func (b condBinary) String() string {
	return "(" + b.l.String() + " " + b.op + " " + b.r.String() + ")"
}

// binaryOps is the one precedence table of condition operators: a higher
// number binds tighter; both are left-associative. FCM documents only
// "parentheses first, then left to right"; this table takes C's and
// JavaScript's precedence (&& over ||), which agrees with that wherever
// the documented examples parenthesise, and differs from a strict
// left-to-right reading only for an unparenthesised "x || y && z" (not
// verified against production).
var binaryOps = map[string]int{
	"||": 1,
	"&&": 2,
}

// ConditionError is a syntax or limit error in a condition, at a byte
// offset.
type ConditionError struct {
	Offset int
	Msg    string
}

func (e *ConditionError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

type condToken struct {
	kind string // "str", "ident", "(", ")", "!", "&&", "||", "eof"
	text string
	pos  int
}

type condParser struct {
	src    string
	toks   []condToken
	i      int
	depth  int
	topics []string
}

// ParseCondition parses a topic condition. Topics are quoted with single
// or double quotes, combined with &&, || and !, grouped with parentheses,
// and each is followed by "in topics"; topic names follow the topic-name
// syntax ([a-zA-Z0-9-_.~%]+).
func ParseCondition(src string) (*Condition, error) {
	if len(src) > maxConditionBytes {
		return nil, &ConditionError{Offset: maxConditionBytes, Msg: fmt.Sprintf("condition is longer than %d bytes", maxConditionBytes)}
	}
	toks, err := lexCondition(src)
	if err != nil {
		return nil, err
	}
	p := &condParser{src: src, toks: toks}
	if p.peek().kind == "eof" {
		return nil, &ConditionError{Offset: 0, Msg: "condition is empty"}
	}
	n, err := p.expr(1)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != "eof" {
		return nil, &ConditionError{Offset: t.pos, Msg: fmt.Sprintf("unexpected %s", describe(t))}
	}
	return &Condition{root: n, Topics: p.topics}, nil
}

func describe(t condToken) string {
	switch t.kind {
	case "eof":
		return "end of condition"
	case "str":
		return "topic '" + t.text + "'"
	case "ident":
		return "'" + t.text + "'"
	}
	return "'" + t.kind + "'"
}

func (p *condParser) peek() condToken { return p.toks[p.i] }
func (p *condParser) next() condToken { t := p.toks[p.i]; p.i++; return t }

// expr parses operators of precedence >= minPrec by precedence climbing
// over binaryOps.
func (p *condParser) expr(minPrec int) (condNode, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec, ok := binaryOps[t.kind]
		if !ok || prec < minPrec {
			return left, nil
		}
		p.next()
		right, err := p.expr(prec + 1)
		if err != nil {
			return nil, err
		}
		left = condBinary{op: t.kind, l: left, r: right}
	}
}

func (p *condParser) unary() (condNode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxConditionDepth {
		return nil, &ConditionError{Offset: p.peek().pos, Msg: "condition is nested too deeply"}
	}
	t := p.next()
	switch t.kind {
	case "!":
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return condNot{x}, nil
	case "(":
		x, err := p.expr(1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != ")" {
			return nil, &ConditionError{Offset: c.pos, Msg: fmt.Sprintf("expected ')' but found %s", describe(c))}
		}
		return x, nil
	case "str":
		in := p.next()
		if in.kind != "ident" || in.text != "in" {
			return nil, &ConditionError{Offset: in.pos, Msg: fmt.Sprintf("expected 'in topics' after topic '%s' but found %s", t.text, describe(in))}
		}
		topics := p.next()
		if topics.kind != "ident" || topics.text != "topics" {
			return nil, &ConditionError{Offset: topics.pos, Msg: fmt.Sprintf("expected 'topics' after 'in' but found %s", describe(topics))}
		}
		p.topics = append(p.topics, t.text)
		if len(p.topics) > MaxConditionTopics {
			return nil, &ConditionError{Offset: t.pos, Msg: fmt.Sprintf("condition names more than %d topics", MaxConditionTopics)}
		}
		return condTopic(t.text), nil
	}
	return nil, &ConditionError{Offset: t.pos, Msg: fmt.Sprintf("expected a quoted topic, '(' or '!' but found %s", describe(t))}
}

func lexCondition(src string) ([]condToken, error) {
	var toks []condToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '!':
			toks = append(toks, condToken{kind: string(c), pos: i})
			i++
		case c == '&' || c == '|':
			if i+1 >= len(src) || src[i+1] != c {
				return nil, &ConditionError{Offset: i, Msg: fmt.Sprintf("expected '%c%c'", c, c)}
			}
			toks = append(toks, condToken{kind: string([]byte{c, c}), pos: i})
			i += 2
		case c == '\'' || c == '"':
			end := strings.IndexByte(src[i+1:], c)
			if end < 0 {
				return nil, &ConditionError{Offset: i, Msg: "unterminated topic name"}
			}
			name := src[i+1 : i+1+end]
			if name == "" {
				return nil, &ConditionError{Offset: i, Msg: "empty topic name"}
			}
			if j := badTopicChar(name); j >= 0 {
				return nil, &ConditionError{Offset: i + 1 + j, Msg: fmt.Sprintf("topic name %q has a character outside [a-zA-Z0-9-_.~%%]", name)}
			}
			toks = append(toks, condToken{kind: "str", text: name, pos: i})
			i += end + 2
		case isIdentByte(c):
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			toks = append(toks, condToken{kind: "ident", text: src[i:j], pos: i})
			i = j
		default:
			return nil, &ConditionError{Offset: i, Msg: fmt.Sprintf("unexpected character %q", rune(c))}
		}
	}
	return append(toks, condToken{kind: "eof", pos: len(src)}), nil
}

func isIdentByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// topicByte reports whether c may appear in a topic name.
func topicByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~' || c == '%'
}

// badTopicChar returns the index of the first byte of name outside the
// topic-name alphabet, or -1.
func badTopicChar(name string) int {
	for i := 0; i < len(name); i++ {
		if !topicByte(name[i]) {
			return i
		}
	}
	return -1
}
