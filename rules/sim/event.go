package sim

import (
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/value"
)

// Explained is a decision in the event stream's terms: the deciding rule,
// its trace, and the whole explanation.
type Explained struct {
	Rule     *event.Rule
	Trace    []event.Step
	Decision *event.Explanation
}

// Bound renders path variable bindings for Decision.Bindings.
func Bound(b map[string]value.Value) map[string]string {
	if len(b) == 0 {
		return nil
	}
	out := make(map[string]string, len(b))
	for k, v := range b {
		out[k] = value.Show(v)
	}
	return out
}

// Explain converts an engine's explanation (the evaluated rules in order,
// the index of the deciding one or -1, and the notes) for the event
// stream. reason is the one-line explanation in the emulator's words.
func Explain(engine, reason string, trace []Rule, deciding int, notes []string, expressions, lookups int) Explained {
	d := &event.Explanation{Engine: engine, Reason: reason, Notes: notes, Expressions: expressions, Lookups: lookups}
	var out Explained
	for i, r := range trace {
		er := event.EvaluatedRule{Rule: eventRule(r), Verdict: string(r.Verdict), Message: r.Message, Trace: steps(r.Expressions)}
		d.Evaluated = append(d.Evaluated, er)
		if i == deciding {
			rule := er.Rule
			out.Rule, out.Trace = &rule, er.Trace
			if r.Verdict != VerdictAllow {
				d.Failing = Failing(r.Expressions)
				if len(r.Failing) > 0 {
					// The evaluator's own minimal failing set, computed
					// from typed values (through &&, || and user functions).
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

func eventRule(r Rule) event.Rule {
	return event.Rule{Index: r.RuleIndex, Operations: r.Operations, Line: r.Line, Column: r.Column, MatchPath: r.MatchPath, Condition: r.Condition}
}

func steps(exprs []Expr) []event.Step {
	if len(exprs) == 0 {
		return nil
	}
	out := make([]event.Step, len(exprs))
	for i, x := range exprs {
		out[i] = step(x)
	}
	return out
}

func step(x Expr) event.Step {
	return event.Step{Text: x.Source, Value: x.Value, Error: x.Error, Line: x.Line, Column: x.Column, Depth: x.Depth, Skipped: x.Skipped}
}

// Failing returns the sub-expressions that made a condition fail: those
// that evaluated to false or to an error and have no descendant that did
// (the trace is in pre-order: a node's descendants follow it, deeper).
// For `request.auth != null && request.resource.data.title.size() < 20`
// with a 33-character title it is the comparison, whose children show
// 33 and 20.
func Failing(exprs []Expr) []event.Step {
	var out []event.Step
	for i, x := range exprs {
		if x.Skipped || !(x.Error != "" || x.Value == "false") {
			continue
		}
		leaf := true
		for j := i + 1; j < len(exprs) && exprs[j].Depth > x.Depth; j++ {
			if y := exprs[j]; !y.Skipped && (y.Error != "" || y.Value == "false") {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, step(x))
		}
	}
	return out
}
