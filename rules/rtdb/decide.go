package rtdb

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/sim"
)

// Operation is what a request does.
type Operation string

// Operations a ruleset judges.
const (
	Read  Operation = "read"
	Write Operation = "write"
)

// Auth is a signed-in caller, the `auth` of the rules: {uid, provider,
// token}. A nil *Auth is a signed-out caller (`auth == null`).
type Auth struct {
	UID      string
	Provider string         // e.g. "anonymous", "password", "google.com"
	Token    map[string]any // the ID token claims; nil reads as {}
}

// Request is one operation to judge.
//
// Data, NewData and the values of Updates are trees as encoding/json
// decodes them (map[string]any, []any, string, bool, nil, and float64 or
// json.Number — both are accepted; Go integer types too). They are read in
// place, never modified, and need not be normalized: null children and
// empty objects count as absent, arrays as objects keyed "0", "1", ….
type Request struct {
	Operation Operation
	Path      string // e.g. "/users/alice"; "" or "/" is the root
	Auth      *Auth
	// Data is the whole database before the request.
	Data any
	// NewData is the value a write sets at Path; nil deletes it.
	NewData any
	// Updates, when non-nil, makes a write a multi-location update: each key
	// is a path relative to Path and its value is set there (nil deletes).
	// NewData is then ignored. Every location must be writable.
	Updates map[string]any
	// Now is the server time (`now`); zero means time.Now().
	Now time.Time
	// Query is the query a read makes (`query` in .read rules); nil is a
	// plain read of the whole location.
	Query *Query
	// Trace records the sub-expression trace of every evaluated rule.
	Trace bool
	// Coverage, when set, counts every expression the request evaluates
	// (traced or not) into it; it must be NewCoverage of this ruleset.
	Coverage *Coverage
}

// Query describes a read's query as .read rules see it: query.orderByKey,
// query.orderByPriority, query.orderByValue (booleans),
// query.orderByChild (the child path, or null), query.startAt,
// query.endAt, query.equalTo (the bound values, or null) and
// query.limitToFirst, query.limitToLast (numbers, or null). A plain read
// has every ordering false and every other member null.
type Query struct {
	OrderByKey, OrderByPriority, OrderByValue bool
	// OrderByChild is the child path a query orders by ("" for none).
	OrderByChild string
	// StartAt, EndAt and EqualTo are the bound values: nil when unset
	// (startAt(null) reads as null too), else string, float64 or bool.
	StartAt, EndAt, EqualTo any
	// LimitToFirst and LimitToLast are 0 when unset.
	LimitToFirst, LimitToLast int
}

// queryMembers are the members of `query` and their checked types.
var queryMembers = map[string]typ{
	"orderByKey": tBool, "orderByPriority": tBool, "orderByValue": tBool,
	"orderByChild": tAny, "startAt": tAny, "endAt": tAny, "equalTo": tAny,
	"limitToFirst": tAny, "limitToLast": tAny,
}

