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
//
// It runs for every decided request, so it allocates little: the
// Explanation and its Evaluated rules in one block, every rule's trace in
// one slice, and Rule points at the deciding rule's entry in Evaluated
// (events are never changed once built).
func Explain(engine, reason string, trace []Rule, deciding int, notes []string, expressions, lookups int) Explained {
	d := newExplanation(len(trace))
	*d = event.Explanation{Engine: engine, Reason: reason, Notes: notes, Expressions: expressions, Lookups: lookups, Evaluated: d.Evaluated}
	var out Explained
	steps := stepBlock(trace)
	for i, r := range trace {
		var st []event.Step
		if n := len(r.Expressions); n > 0 {
			st = steps[:n:n]
			steps = steps[n:]
			for j, x := range r.Expressions {
				st[j] = step(x)
			}
		}
		d.Evaluated = append(d.Evaluated, event.EvaluatedRule{Rule: eventRule(r), Verdict: string(r.Verdict), Message: r.Message, Trace: st})
		if i == deciding {
			out.Rule, out.Trace = &d.Evaluated[i].Rule, st
			if r.Verdict != VerdictAllow {
				d.Failing = failingSteps(r)
			}
		}
	}
	out.Decision = d
	return out
}

// explanationOf1 is an Explanation with room for one evaluated rule, the
// commonest case (a request granted by its first rule), in one allocation.
type explanationOf1 struct {
	d   event.Explanation
	one [1]event.EvaluatedRule
}

// newExplanation returns an Explanation whose Evaluated is empty with
// room for n rules.
func newExplanation(n int) *event.Explanation {
	if n == 1 {
		b := &explanationOf1{}
		b.d.Evaluated = b.one[:0:1]
		return &b.d
	}
	d := &event.Explanation{}
	if n > 0 {
		d.Evaluated = make([]event.EvaluatedRule, 0, n)
	}
	return d
}

// stepBlock is one slice with room for the traces of every rule.
func stepBlock(trace []Rule) []event.Step {
	n := 0
	for _, r := range trace {
		n += len(r.Expressions)
	}
	if n == 0 {
		return nil
	}
	return make([]event.Step, n)
}

// failingSteps are the sub-expressions that kept r from allowing: the
// evaluator's own minimal failing set when it computed one from typed
// values (through &&, || and user functions), else Failing of the trace.
func failingSteps(r Rule) []event.Step {
	if len(r.Failing) == 0 {
		return Failing(r.Expressions)
	}
	out := make([]event.Step, len(r.Failing))
	for i, f := range r.Failing {
		out[i] = event.Step{Text: f.Source, Value: f.Value, Error: f.Error, Line: f.Line, Column: f.Column}
	}
	return out
}

func eventRule(r Rule) event.Rule {
	return event.Rule{Index: r.RuleIndex, Operations: r.Operations, Line: r.Line, Column: r.Column, MatchPath: r.MatchPath, Condition: r.Condition}
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
