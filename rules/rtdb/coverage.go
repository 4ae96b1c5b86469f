package rtdb

import (
	"sort"
	"sync"

	"github.com/pyric/pyric/rules/rtdb/expr"
)

// Coverage counts, over many requests judged by one ruleset, how each
// expression of each rule evaluated: true, false, an error, another value,
// or skipped by short-circuiting. Counting sees every evaluation, traced or
// not, so allowed requests (decided untraced) count as denied ones do. It
// is safe for concurrent use.
type Coverage struct {
	mu     sync.Mutex
	counts map[expr.Node]*ExprCoverage
}

// ExprCoverage is one expression's counts.
type ExprCoverage struct {
	MatchPath string `json:"matchPath"` // the rule's location, e.g. /users/$uid
	Kind      string `json:"kind"`      // .read, .write or .validate
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	Text      string `json:"text"`
	True      int    `json:"true"`
	False     int    `json:"false"`
	Error     int    `json:"error"`
	Other     int    `json:"other"`
	Skipped   int    `json:"skipped"`
}

// NewCoverage starts empty counts for rs; set it as Request.Coverage to
// count requests into it.
func NewCoverage(rs *Ruleset) *Coverage {
	return &Coverage{counts: map[expr.Node]*ExprCoverage{}}
}

// outcome is how one evaluation came out.
type outcome uint8

const (
	outcomeTrue outcome = iota
	outcomeFalse
	outcomeError
	outcomeOther
	outcomeSkipped
)

func outcomeOf(v any, err error) outcome {
	if err != nil {
		return outcomeError
	}
	if b, ok := v.(bool); ok {
		if b {
			return outcomeTrue
		}
		return outcomeFalse
	}
	return outcomeOther
}

// tally collects one request's evaluations, flushed into a Coverage at its
// end (one lock per request).
type tally struct{ evals []counted }

type counted struct {
	r *rule
	n expr.Node
	o outcome
}

func (t *tally) add(r *rule, n expr.Node, o outcome) {
	t.evals = append(t.evals, counted{r, n, o})
}

func (c *Coverage) flush(t *tally) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range t.evals {
		x := c.counts[e.n]
		if x == nil {
			sp := e.r.span(e.n.Pos(), e.n.End())
			x = &ExprCoverage{MatchPath: e.r.node.path, Kind: e.r.kind, Line: sp.Start.Line, Column: sp.Start.Column}
			if e.n.Pos() >= 0 && e.n.End() <= len(e.r.text) && e.n.Pos() <= e.n.End() {
				x.Text = e.r.text[e.n.Pos():e.n.End()]
			}
			c.counts[e.n] = x
		}
		switch e.o {
		case outcomeTrue:
			x.True++
		case outcomeFalse:
			x.False++
		case outcomeError:
			x.Error++
		case outcomeOther:
			x.Other++
		case outcomeSkipped:
			x.Skipped++
		}
	}
}

// Expressions lists every expression evaluated at least once with its
// counts, in source order (outer expressions before the ones they
// contain).
func (c *Coverage) Expressions() []ExprCoverage {
	c.mu.Lock()
	out := make([]ExprCoverage, 0, len(c.counts))
	for _, x := range c.counts {
		out = append(out, *x)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return len(a.Text) > len(b.Text)
	})
	return out
}
