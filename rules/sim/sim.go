// Package sim holds what every rules simulator (Firestore, Storage, RTDB)
// reports: per-case results with their explanation, the summary, the JSON
// envelope the CLI prints, the text rendering, and the exit code.
package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/source"
)

// Outcome is what evaluating one request against a ruleset gives, in the
// simulator's spelling (a Decision is the whole explanation; the verdict
// a request event carries is event.Verdict).
type Outcome string

// Outcomes. Unsupported means the engine met a construct whose production
// semantics are unknown; it is never a deny in disguise.
const (
	Allow       Outcome = "ALLOW"
	Deny        Outcome = "DENY"
	Unsupported Outcome = "UNSUPPORTED"
)

// State says whether a case's decision met its expectation.
type State string

// States of a case.
const (
	Passed           State = "PASSED"
	Failed           State = "FAILED"
	StateUnsupported State = "UNSUPPORTED"
)

// RuleVerdict is the verdict of a single evaluated rule (an allow
// statement or an RTDB rule), as distinct from a request's (event.Verdict)
// and a case's (Outcome).
type RuleVerdict string

// Rule verdicts. Error means the condition evaluated to an error, which denies.
const (
	VerdictAllow       RuleVerdict = "ALLOW"
	VerdictDeny        RuleVerdict = "DENY"
	VerdictError       RuleVerdict = "ERROR"
	VerdictUnsupported RuleVerdict = "UNSUPPORTED"
)

// Rule is the explanation of one evaluated rule.
type Rule struct {
	MatchPath  string      `json:"matchPath,omitempty"`  // e.g. /databases/{database}/documents/users/{uid}, or /users/$uid for RTDB
	RuleIndex  int         `json:"ruleIndex"`            // index of the allow within its match block
	Operations []string    `json:"operations,omitempty"` // e.g. ["read"], ["create","update"]; RTDB: [".write"]
	Verdict    RuleVerdict `json:"verdict"`
	Line       int         `json:"line,omitempty"`
	Column     int         `json:"column,omitempty"`
	Condition  string      `json:"condition,omitempty"` // the condition's source text
	Message    string      `json:"message,omitempty"`   // error text in production's wording, or why it was skipped
	// Expressions is the sub-expression trace in evaluation order.
	Expressions []Expr `json:"expressions,omitempty"`
	// Failing are the minimal false or error sub-expressions that kept
	// this rule from allowing (present when the rule was traced).
	Failing []Failure `json:"failing,omitempty"`
}

// Failure is one sub-expression that decided a rule's deny, rendered for a
// person: its source and span, and its operands with the result, e.g.
// Source "request.resource.data.title.size() < 20", Values "33 < 20 → false".
type Failure struct {
	Source    string `json:"source"`
	Line      int    `json:"line,omitempty"`
	Column    int    `json:"column,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	EndColumn int    `json:"endColumn,omitempty"`
	// Value is the sub-expression's own value ("false"); empty for an
	// error.
	Value  string `json:"value,omitempty"`
	Values string `json:"values"`
	Error  string `json:"error,omitempty"`
}

// Lookup is one document read (get, exists, getAfter, existsAfter, or
// Storage's firestore.get/exists) a decision made, with its result.
type Lookup struct {
	Function string `json:"function"`
	Path     string `json:"path"`
	Result   string `json:"result"` // the value returned, or the error
}

// Budget is what a decision used of its evaluation limits.
type Budget struct {
	Expressions    int    `json:"expressions"`
	MaxExpressions int    `json:"maxExpressions"`
	Limit          string `json:"limit,omitempty"` // "expressions" or "time" when one ran out
}

// Expr is one evaluated (or short-circuit skipped) sub-expression.
type Expr struct {
	Source  string `json:"source"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Depth   int    `json:"depth"`           // nesting depth below the rule's condition
	Value   string `json:"value,omitempty"` // the value, printed in rules syntax
	Error   string `json:"error,omitempty"`
	Skipped bool   `json:"skipped,omitempty"` // not evaluated because of short-circuiting
}

