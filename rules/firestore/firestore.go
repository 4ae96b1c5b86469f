// Package firestore binds the rules language to Cloud Firestore: it
// compiles a firestore.rules file, builds request and resource for a
// request, resolves get()/exists()/getAfter()/existsAfter() through a
// lookup the caller supplies (no data store is imported here), decides the
// request with production's semantics, and explains the decision.
package firestore

import (
	"fmt"
	"github.com/pyric/pyric/rules/coverage"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Service is the service name a Firestore ruleset declares.
const Service = "cloud.firestore"

// Lookup limits, as production documents them.
const (
	MaxLookupsSingle = 10 // a single-document request or a query
	MaxLookupsBatch  = 20 // a batched write or transaction
)

// Ruleset is a compiled firestore.rules file.
type Ruleset struct {
	prog *eval.Program
	// Warnings are the non-fatal diagnostics production reports too
	// (undefined functions and variables, unused lets, version 1, …).
	Warnings source.Diagnostics
}

// Compile parses and checks a rules file. It returns the ruleset and every
// diagnostic; the ruleset is nil when any diagnostic is an error.
func Compile(file *source.File) (*Ruleset, source.Diagnostics) {
	prog, diags := service.Compile(file, "firestore.rules", check.Options{Service: Service}, nil)
	if prog == nil {
		return nil, diags
	}
	return &Ruleset{prog: prog, Warnings: diags}, diags
}

// AST returns the parsed ruleset.
func (r *Ruleset) AST() *ast.Ruleset { return r.prog.Ruleset }

// File returns the source file.
func (r *Ruleset) File() *source.File { return r.prog.File }

// Methods of a Firestore request.
const (
	Get    = service.Get
	List   = service.List
	Create = service.Create
	Update = service.Update
	Delete = service.Delete
)

// Auth is request.auth: the caller's uid and token claims.
type Auth = service.Auth

// Doc is a document as rules see it.
type Doc struct {
	// Path is relative to the database's documents root, e.g. users/alice.
	Path string
	Data value.Map
}

// Lookup resolves documents for get() and exists() (and, for the post-write
// view, getAfter() and existsAfter()). Path is relative to the documents
// root. Identity says whether get() results carry id and __name__ (real
// documents do; the Rules Test API's mocked ones don't).
type Lookup interface {
	Lookup(path string) (data value.Map, exists bool, err error)
}

// LookupFunc adapts a function to Lookup.
type LookupFunc func(path string) (value.Map, bool, error)

// Lookup implements Lookup.
func (f LookupFunc) Lookup(path string) (value.Map, bool, error) { return f(path) }

// Query is request.query for list requests.
type Query struct {
	Limit          *int64
	Offset         int64
	OrderBy        map[string]string // field path → "ASC" | "DESC"
	AllDescendants bool              // a collection-group query
	// Constraints describe the query's filters, for deciding a list rule
	// that reads resource.data ("rules are not filters").
	Constraints []Constraint
}

// Request is one Firestore request to decide.
type Request struct {
	Method   string
	Database string // "(default)" when empty
	// Path is relative to the documents root: a document path, or for
	// list the collection path (a collection id for a collection group),
	// or a document path as the Rules Test API gives it.
	Path string
	// Auth is request.auth; nil means unauthenticated.
	Auth *Auth
	// Resource is the stored document; nil when it does not exist.
	Resource *Doc
	// After is request.resource.data for create and update: the document
	// as it would be after the write.
	After value.Map
	Time  time.Time
	Query *Query
	// Get resolves get()/exists() against committed state. Nil means
	// every lookup fails.
	Get Lookup
	// GetAfter resolves getAfter()/existsAfter() for documents other than
	// the request's own: the post-write state of the batch or
	// transaction. Nil falls back to Get.
	GetAfter Lookup
	// Batch raises the lookup limit to MaxLookupsBatch.
	Batch bool
	// Coverage, when set, counts every expression the decision evaluates
	// (traced or not) into it; it must be NewCoverage of this ruleset.
	Coverage *coverage.Coverage

	// TestAPI evaluates with the Rules Test API's conventions, which the
	// recorded conformance verdicts follow: an absent auth or resource is
	// an unbound variable (reading it errors) instead of null, a resource
	// carries data only, and get()/exists() of an unmocked path errors.
	TestAPI bool
}

// Decision is the verdict on a request with its explanation.
type Decision struct {
	Outcome  sim.Outcome
	Trace    []sim.Rule
	Notes    []string
	Deciding int // index into Trace of the deciding rule, or -1
	Attempts []eval.Attempt
	// Expressions is the number of expressions evaluated.
	Expressions int
	// Lookups is the number of distinct documents get()/exists() read.
	Lookups int
	// Explanation is the structured account: typed traces of the
	// evaluated rules, their failing sub-expressions, the path
	// variables, each lookup with its result, and the budget used.
	eval.Explanation

	prog    *eval.Program // for Render
	lk      lookups
	env     eval.Env
	vars    [2]eval.Var // env.Vars: request and resource
	rec     records     // their values
	scratch eval.Scratch
	segs    [9]string // the request's segments, when they fit
}

// Allowed reports whether the request is allowed.
func (d *Decision) Allowed() bool { return d.Outcome == sim.Allow }

// DecidingRuleOf returns the deciding rule in typed form, or nil.
func (d *Decision) DecidingRuleOf() *eval.RuleResult {
	if d.Deciding < 0 || d.Deciding >= len(d.Rules) {
		return nil
	}
	return &d.Rules[d.Deciding]
}

// Decide evaluates the request against the ruleset, with the full
// sub-expression trace, typed and rendered for display. It never panics:
// an internal failure denies, with a note saying so.
func (r *Ruleset) Decide(req *Request) *Decision {
	d := r.safeDecide(req, true)
	d.Render()
	return d
}

// DecideSteps is Decide with the trace in typed form only: every
// evaluated rule's Steps and Failing leaves are in Rules, and nothing is
// rendered (Trace lists the rules with their verdicts but no
// Expressions or Failing text until Render). It is the cheap way to trace
// every request, allowed ones included, for coverage and Studio.
func (r *Ruleset) DecideSteps(req *Request) *Decision { return r.safeDecide(req, true) }

// DecideFast is Decide without the sub-expression traces (every evaluated
// rule is still listed with its verdict, line and message); it is several
// times faster, for hot paths that explain only denials.
func (r *Ruleset) DecideFast(req *Request) *Decision { return r.safeDecide(req, false) }

// Render fills Trace's display strings (each rule's Expressions and
// Failing) from the typed trace; Decide has done it already.
func (d *Decision) Render() {
	if d.prog != nil {
		d.prog.Render(d.Trace, d.Rules)
	}
}

func (r *Ruleset) safeDecide(req *Request, trace bool) (d *Decision) {
	defer func() {
		if p := recover(); p != nil {
			d = &Decision{Outcome: sim.Deny, Deciding: -1,
				Notes: []string{fmt.Sprintf("internal error in the rules engine (please report it): %v", p)}}
		}
	}()
	return r.decide(req, trace)
}

// maxDisjunctions bounds the expansion of in filters, as Firestore bounds
// the disjunctions of one query.
const maxDisjunctions = 30

func (r *Ruleset) decide(req *Request, trace bool) *Decision {
	if req.Method == List && !req.TestAPI && req.Query != nil {
		if branches, ok := expandIn(req.Query.Constraints); ok {
			// An in filter is a disjunction: the rule must hold for each
			// value the query asks for, as the official emulator evaluates it.
			var last *Decision
			for _, cs := range branches {
				q := *req.Query
				q.Constraints = cs
				sub := *req
				sub.Query = &q
				d := r.decideOne(&sub, trace)
				if !d.Allowed() {
					return d
				}
				last = d
			}
			return last
		}
	}
	return r.decideOne(req, trace)
}

// expandIn turns each in filter (on a field no equality pins) into one
// branch per value, up to maxDisjunctions branches.
func expandIn(cs []Constraint) ([][]Constraint, bool) {
	pinned := map[string]bool{}
	for _, c := range cs {
		if c.Op == "==" {
			pinned[c.Field] = true
		}
	}
	branches := [][]Constraint{nil}
	expanded := false
	for _, c := range cs {
		l, isList := c.Value.(value.List)
		if c.Op != "in" || !isList || pinned[c.Field] || len(l) == 0 || len(branches)*len(l) > maxDisjunctions {
			for i := range branches {
				branches[i] = append(branches[i], c)
			}
			continue
		}
		expanded = true
		var next [][]Constraint
		for _, b := range branches {
			for _, v := range l {
				nb := append(append([]Constraint(nil), b...), Constraint{Field: c.Field, Op: "==", Value: v})
				next = append(next, nb)
			}
		}
		branches = next
	}
	return branches, expanded
}

func (r *Ruleset) decideOne(req *Request, trace bool) *Decision {
	db := req.Database
	if db == "" {
		db = "(default)"
	}
	rel := strings.Trim(req.Path, "/")
	// The decision holds the request's segments, lookups, environment,
	// bound values and first results: one allocation for them all.
	d := &Decision{prog: r.prog}
	segs := docSegmentsIn(d.segs[:0], db, rel, 1)
	// The request's own path, shared by request.path and resource.__name__.
	own := value.Path{Absolute: true, Segments: segs[:len(segs):len(segs)]}
	if req.Method == List && (len(segs)-3)%2 == 1 {
		// A list request names a collection: rules are matched against the
		// unknown documents it could return. (The Rules Test API names a
		// document instead, which matches as is.)
		segs = append(segs, eval.Hypothetical)
	}
	lk, env := &d.lk, &d.env
	var tally *coverage.Tally
	x := service.Decide(r.prog, segs, func() string { return "/" + rel }, req.Method, func() *eval.Env {
		lk.init(req, db)
		// Field by field: the decision is new (zero), and copying a whole
		// Env into it costs a bulk write barrier while the GC marks.
		env.Program, env.Vars, env.Service, env.Trace = r.prog, r.globals(req, db, own, &d.rec, d.vars[:0]), lk, trace
		if req.Method == List {
			var cs []Constraint
			if req.Query != nil {
				cs = req.Query.Constraints
			}
			env.Prove = newProver(cs).prove
		}
		if req.Coverage != nil {
			tally = req.Coverage.Tally()
			env.Count = tally
		}
		return env
	}, nil, &d.scratch)
	if tally != nil {
		tally.Flush()
	}
	v := x.Verdicts
	d.Outcome, d.Trace, d.Deciding, d.Notes, d.Attempts = v.Outcome, v.Trace, v.Deciding, x.Notes, x.Attempts
	if x.Run != nil {
		d.Expressions, d.Lookups = x.Expressions, lk.count()
		d.Explanation = eval.NewExplanation(x.Run, v, lk.reads)
		x.Run.Release()
	}
	return d
}

// EmulatorMessage renders the decision as the official emulator's
// PERMISSION_DENIED message: "false for 'get' @ L5, Property x is undefined
// on object. for 'get' @ L6", or "No matching allow statements".
func (d *Decision) EmulatorMessage(method string) string {
	if len(d.Trace) == 0 {
		return "No matching allow statements"
	}
	parts := make([]string, 0, len(d.Trace))
	for _, r := range d.Trace {
		msg := "false"
		if r.Message != "" {
			msg = r.Message
		}
		parts = append(parts, fmt.Sprintf("%s for '%s' @ L%d", msg, method, r.Line))
	}
	return "\n" + strings.Join(parts, ", ")
}

// Case renders the decision as a simulator case result.
func (d *Decision) Case(description string, expectation sim.Outcome) sim.Case {
	d.Render()
	c := sim.NewCase(description, expectation, d.Outcome, d.Trace, d.Notes, d.Deciding)
	d.Annotate(&c)
	return c
}

// NewCoverage starts empty rule coverage counts for rs; set it as
// Request.Coverage to count decisions into it.
func NewCoverage(rs *Ruleset) *coverage.Coverage { return coverage.New(rs.AST(), rs.File()) }
