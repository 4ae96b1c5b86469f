package sim

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/pyric/pyric/event"
)

// oldExplain is Explain as it was before it was made to allocate less
// (one block for the Explanation, one slice for every trace, Rule pointing
// into Evaluated): the reference the new one must agree with.
func oldExplain(engine, reason string, trace []Rule, deciding int, notes []string, expressions, lookups int) Explained {
	d := &event.Explanation{Engine: engine, Reason: reason, Notes: notes, Expressions: expressions, Lookups: lookups}
	var out Explained
	for i, r := range trace {
		var st []event.Step
		if len(r.Expressions) > 0 {
			st = make([]event.Step, len(r.Expressions))
			for j, x := range r.Expressions {
				st[j] = step(x)
			}
		}
		er := event.EvaluatedRule{Rule: eventRule(r), Verdict: string(r.Verdict), Message: r.Message, Trace: st}
		d.Evaluated = append(d.Evaluated, er)
		if i == deciding {
			rule := er.Rule
			out.Rule, out.Trace = &rule, er.Trace
			if r.Verdict != VerdictAllow {
				d.Failing = Failing(r.Expressions)
				if len(r.Failing) > 0 {
					d.Failing = d.Failing[:0]
					for _, f := range r.Failing {
						d.Failing = append(d.Failing, event.Step{Text: f.Source, Value: f.Value, Error: f.Error, Line: f.Line, Column: f.Column})
					}
				}
			}
		}
	}
	out.Decision = d
	return out
}

// randomTrace is a trace of n rules with random verdicts, traces (values,
// errors, skipped nodes at random depths) and evaluator failing sets.
func randomTrace(r *rand.Rand, n int) []Rule {
	verdicts := []RuleVerdict{VerdictAllow, VerdictDeny, VerdictError, VerdictUnsupported}
	values := []string{"true", "false", "1", "'a'", ""}
	var out []Rule
	for i := 0; i < n; i++ {
		rule := Rule{MatchPath: fmt.Sprintf("/m%d/{id}", i), RuleIndex: r.Intn(3), Operations: []string{"read", "write"}[:1+r.Intn(2)],
			Verdict: verdicts[r.Intn(len(verdicts))], Line: r.Intn(20), Column: r.Intn(40), Condition: "c", Message: []string{"", "at /x"}[r.Intn(2)]}
		depth := 0
		for j, m := 0, r.Intn(6); j < m; j++ {
			x := Expr{Source: fmt.Sprintf("e%d", j), Line: j, Column: j + 1, Depth: depth, Value: values[r.Intn(len(values))]}
			switch r.Intn(5) {
			case 0:
				x.Error, x.Value = "boom", ""
			case 1:
				x.Skipped = true
			}
			rule.Expressions = append(rule.Expressions, x)
			depth = max(0, depth+r.Intn(3)-1)
		}
		for j, m := 0, r.Intn(3); j < m; j++ {
			rule.Failing = append(rule.Failing, Failure{Source: "f", Value: "false", Values: "1 < 0 → false", Line: j, Column: j})
		}
		out = append(out, rule)
	}
	return out
}

func TestExplainMatchesTheOldOne(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		trace := randomTrace(r, r.Intn(5))
		deciding := r.Intn(len(trace)+1) - 1
		notes := []string{"n1", "n2"}[:r.Intn(3)]
		got := Explain("firestore", "why", trace, deciding, notes, r.Intn(9), r.Intn(2))
		want := oldExplain("firestore", "why", trace, deciding, notes, got.Decision.Expressions, got.Decision.Lookups)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, g, w)
		}
		// Each rule's trace is its own: appending to one must not reach
		// the next rule's.
		for j := range got.Decision.Evaluated {
			if tr := got.Decision.Evaluated[j].Trace; len(tr) != cap(tr) {
				t.Fatalf("case %d: rule %d's trace has len %d cap %d", i, j, len(tr), cap(tr))
			}
		}
	}
}

// BenchmarkExplain builds the explanation of a request allowed by its
// first rule (untraced, as allowed requests are decided) and of one denied
// after three traced rules.
func BenchmarkExplain(b *testing.B) {
	allowed := []Rule{{MatchPath: "/users/$uid", Operations: []string{".write"}, Verdict: VerdictAllow, Line: 3, Column: 5, Condition: "auth != null", Message: "at /users/u1"}}
	denied := randomTrace(rand.New(rand.NewSource(2)), 3)
	for i := range denied {
		denied[i].Verdict = VerdictDeny
	}
	for name, trace := range map[string][]Rule{"allowed": allowed, "denied": denied} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Explain("database", "r", trace, 0, nil, 0, 0)
			}
		})
	}
}
