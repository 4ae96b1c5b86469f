package eval

import (
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Step is one node evaluation of a traced rule: which node (by identity:
// the *ast node of the parsed ruleset), the typed value it produced (a
// *value.Error for an error; nil when Skipped), and where it sits in the
// evaluation tree. A node evaluated several times (a function called
// twice) has one Step per evaluation.
type Step struct {
	Node ast.Expr
	// Parent is the index of the step that evaluated this one, -1 for the
	// rule's condition.
	Parent int32
	// Depth is the nesting depth below the condition.
	Depth int32
	// Value is the result; nil when the node was skipped.
	Value value.Value
	// Skipped says short-circuiting (&&, ||, ?:, a failed receiver) left
	// the node unevaluated.
	Skipped bool
	// UserCall marks a call of a user function: its last child step is
	// the function's return expression.
	UserCall bool
}

// Err returns the step's error, or nil.
func (s Step) Err() *value.Error {
	e, _ := s.Value.(*value.Error)
	return e
}

// RuleResult is one allow statement evaluated for a request, in typed
// form: the rendered sim.Rule is derived from it.
type RuleResult struct {
	Block *Block     // the matched block
	Allow *ast.Allow // the allow statement
	Index int        // the allow's index within its block
	// Value is the condition's result: value.Bool or *value.Error.
	Value value.Value
	// Steps is the evaluation trace in evaluation order (nil unless
	// Env.Trace); Steps[0] is the condition.
	Steps []Step
	// Failing indexes the Steps that decided a rule that did not allow:
	// the minimal set of false or error leaves (for a && b, the operand
	// that was false; for a || b, both; through user functions into their
	// bodies; for an error, the node where it arose).
	Failing []int
}

// Budget is what one request's evaluation used of its limits.
type Budget struct {
	Expressions    int // expressions evaluated
	MaxExpressions int // the expression budget
	// Elapsed is the wall-clock evaluation time, measured from the 128th
	// expression (shorter evaluations report 0: reading the clock would
	// cost more than they do).
	Elapsed     time.Duration
	MaxDuration time.Duration // the time limit
	// Limit names the budget that ran out ("expressions" or "time"), ""
	// when none did.
	Limit string
}

// Budget reports the request's use of its limits so far.
func (r *Run) Budget() Budget {
	b := Budget{Expressions: int(r.count), MaxExpressions: int(r.max), MaxDuration: r.maxDur(), Limit: r.Limit()}
	if r.aux != nil && r.aux.started != 0 {
		b.Elapsed = time.Duration(clockNow() - r.aux.started)
	}
	return b
}

// Steps returns the trace of the last condition evaluated.
func (r *Run) Steps() []Step { return r.steps }

// children lists each step's child steps in evaluation order.
func children(steps []Step) [][]int {
	// Every list is a part of one block: counted first, then filled.
	n := len(steps)
	counts := make([]int, n+n)
	total := 0
	for _, s := range steps {
		if s.Parent >= 0 && int(s.Parent) < n {
			counts[s.Parent]++
			total++
		}
	}
	block := counts[n : n+total]
	out := make([][]int, n)
	off := 0
	for i, c := range counts[:n] {
		if c > 0 {
			out[i] = block[off : off : off+c]
			off += c
		}
	}
	for i, s := range steps {
		if s.Parent >= 0 && int(s.Parent) < n {
			out[s.Parent] = append(out[s.Parent], i)
		}
	}
	return out
}

// Failing returns the minimal false or error leaves of a trace whose root
// (step 0) is false or an error; nil otherwise.
func Failing(steps []Step) []int {
	if len(steps) == 0 || isTrue(steps[0].Value) {
		return nil
	}
	kids := children(steps)
	var out []int
	var walk func(i int)
	walk = func(i int) {
		s := steps[i]
		ev := func() []int {
			var cs []int
			for _, c := range kids[i] {
				if !steps[c].Skipped {
					cs = append(cs, c)
				}
			}
			return cs
		}
		if n, ok := s.Node.(*ast.Binary); ok && (n.Op == "&&" || n.Op == "||") {
			cs := ev()
			if n.Op == "&&" {
				for _, c := range cs {
					if isFalse(steps[c].Value) {
						walk(c)
						return
					}
				}
			}
			found := false
			for _, c := range cs {
				if !isTrue(steps[c].Value) {
					walk(c)
					found = true
				}
			}
			if !found {
				out = append(out, i)
			}
			return
		}
		// An error is followed to the node where it arose: child steps
		// that produced the very same error value.
		if e := s.Err(); e != nil {
			for _, c := range ev() {
				if steps[c].Err() == e {
					walk(c)
					return
				}
			}
			if s.UserCall {
				if cs := ev(); len(cs) > 0 {
					walk(cs[len(cs)-1])
					return
				}
			}
			out = append(out, i)
			return
		}
		switch s.Node.(type) {
		case *ast.Ternary:
			cs := ev()
			if len(cs) > 0 {
				walk(cs[len(cs)-1])
				return
			}
		}
		if s.UserCall {
			if cs := ev(); len(cs) > 0 && !isTrue(steps[cs[len(cs)-1]].Value) {
				walk(cs[len(cs)-1])
				return
			}
		}
		out = append(out, i)
	}
	walk(0)
	return out
}

func isTrue(v value.Value) bool  { b, ok := v.(value.Bool); return ok && bool(b) }
func isFalse(v value.Value) bool { b, ok := v.(value.Bool); return ok && !bool(b) }

// RenderSteps renders a trace for reports (the sim.Expr form): source text,
// position, depth and the value shown in rules syntax, cut at limit bytes.
func RenderSteps(f *source.File, steps []Step, limit int) []sim.Expr {
	return renderSteps(func(e ast.Expr) string { return clipSource(SourceText(f, e)) }, steps, limit)
}

func renderSteps(text func(ast.Expr) string, steps []Step, limit int) []sim.Expr {
	if steps == nil {
		return nil
	}
	out := make([]sim.Expr, len(steps))
	// The values are rendered into one buffer (their strings share it).
	memo := shownValues{buf: new(strings.Builder)}
	memo.buf.Grow(16 * len(steps))
	for i, s := range steps {
		sp := s.Node.Span()
		x := sim.Expr{Source: text(s.Node), Line: sp.Start.Line, Column: sp.Start.Column, Depth: int(s.Depth), Skipped: s.Skipped}
		switch v := s.Value.(type) {
		case nil:
		case *value.Error:
			x.Error = v.Message
		default:
			x.Value = memo.show(v, limit)
		}
		out[i] = x
	}
	return out
}

// shownValues renders the values of one trace into one buffer, and
// remembers the rendering of its maps and lists: the same map
// (request.resource.data, a let) is the value of many steps, and values
// are immutable.
type shownValues struct {
	buf  *strings.Builder
	seen map[shownKey]string
}

type shownKey struct {
	p unsafe.Pointer
	n int
}

func (m *shownValues) show(v value.Value, limit int) string {
	var k shownKey
	switch x := v.(type) {
	case value.Map:
		k = shownKey{reflect.ValueOf(x).UnsafePointer(), len(x)}
	case value.List:
		k = shownKey{unsafe.Pointer(unsafe.SliceData(x)), len(x)}
	default:
		return value.ShowLimitIn(m.buf, v, limit)
	}
	if k.p == nil {
		return value.ShowLimitIn(m.buf, v, limit)
	}
	if s, ok := m.seen[k]; ok {
		return s
	}
	s := value.ShowLimitIn(m.buf, v, limit)
	if m.seen == nil {
		m.seen = map[shownKey]string{}
	}
	m.seen[k] = s
	return s
}

func clipSource(s string) string {
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// RenderFailure renders one failing step for reports: its source and span,
// and its operands' values with the result, e.g. "33 < 20 → false".
func RenderFailure(f *source.File, steps []Step, i int, limit int) sim.Failure {
	s := steps[i]
	sp := s.Node.Span()
	fl := sim.Failure{Source: clipSource(SourceText(f, s.Node)), Line: sp.Start.Line, Column: sp.Start.Column,
		EndLine: sp.End.Line, EndColumn: sp.End.Column}
	show := func(v value.Value) string {
		switch v := v.(type) {
		case nil:
			return "(not evaluated)"
		case *value.Error:
			return "error"
		default:
			return value.ShowLimit(v, limit)
		}
	}
	result := show(s.Value)
	if s.Err() == nil {
		fl.Value = result
	}
	if e := s.Err(); e != nil {
		fl.Error = e.Message
		result = "error: " + e.Message
	}
	var operands []value.Value
	for j := i + 1; j < len(steps); j++ {
		if int(steps[j].Parent) == i {
			operands = append(operands, steps[j].Value)
		}
	}
	switch n := s.Node.(type) {
	case *ast.Binary:
		if len(operands) == 2 {
			fl.Values = show(operands[0]) + " " + n.Op + " " + show(operands[1]) + " → " + result
		}
	case *ast.Unary:
		if len(operands) == 1 {
			fl.Values = n.Op + show(operands[0]) + " → " + result
		}
	case *ast.In:
		// The collection is evaluated first.
		if len(operands) == 2 {
			fl.Values = show(operands[1]) + " in " + show(operands[0]) + " → " + result
		}
	case *ast.Is:
		if len(operands) == 1 {
			fl.Values = show(operands[0]) + " is " + n.Type + " → " + result
		}
	case *ast.Call:
		if s.UserCall {
			break
		}
		args := func(vs []value.Value) string {
			parts := make([]string, len(vs))
			for k, v := range vs {
				parts[k] = show(v)
			}
			return strings.Join(parts, ", ")
		}
		switch fn := n.Fn.(type) {
		case *ast.Member:
			if len(operands) == len(n.Args)+1 {
				fl.Values = show(operands[0]) + "." + fn.Name + "(" + args(operands[1:]) + ") → " + result
			} else if id, ok := fn.X.(*ast.Ident); ok && len(operands) == len(n.Args) {
				fl.Values = id.Name + "." + fn.Name + "(" + args(operands) + ") → " + result
			}
		case *ast.Ident:
			if len(operands) == len(n.Args) {
				fl.Values = fn.Name + "(" + args(operands) + ") → " + result
			}
		}
	}
	if fl.Values == "" {
		fl.Values = "→ " + result
	}
	return fl
}

// Read is one document lookup a decision made: get, exists, getAfter,
// existsAfter, or Storage's firestore.get and firestore.exists.
type Read struct {
	Function string
	// Path is the argument as given (a value.Path, or what was passed).
	Path value.Value
	// Result is what the lookup returned: the document map (a value.Map
	// or a service's value.Record; value.AsMap reads either), a bool, or
	// a *value.Error.
	Result value.Value
}

// MaxReads bounds the reads a decision records.
const MaxReads = 64

// Explanation is the structured account of a decision every service
// exposes: the evaluated rules with their typed traces and failing
// sub-expressions, the deciding block's path variables, the lookups made
// and the budget used. Display strings are derived from it at the edge
// (Annotate, RenderSteps, RenderFailure).
type Explanation struct {
	// Rules are the evaluated allow statements, parallel to the
	// decision's rendered Trace.
	Rules []RuleResult
	// Bindings are the path variables of the deciding rule's block
	// (Bindings.Map for them as a map).
	Bindings Vars
	// Reads are the lookups the rules made, in order (at most MaxReads).
	Reads []Read
	// Budget is what the evaluation used of its limits.
	Budget Budget
}

// NewExplanation collects a finished run's explanation.
func NewExplanation(run *Run, v Verdicts, reads []Read) Explanation {
	return Explanation{Rules: v.Rules, Bindings: v.Bindings, Reads: reads, Budget: run.Budget()}
}

// Annotate renders the explanation's bindings, reads and budget into a
// simulator case.
func (x *Explanation) Annotate(c *sim.Case) {
	if b := x.Bindings.Map(); len(b) > 0 {
		c.Bindings = make(map[string]string, len(b))
		for k, v := range b {
			if s, ok := v.(value.String); ok {
				c.Bindings[k] = string(s)
			} else {
				c.Bindings[k] = value.ShowLimit(v, traceValueLimit)
			}
		}
	}
	for _, r := range x.Reads {
		res := ""
		if e, ok := r.Result.(*value.Error); ok {
			res = "error: " + e.Message
		} else if r.Result != nil {
			res = value.ShowLimit(r.Result, traceValueLimit)
		}
		path := ""
		if p, ok := r.Path.(value.Path); ok {
			path = p.String()
		} else if r.Path != nil {
			path = value.ShowLimit(r.Path, traceValueLimit)
		}
		c.Lookups = append(c.Lookups, sim.Lookup{Function: r.Function, Path: path, Result: res})
	}
	if x.Budget.MaxExpressions > 0 {
		// Elapsed time stays out of reports so they are reproducible.
		c.Budget = &sim.Budget{Expressions: x.Budget.Expressions, MaxExpressions: x.Budget.MaxExpressions, Limit: x.Budget.Limit}
	}
}

// Recorder collects the reads of one request.
type Recorder struct{ Reads []Read }

// Wrap returns b recording each call as a Read named fn.
func (rec *Recorder) Wrap(fn string, b Builtin) Builtin {
	return func(args []value.Value) value.Value {
		v := b(args)
		if len(rec.Reads) < MaxReads {
			var p value.Value
			if len(args) > 0 {
				p = args[0]
			}
			rec.Reads = append(rec.Reads, Read{Function: fn, Path: p, Result: v})
		}
		return v
	}
}
