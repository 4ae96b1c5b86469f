package database

import (
	"sort"
	"sync"

	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/sim"
)

// RuleCoverage is how often one rule of a namespace's rules was evaluated
// and how it came out.
type RuleCoverage struct {
	MatchPath   string `json:"matchPath"`
	Kind        string `json:"kind"` // .read, .write or .validate
	Line        int    `json:"line"`
	Column      int    `json:"column"`
	Condition   string `json:"condition"`
	Evaluations int    `json:"evaluations"`
	Allowed     int    `json:"allowed"`
	Denied      int    `json:"denied"`
	Errors      int    `json:"errors"`
}

// Coverage is the rule coverage of a namespace since its rules were last
// set: every rule any request evaluated, and every expression of them with
// how often it was true, false, an error, another value or skipped
// (allowed requests included), in source order.
type Coverage struct {
	Namespace   string              `json:"namespace"`
	Rules       []RuleCoverage      `json:"rules"`
	Expressions []rtdb.ExprCoverage `json:"expressions"`
}

type coverage struct {
	mu sync.Mutex
	m  map[covKey]*RuleCoverage
	// exprs counts the expressions of the rules it was made for.
	exprs      *rtdb.Coverage
	exprsRules *rtdb.Ruleset
}

// exprsFor returns the expression counts of rs, starting them afresh when
// the rules changed.
func (c *coverage) exprsFor(rs *rtdb.Ruleset) *rtdb.Coverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exprs == nil || c.exprsRules != rs {
		c.exprs, c.exprsRules = rtdb.NewCoverage(rs), rs
	}
	return c.exprs
}

type covKey struct {
	path, kind   string
	line, column int
}

func (c *coverage) record(dec *rtdb.Decision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[covKey]*RuleCoverage{}
	}
	for _, r := range dec.Rules {
		kind := ""
		if len(r.Operations) > 0 {
			kind = r.Operations[0]
		}
		k := covKey{r.MatchPath, kind, r.Line, r.Column}
		rc := c.m[k]
		if rc == nil {
			rc = &RuleCoverage{MatchPath: r.MatchPath, Kind: kind, Line: r.Line, Column: r.Column, Condition: r.Condition}
			c.m[k] = rc
		}
		rc.Evaluations++
		switch r.Verdict {
		case sim.VerdictAllow:
			rc.Allowed++
		case sim.VerdictError:
			rc.Errors++
		default:
			rc.Denied++
		}
	}
}

func (c *coverage) reset() {
	c.mu.Lock()
	c.m, c.exprs, c.exprsRules = nil, nil, nil
	c.mu.Unlock()
}

// Coverage returns a namespace's rule coverage.
func (d *Database) Coverage(name string) Coverage {
	d.ns(name)
	out := Coverage{Namespace: name, Rules: []RuleCoverage{}, Expressions: []rtdb.ExprCoverage{}}
	lr := d.live.For(name)
	if lr == nil || lr.Compiled == nil {
		return out
	}
	cov := lr.Coverage(name)
	cov.mu.Lock()
	for _, rc := range cov.m {
		out.Rules = append(out.Rules, *rc)
	}
	exprs := cov.exprs
	cov.mu.Unlock()
	if exprs != nil {
		out.Expressions = exprs.Expressions()
	}
	sort.Slice(out.Rules, func(i, j int) bool {
		a, b := out.Rules[i], out.Rules[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return out
}