// Case is the result of one test case.
type Case struct {
	Description string   `json:"description"`
	Expectation Outcome  `json:"expectation"`
	Decision    Outcome  `json:"decision"`
	State       State    `json:"state"`
	Trace       []Rule   `json:"trace"`
	Notes       []string `json:"notes"`
	// Deciding is the index in Trace of the rule that decided the case
	// (the allowing rule, or the first denying one); -1 when none did.
	Deciding int `json:"deciding"`
	// Bindings are the path variables of the deciding rule's match block.
	Bindings map[string]string `json:"bindings,omitempty"`
	// Lookups are the documents the rules read, in order.
	Lookups []Lookup `json:"lookups,omitempty"`
	// Budget is what the evaluation used of its limits.
	Budget *Budget `json:"budget,omitempty"`
}

// NewCase fills State from the decision and expectation and normalises nils.
func NewCase(description string, expectation, decision Outcome, trace []Rule, notes []string, deciding int) Case {
	c := Case{Description: description, Expectation: expectation, Decision: decision, Trace: trace, Notes: notes, Deciding: deciding}
	switch {
	case decision == Unsupported:
		c.State = StateUnsupported
	case decision == expectation:
		c.State = Passed
	default:
		c.State = Failed
	}
	if c.Trace == nil {
		c.Trace = []Rule{}
	}
	if c.Notes == nil {
		c.Notes = []string{}
	}
	return c
}

// Report is the summary of a simulation run.
type Report struct {
	Passed      int    `json:"passed"`
	Failed      int    `json:"failed"`
	Unsupported int    `json:"unsupported"`
	Results     []Case `json:"results"`
}

// Add appends a case result and counts it.
func (r *Report) Add(c Case) {
	switch c.State {
	case Passed:
		r.Passed++
	case Failed:
		r.Failed++
	default:
		r.Unsupported++
	}
	r.Results = append(r.Results, c)
}

// ExitCode is 0 when every case passed and 1 when any failed. Unsupported
// cases are neither.
func (r *Report) ExitCode() int {
	if r.Failed > 0 {
		return 1
	}
	return 0
}

// Error is the envelope for input that could not be simulated: rules that
// don't compile, or unreadable cases.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// WriteJSON prints the success envelope {"success": true, "data": report}.
func WriteJSON(w io.Writer, r *Report) error {
	if r.Results == nil {
		r.Results = []Case{}
	}
	return writeIndented(w, struct {
		Success bool    `json:"success"`
		Data    *Report `json:"data"`
	}{true, r})
}

