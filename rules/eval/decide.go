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
	Outcome  sim.Decision
	Trace    []sim.Rule
	Notes    []string
	Deciding int // index into Trace of the deciding rule, or -1
}

// Allows evaluates, in source order, every allow statement of the matched
// blocks that covers method, and stops at the first that allows. Rules OR
// together and deny by default; an allow whose condition errors denies,
// and an Unsupported error makes the outcome UNSUPPORTED unless another
// rule allows. errorNotes may add service-specific notes for an error.
func (r *Run) Allows(matched []Matched, method string, errorNotes func(*value.Error) []string) Verdicts {
	v := Verdicts{Outcome: sim.Deny, Deciding: -1}
	file := r.env.Program.File
	anyRule, unsupported := false, false
	for _, m := range matched {
		for i, a := range m.Block.Match.Allows {
			ops := MethodNames(a)
			if !Covers(ops, method) {
				continue
			}
			anyRule = true
			res, exprs := r.Condition(m, a.Cond)
			rule := sim.Rule{MatchPath: m.Block.Pattern, RuleIndex: i, Operations: ops,
				Line: a.Span.Start.Line, Column: a.Span.Start.Column, Expressions: exprs, Condition: "true"}
			if a.Cond != nil {
				rule.Condition = SourceText(file, a.Cond)
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
			v.Trace = append(v.Trace, rule)
			if rule.Verdict == sim.VerdictAllow {
				v.Outcome = sim.Allow
				v.Deciding = len(v.Trace) - 1
				v.Notes = append(v.Notes, fmt.Sprintf("Allowed by match block '%s'", m.Block.Pattern))
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
			break
		}
	}
	return v
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