// QueryMembers lists the members of `query`, sorted.
func QueryMembers() []string {
	out := make([]string, 0, len(queryMembers))
	for k := range queryMembers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// value is q as the rules read it.
func (q *Query) value() map[string]any {
	if q == nil {
		q = &Query{}
	}
	orNull := func(n int) any {
		if n == 0 {
			return nil
		}
		return float64(n)
	}
	var child any
	if q.OrderByChild != "" {
		child = q.OrderByChild
	}
	return map[string]any{
		"orderByKey": q.OrderByKey, "orderByPriority": q.OrderByPriority, "orderByValue": q.OrderByValue,
		"orderByChild": child, "startAt": norm(q.StartAt), "endAt": norm(q.EndAt), "equalTo": norm(q.EqualTo),
		"limitToFirst": orNull(q.LimitToFirst), "limitToLast": orNull(q.LimitToLast),
	}
}

// Decision is the verdict on a request with its explanation.
type Decision struct {
	Allowed bool
	// Rules lists every rule evaluated, in order: MatchPath is the rule's
	// location (e.g. /users/$uid), Operations its kind ([".write"]), Line
	// and Column where its condition starts, Message the concrete location
	// it ran at and its error, if any.
	Rules []sim.Rule
	// Deciding is the index in Rules of the rule that decided: the granting
	// rule when allowed, else the failing .validate or the first denying
	// rule; -1 when no rule applied.
	Deciding int
	// Notes explain the decision in a sentence or two.
	Notes []string
	// DataReads are the data locations (keys from the root) whose values
	// the evaluated rules of a read observed, through data and root. A
	// write anywhere else can't change the verdict (only auth, now and the
	// query can), so a database re-judges a standing listen only when a
	// write touches one of them. Empty for writes.
	DataReads [][]string
	// Bindings are the $wildcards bound along the request path.
	Bindings map[string]string
}

// step is one rules location matched along a data path.
type step struct {
	n     *node
	depth int               // number of path keys consumed to reach n
	vars  map[string]string // bindings in force at n
}

// match walks the rules from the root along keys. A literal child wins over
// the $wildcard sibling, which matches any other key.
func (rs *Ruleset) match(keys []string) []step {
	// Binding maps are never changed once made (a $wildcard copies them),
	// so the root's empty one serves every step above the first wildcard.
	vars := map[string]string{}
	steps := make([]step, 1, len(keys)+1)
	steps[0] = step{n: rs.root, vars: vars}
	n := rs.root
	for i, k := range keys {
		next := n.children[k]
		if next == nil && n.wildcard != nil {
			next = n.wildcard
			nv := make(map[string]string, len(vars)+1)
			for name, v := range vars {
				nv[name] = v
			}
			nv[next.key] = k
			vars = nv
		}
		if next == nil {
			break
		}
		n = next
		steps = append(steps, step{n: n, depth: i + 1, vars: vars})
	}
	return steps
}

// evaluation carries one request through its rules.
type evaluation struct {
	rs    *Ruleset
	trace bool // Request.Trace
	base  env
	dec   Decision
	tally *tally
	auth  lazyAuth // base.auth points here
	post  lazyPost // base.post points here
	one   [1]write // the writes of a plain set
	// e and x are the environment and evaluator of the rule running now,
	// reused rule after rule (nothing keeps them once a rule is decided).
	e env
	x evaluator
}

// Evaluate judges a request. The error is non-nil only for a request that
// can't be judged (ErrInvalidPath, ErrInvalidRequest); evaluation errors
// inside rules deny those rules and are reported in the Decision.
func (rs *Ruleset) Evaluate(req Request) (dec Decision, err error) {
	defer func() {
		// Evaluation has no known panic; this keeps a bug from crossing the
		// API boundary as one (the fuzz target treats it as a failure).
		if r := recover(); r != nil {
			dec, err = Decision{Deciding: -1}, fmt.Errorf("rtdb: internal error evaluating %s %s: %v", req.Operation, req.Path, r)
		}
	}()
	keys, err := splitPath(req.Path)
	if err != nil {
		return Decision{Deciding: -1}, err
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	ev := &evaluation{rs: rs, trace: req.Trace, dec: Decision{Deciding: -1}}
	if req.Coverage != nil {
		ev.tally = &tally{}
		defer func() { req.Coverage.flush(ev.tally) }()
	}
	ev.auth.src = req.Auth
	ev.base = env{auth: &ev.auth, root: req.Data, now: float64(now.UnixMilli())}
	steps := rs.match(keys)
	ev.dec.Bindings = steps[len(steps)-1].vars
	ev.dec.Rules = make([]sim.Rule, 0, rulesAlong(steps, req.Operation))
	switch req.Operation {
	case Read:
		ev.base.read = true
		ev.base.reads = &ev.dec.DataReads
		ev.base.query = req.Query.value()
		if ok, allow, deny := ev.grant(".read", keys, steps); ok {
			ev.dec.Allowed, ev.dec.Deciding = true, allow
		} else {
			ev.denied(".read", keys, deny)
		}
	case Write:
		writes, err := requestWrites(keys, &req, ev.one[:0])
		if err != nil {
			return Decision{Deciding: -1}, err
		}
		ev.post = lazyPost{base: req.Data, writes: writes}
		ev.base.post = &ev.post
		matches := make([][]step, len(writes))
		if req.Updates == nil {
			matches[0] = steps // the one write is at keys
		}
		ev.write(writes, matches)
	default:
		return Decision{Deciding: -1}, errorf(ErrInvalidRequest, "unknown operation %q (want read or write)", req.Operation)
	}
	if ev.dec.Rules == nil {
		ev.dec.Rules = []sim.Rule{}
	}
	return ev.dec, nil
}

// rulesAlong is how many rules a request along steps can evaluate before
// any below its location (a write's descendants' .validate): room for
// the decision's Rules, allocated once in the common case.
func rulesAlong(steps []step, op Operation) int {
	n := 0
	for _, s := range steps {
		if op == Read {
			if s.n.read != nil {
				n++
			}
			continue
		}
		if s.n.write != nil {
			n++
		}
		if s.n.validate != nil {
			n++
		}
	}
	return max(n, 1)
}

// requestWrites lists the locations a write sets, a plain set's in one
// (a slice with room for one).
func requestWrites(keys []string, req *Request, one []write) ([]write, error) {
	if req.Updates == nil {
		return append(one, write{path: keys, value: req.NewData}), nil
	}
	rels := make([]string, 0, len(req.Updates))
	for k := range req.Updates {
		rels = append(rels, k)
	}
	sort.Strings(rels)
	var writes []write
	for _, rel := range rels {
		sub, err := splitPath(rel)
		if err != nil {
			return nil, err
		}
		if len(sub) == 0 {
			return nil, errorf(ErrInvalidRequest, "an update path must not be empty")
		}
		p := append(append([]string(nil), keys...), sub...)
		for _, w := range writes {
			if IsPathPrefix(w.path, p) || IsPathPrefix(p, w.path) {
				return nil, errorf(ErrInvalidRequest, "update paths %s and %s overlap", joinPath(w.path), joinPath(p))
			}
		}
		writes = append(writes, write{path: p, value: req.Updates[rel]})
	}
	return writes, nil
}

// IsPathPrefix reports whether the path keys prefix are the start of p
// (a path is its own prefix): the one prefix test on split paths for the
// rules engine, the database engine and verify.
func IsPathPrefix(prefix, p []string) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i := range prefix {
		if prefix[i] != p[i] {
			return false
		}
	}
	return true
}

// lazyAuth is the rules' `auth`, made on first use: rules that never
// read it (`.write: true`) don't pay for its maps.
type lazyAuth struct {
	src  *Auth
	v    any
	made bool
}

func (l *lazyAuth) value() any {
	if !l.made {
		l.v, l.made = authValue(l.src), true
	}
	return l.v
}

// lazyPost is the database after a write, made on first use: rules
// with no .validate that never read newData don't pay for its overlay.
type lazyPost struct {
	base   any
	writes []write
	v      any
	made   bool
}

func (l *lazyPost) value() any {
	if l == nil {
		return nil
	}
	if !l.made {
		l.v, l.made = newOverlay(l.base, l.writes), true
	}
	return l.v
}

func authValue(a *Auth) any {
	if a == nil {
		return nil
	}
	token := a.Token
	if token == nil {
		token = map[string]any{}
	}
	return map[string]any{"uid": a.UID, "provider": a.Provider, "token": token}
}

// run evaluates r at the data location loc and records it.
func (ev *evaluation) run(r *rule, loc []string, vars map[string]string) (bool, int) {
	var ok bool
	var err error
	var exprs []sim.Expr
	if c, constant := r.constant(); constant {
		// A literal condition (`.write: true`) needs no evaluator: a
		// literal is neither traced nor counted for coverage.
		ok = c
	} else {
		ev.e = ev.base
		ev.e.path, ev.e.vars = loc, vars
		ev.x = evaluator{env: &ev.e, r: r, trace: ev.trace, tally: ev.tally}
		ok, err = ev.x.run()
		exprs = ev.x.exprs
	}
	verdict := sim.VerdictDeny
	msg := ruleLocation(loc, vars)
	switch {
	case err != nil:
		verdict = sim.VerdictError
		msg += ": " + err.Error()
	case ok:
		verdict = sim.VerdictAllow
	}
	ev.dec.Rules = append(ev.dec.Rules, sim.Rule{
		MatchPath: r.node.path, Operations: r.ops, Verdict: verdict,
		Line: r.start.Line, Column: r.start.Column, Condition: r.text, Message: msg,
		Expressions: exprs,
	})
	return ok, len(ev.dec.Rules) - 1
}

// ruleLocation is a rule's Message before any error: "at /users/alice
// ($uid = 'alice')", built in one buffer.
func ruleLocation(loc []string, vars map[string]string) string {
	var b strings.Builder
	n := 4
	for _, k := range loc {
		n += len(k) + 1
	}
	for name, v := range vars {
		n += len(name) + len(v) + 7 // " = ''", ", " or " ()"
	}
	b.Grow(n)
	b.WriteString("at /")
	for i, k := range loc {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(k)
	}
	if len(vars) > 0 {
		b.WriteString(" (")
		writeBindings(&b, vars)
		b.WriteByte(')')
	}
	return b.String()
}

// writeBindings writes "$a = 'x', $b = 'y'", sorted by name.
func writeBindings(b *strings.Builder, vars map[string]string) {
	if len(vars) == 1 {
		for n, v := range vars {
			b.WriteString(n)
			b.WriteString(" = ")
			writeQuoted(b, v)
		}
		return
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
		b.WriteString(" = ")
		writeQuoted(b, vars[n])
	}
}

// grant evaluates the kind (.read or .write) rules from the root down to
// keys; the first that allows grants the whole subtree, so deeper rules
// can't revoke it. It returns whether one granted, the index of the granting
// rule and of the first denying one (-1 when none).
func (ev *evaluation) grant(kind string, keys []string, steps []step) (ok bool, allow, deny int) {
	deny = -1
	for _, s := range steps {
		r := s.n.read
		if kind == ".write" {
			r = s.n.write
		}
		if r == nil {
			continue
		}
		granted, i := ev.run(r, keys[:s.depth], s.vars)
		if granted {
			ev.note(kind + " granted by the rule at " + r.node.path)
			return true, i, deny
		}
		if deny < 0 {
			deny = i
		}
	}
	return false, -1, deny
}

func (ev *evaluation) denied(kind string, keys []string, deny int) {
	ev.dec.Deciding = deny
	if deny < 0 {
		ev.note("no " + kind + " rule applies to " + joinPath(keys) + " or its ancestors: RTDB denies by default")
	} else {
		ev.note("no " + kind + " rule on " + joinPath(keys) + " or its ancestors allows it")
	}
}

// note adds a sentence to the decision's notes (most decisions have one).
func (ev *evaluation) note(s string) {
	if ev.dec.Notes == nil {
		ev.dec.Notes = make([]string, 0, 1)
	}
	ev.dec.Notes = append(ev.dec.Notes, s)
}

// write judges a write: every location needs a .write grant, then every
// .validate the write touches must pass. matches[i] is the rules matched
// along writes[i].path, nil until matched.
func (ev *evaluation) write(writes []write, matches [][]step) {
	for i, w := range writes {
		if matches[i] == nil {
			matches[i] = ev.rs.match(w.path)
		}
	}
	grantIdx := -1
	for i, w := range writes {
		ok, allow, deny := ev.grant(".write", w.path, matches[i])
		if !ok {
			ev.denied(".write", w.path, deny)
			return
		}
		if grantIdx < 0 {
			grantIdx = allow
		}
	}
	if !ev.validate(writes, matches) {
		return
	}
	ev.dec.Allowed = true
	ev.dec.Deciding = grantIdx
}

// validate runs .validate at every location the write touches: the
// ancestors of each written location (and the location itself), each
// against the post-write value at its own location, then every descendant
// present in the written value. Locations whose new value is null are
// skipped, so deletes are never validated. It stops at the first failure.
func (ev *evaluation) validate(writes []write, matches [][]step) bool {
	seen := map[string]bool{}
	check := func(n *node, loc []string, vars map[string]string) bool {
		if n.validate == nil {
			return true
		}
		key := joinPath(loc)
		if seen[key] {
			return true
		}
		seen[key] = true
		if !exists(lookup(ev.post.value(), loc)) {
			return true
		}
		ok, i := ev.run(n.validate, loc, vars)
		if !ok {
			ev.dec.Deciding = i
			ev.note(".validate at " + n.path + " failed for " + joinPath(loc) + ", so the write is denied")
		}
		return ok
	}
	for i, w := range writes {
		for _, s := range matches[i] {
			if !check(s.n, w.path[:s.depth], s.vars) {
				return false
			}
		}
	}
	for i, w := range writes {
		steps := matches[i]
		last := steps[len(steps)-1]
		if last.depth != len(w.path) {
			continue // no rules below this location
		}
		if !ev.fanOut(last.n, w.path, w.value, last.vars, check) {
			return false
		}
	}
	return true
}

// fanOut validates the descendants of n present in val.
func (ev *evaluation) fanOut(n *node, loc []string, val any, vars map[string]string,
	check func(*node, []string, map[string]string) bool) bool {
	if n.children == nil && n.wildcard == nil {
		return true
	}
	for _, k := range childKeys(val) {
		child := n.children[k]
		cvars := vars
		if child == nil && n.wildcard != nil {
			child = n.wildcard
			cvars = make(map[string]string, len(vars)+1)
			for name, v := range vars {
				cvars[name] = v
			}
			cvars[child.key] = k
		}
		if child == nil {
			continue
		}
		cloc := append(append(make([]string, 0, len(loc)+1), loc...), k)
		if !check(child, cloc, cvars) {
			return false
		}
		if !ev.fanOut(child, cloc, childOf(val, k), cvars, check) {
			return false
		}
	}
	return true
}

// IndexOn returns the .indexOn entries of the rules location matching the
// data path (e.g. "/users" or "/rooms/r1/messages"), or nil. A literal
// location wins over its $wildcard sibling, as for .read and .write. The
// database uses it to decide whether a query ordered by a child or by
// value is indexed, which production requires.
func (rs *Ruleset) IndexOn(path string) []string {
	keys, err := splitPath(path)
	if err != nil {
		return nil
	}
	steps := rs.match(keys)
	last := steps[len(steps)-1]
	if last.depth != len(keys) {
		return nil
	}
	return append([]string(nil), last.n.indexOn...)
}