// WriteErrorJSON prints the failure envelope {"success": false, "error": e}.
func WriteErrorJSON(w io.Writer, e Error) error {
	return writeIndented(w, struct {
		Success bool  `json:"success"`
		Error   Error `json:"error"`
	}{false, e})
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// TextOptions tune WriteTextWith.
type TextOptions struct {
	// Verbose adds every rule's full step-by-step trace.
	Verbose bool
}

// WriteText prints each case with its verdict, the deciding rule's
// location, and for a case that was not allowed each failing
// sub-expression of each evaluated rule: its source line with a caret
// under it and its values ("33 < 20 → false"); then the notes and a
// summary line.
func WriteText(w io.Writer, f *source.File, r *Report) { WriteTextWith(w, f, r, TextOptions{}) }

// WriteTextWith is WriteText with options.
func WriteTextWith(w io.Writer, f *source.File, r *Report, opts TextOptions) {
	for _, c := range r.Results {
		mark := "PASS"
		switch c.State {
		case Failed:
			mark = "FAIL"
		case StateUnsupported:
			mark = "UNSUPPORTED"
		}
		fmt.Fprintf(w, "%-4s %s\n", mark, c.Description)
		if c.State != Passed {
			fmt.Fprintf(w, "     expected %s, got %s\n", c.Expectation, c.Decision)
		}
		if c.Deciding >= 0 && c.Deciding < len(c.Trace) {
			rule := c.Trace[c.Deciding]
			fmt.Fprintf(w, "     decided by %s\n", describeRule(rule))
			if f != nil && rule.Line > 0 {
				fmt.Fprintf(w, "     %s:%d:%d\n", fileName(f), rule.Line, rule.Column)
				if len(rule.Failing) == 0 || c.Decision == Allow {
					writeExcerpt(w, f, source.Pos{Line: rule.Line, Column: rule.Column}, source.Pos{})
				}
			}
			if rule.Message != "" {
				fmt.Fprintf(w, "     %s\n", rule.Message)
			}
		}
		if c.Decision != Allow {
			for i, rule := range c.Trace {
				if rule.Verdict == VerdictAllow || len(rule.Failing) == 0 {
					continue
				}
				if i != c.Deciding {
					fmt.Fprintf(w, "     also %s\n", describeRule(rule))
				}
				for _, fl := range rule.Failing {
					fmt.Fprintf(w, "     failing: %s", fl.Source)
					if f != nil && fl.Line > 0 {
						fmt.Fprintf(w, "  (%s:%d:%d)", fileName(f), fl.Line, fl.Column)
					}
					fmt.Fprintln(w)
					if f != nil && fl.Line > 0 {
						writeExcerpt(w, f, source.Pos{Line: fl.Line, Column: fl.Column}, source.Pos{Line: fl.EndLine, Column: fl.EndColumn})
					}
					fmt.Fprintf(w, "       %s\n", fl.Values)
				}
			}
		}
		if len(c.Bindings) > 0 && (opts.Verbose || c.State != Passed) {
			keys := make([]string, 0, len(c.Bindings))
			for k := range c.Bindings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = k + " = " + c.Bindings[k]
			}
			fmt.Fprintf(w, "     bindings: %s\n", strings.Join(parts, ", "))
		}
		if opts.Verbose {
			for _, l := range c.Lookups {
				fmt.Fprintf(w, "     lookup: %s(%s) → %s\n", l.Function, l.Path, l.Result)
			}
			if c.Budget != nil {
				fmt.Fprintf(w, "     budget: %d of %d expressions", c.Budget.Expressions, c.Budget.MaxExpressions)
				if c.Budget.Limit != "" {
					fmt.Fprintf(w, " (%s limit reached)", c.Budget.Limit)
				}
				fmt.Fprintln(w)
			}
			for _, rule := range c.Trace {
				fmt.Fprintf(w, "     trace of %s\n", describeRule(rule))
				for _, x := range rule.Expressions {
					res := x.Value
					switch {
					case x.Skipped:
						res = "(skipped)"
					case x.Error != "":
						res = "error: " + x.Error
					}
					fmt.Fprintf(w, "       %s%s → %s\n", strings.Repeat("  ", x.Depth), x.Source, res)
				}
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "     note: %s\n", n)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d unsupported\n", r.Passed, r.Failed, r.Unsupported)
}

// writeExcerpt prints a source line (clipped around the span) with a caret
// line under [start, end).
func writeExcerpt(w io.Writer, f *source.File, start, end source.Pos) {
	text, caret := source.Excerpt(f.Line(start.Line), start, end, source.MaxLineWidth)
	fmt.Fprintf(w, "       %s\n       %s\n", text, caret)
}

func describeRule(r Rule) string {
	var b strings.Builder
	rtdb := len(r.Operations) > 0 && strings.HasPrefix(r.Operations[0], ".")
	switch {
	case rtdb:
		// RTDB rules are keys of the rules tree: ".write at /users/$uid".
		b.WriteString(strings.Join(r.Operations, ", "))
	case len(r.Operations) > 0:
		fmt.Fprintf(&b, "allow %s", strings.Join(r.Operations, ", "))
	default:
		fmt.Fprintf(&b, "rule #%d", r.RuleIndex)
	}
	switch {
	case r.MatchPath != "" && rtdb:
		fmt.Fprintf(&b, " at %s", r.MatchPath)
	case r.MatchPath != "":
		fmt.Fprintf(&b, " in match %s", r.MatchPath)
	}
	fmt.Fprintf(&b, " → %s", r.Verdict)
	return b.String()
}

func fileName(f *source.File) string {
	if f.Name == "" {
		return "<input>"
	}
	return f.Name
}
