package eval

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Verdicts is the outcome of evaluating the allow statements that apply
// to a request, with the explanation every service reports.
type Verdicts struct {
	Outcome  sim.Outcome
	Trace    []sim.Rule
	Notes    []string
	Deciding int // index into Trace (and Rules) of the deciding rule, or -1
	// Rules are the evaluated allow statements in typed form, parallel to
	// Trace.
	Rules []RuleResult
	// Bindings are the path variables of the deciding rule's block (of
	// the first matched block when no rule applied).
	Bindings Vars
}

// DecidingRule returns the deciding rule, or nil.
func (v *Verdicts) DecidingRule() *RuleResult {
	if v.Deciding < 0 || v.Deciding >= len(v.Rules) {
		return nil
	}
	return &v.Rules[v.Deciding]
}

// Allows evaluates, in source order, every allow statement of the matched
// blocks that covers method, and stops at the first that allows. Rules OR
// together and deny by default; an allow whose condition errors denies,
// and an Unsupported error makes the outcome UNSUPPORTED unless another
// rule allows. errorNotes may add service-specific notes for an error.
func (r *Run) Allows(matched []Matched, method string, errorNotes func(*value.Error) []string) Verdicts {
	return r.AllowsIn(matched, method, errorNotes, nil)
}

// AllowsIn is Allows with the first evaluated rule's results in s (nil:
// allocated).
func (r *Run) AllowsIn(matched []Matched, method string, errorNotes func(*value.Error) []string, s *Scratch) Verdicts {
	v := Verdicts{Outcome: sim.Deny, Deciding: -1}
	file := r.env.Program.File
	anyRule, unsupported := false, false
	for mi := range matched {
		m := &matched[mi]
		for i, a := range m.Block.Match.Allows {
			info := m.Block.allows[i]
			ops := info.ops
			if !Covers(ops, method) {
				continue
			}
			anyRule = true
			res := r.condition(m, a.Cond, info.compiled)
			steps := r.steps
			rr := RuleResult{Block: m.Block, Allow: a, Index: i, Value: res, Steps: steps}
			rule := sim.Rule{MatchPath: m.Block.Pattern, RuleIndex: i, Operations: ops,
				Line: a.Span.Start.Line, Column: a.Span.Start.Column, Condition: info.cond}
			if !isTrue(res) {
				rr.Failing = Failing(steps)
			}
			switch res := res.(type) {
			case value.Bool:
				rule.Verdict = sim.VerdictDeny
				if res {
					rule.Verdict = sim.VerdictAllow
				}
			case *value.Error:
				rule.Verdict = sim.VerdictError
				if res.Kind == value.Unsupported {
					rule.Verdict = sim.VerdictUnsupported
					unsupported = true
				}
				rule.Message = res.Message
				v.Notes = append(v.Notes, ErrorNote(file, res))
				if errorNotes != nil {
					v.Notes = append(v.Notes, errorNotes(res)...)
				}
			}
			if v.Trace == nil {
				// The first rule's results in one allocation, or none.
				var b *firstRule
				if s != nil {
					b = &s.first
				} else {
					b = new(firstRule)
				}
				v.Trace, v.Rules = b.trace[:0], b.rules[:0]
			}
			v.Trace = append(v.Trace, rule)
			v.Rules = append(v.Rules, rr)
			if rule.Verdict == sim.VerdictAllow {
				v.Outcome = sim.Allow
				v.Deciding = len(v.Trace) - 1
				v.Bindings = m.Bound()
				if len(v.Notes) == 0 {
					v.Notes = m.Block.allowedNotes[:1:1]
				} else {
					v.Notes = append(v.Notes, m.Block.allowedNotes[0])
				}
				return v
			}
		}
	}
	if !anyRule {
		v.Notes = append(v.Notes, fmt.Sprintf("No allow rules found for operation '%s'", method))
	}
	if unsupported {
		v.Outcome = sim.Unsupported
	}
	for i, rule := range v.Trace {
		if rule.Verdict != sim.VerdictAllow {
			v.Deciding = i
			v.Bindings = v.Rules[i].Block.vars(matched)
			break
		}
	}
	if v.Deciding < 0 && len(matched) > 0 {
		v.Bindings = matched[0].Bound()
	}
	return v
}

// Render fills the display form of each evaluated rule from its typed
// trace: the step-by-step Expressions and the Failing sub-expressions with
// their values. Allows leaves them empty, so a decision that is traced
// only for its typed steps (coverage, Studio) never renders a string;
// reports call Render at the edge. trace and rules are parallel.
func (p *Program) Render(trace []sim.Rule, rules []RuleResult) {
	for i := range trace {
		if i >= len(rules) || trace[i].Expressions != nil {
			continue
		}
		rr := &rules[i]
		trace[i].Expressions = renderSteps(p.Text, rr.Steps, traceValueLimit)
		trace[i].Failing = nil
		for _, fi := range rr.Failing {
			trace[i].Failing = append(trace[i].Failing, RenderFailure(p.File, rr.Steps, fi, traceValueLimit))
		}
	}
}

// ErrorNote renders an evaluation error as production's hosted diagnostics
// do: "Error: firestore.rules line [14], column [24]. Property x is
// undefined on object.".
func ErrorNote(f *source.File, e *value.Error) string {
	if e.Offset < 0 {
		return e.Message
	}
	pos := f.Pos(e.Offset)
	return fmt.Sprintf("Error: %s line [%d], column [%d]. %s", f.Name, pos.Line, pos.Column, e.Message)
}

// SourceText returns an expression's source with whitespace collapsed.
func SourceText(f *source.File, e ast.Expr) string {
	sp := e.Span()
	if sp.End.Offset > len(f.Text) || sp.Start.Offset > sp.End.Offset {
		return ""
	}
	return strings.Join(strings.Fields(f.Text[sp.Start.Offset:sp.End.Offset]), " ")
}

// MethodNames lists an allow statement's methods.
func MethodNames(a *ast.Allow) []string {
	out := make([]string, len(a.Methods))
	for i, m := range a.Methods {
		out[i] = m.Name
	}
	return out
}

// Covers reports whether an allow with these operations applies to method:
// read covers get and list, write covers create, update and delete.
func Covers(ops []string, method string) bool {
	for _, op := range ops {
		switch {
		case op == method:
			return true
		case op == "read" && (method == "get" || method == "list"):
			return true
		case op == "write" && (method == "create" || method == "update" || method == "delete"):
			return true
		}
	}
	return false
}

// vars returns the path variables bound for b among the matched blocks.
func (b *Block) vars(matched []Matched) Vars {
	for i := range matched {
		if matched[i].Block == b {
			return matched[i].Bound()
		}
	}
	return Vars{}
}
