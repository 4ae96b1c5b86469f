package lint

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/storage"
)

// Document lookups per evaluation: Firestore allows 10 (lint warns from 5),
// Storage's firestore.get/exists 2 distinct documents.
const (
	GetCountWarn       = 5
	GetCountMax        = firestore.MaxLookupsSingle
	StorageGetCountMax = storage.MaxFirestoreLookups
)

// BudgetTier returns the expression counts at which EXPRESSION_BUDGET warns
// and errors for a rule making calls user-function calls. The table is the
// seed's (runtime-budget document), measured in production: function-call
// overhead dominates, so more calls leave room for fewer expressions. It
// over-flags on purpose: inside the flaky zone a rule that passes in dev can
// be denied silently under load.
func BudgetTier(calls int) (warn, err int) {
	switch {
	case calls <= 2:
		return 100, 120
	case calls == 3:
		return 60, 90
	default:
		return 40, 60
	}
}

const saturate = 1 << 30

func satAdd(a, b int) int {
	if a+b > saturate {
		return saturate
	}
	return a + b
}

// costOf returns the expressions and user-function calls evaluating fi's
// body takes with every call expanded: production does not memoize calls.
func costOf(fi *fnInfo) (cost, calls int) {
	switch fi.cState {
	case 1:
		return 0, 0
	case 2:
		return fi.cost, fi.calls
	}
	fi.cState = 1
	cost = fi.facts.nodes
	for _, cs := range fi.facts.calls {
		c, k := costOf(cs.fn)
		cost = satAdd(cost, c)
		calls = satAdd(calls, satAdd(1, k))
	}
	fi.cState, fi.cost, fi.calls = 2, cost, calls
	return cost, calls
}

// ruleCost is a rule's expanded expression count and call count.
func ruleCost(r *rule) (exprs, calls int) {
	exprs = r.facts.nodes
	for _, cs := range r.facts.calls {
		c, k := costOf(cs.fn)
		exprs = satAdd(exprs, c)
		calls = satAdd(calls, satAdd(1, k))
	}
	return exprs, calls
}

// budget reports EXPRESSION_BUDGET, GET_COUNT, GET_DUPLICATION and
// SHARED_GATE.
func (l *linter) budget() {
	for _, r := range l.m.rules {
		exprs, calls := ruleCost(r)
		if exprs > l.metrics.MaxEstimatedExpressions {
			l.metrics.MaxEstimatedExpressions = exprs
		}
		if calls > l.metrics.MaxFunctionCalls {
			l.metrics.MaxFunctionCalls = calls
		}
		l.expressionBudget(r, exprs, calls)
		l.getCount(r)
		l.getDuplication(r.facts.calls, r.scope, "this rule")
	}
	for _, fi := range l.m.funcs {
		l.getDuplication(fi.facts.calls, fi.scope, "function "+fi.f.Name)
	}
	l.sharedGates()
}

func (l *linter) ruleSpan(r *rule) source.Span {
	if isNil(r.allow.Cond) {
		return r.allow.Span
	}
	return r.allow.Cond.Span()
}

func (l *linter) expressionBudget(r *rule, exprs, calls int) {
	warn, errAt := BudgetTier(calls)
	if exprs < warn {
		return
	}
	tier := "1–2 function calls"
	switch {
	case calls == 0:
		tier = "no function calls"
	case calls == 3:
		tier = "3 function calls"
	case calls > 3:
		tier = "4 or more function calls"
	}
	fix := "call fewer functions (inline one-line helpers), put a cheap condition that rules the request out first, or split the rule per method"
	if exprs >= errAt {
		l.report(source.Error, CodeExpressionBudget, l.ruleSpan(r), fix,
			"%s evaluates about %d expressions across %d function calls; with %s production's evaluation budget fails from about %d, and a request over it is denied silently, like a failed rule",
			ruleLabel(r), exprs, calls, tier, errAt)
		return
	}
	l.report(source.Warning, CodeExpressionBudget, l.ruleSpan(r), fix,
		"%s evaluates about %d expressions across %d function calls; with %s production's evaluation budget becomes unreliable from about %d (requests are denied silently when it runs out)",
		ruleLabel(r), exprs, calls, tier, warn)
}

// lookupKey names the document a lookup reads: lookups of the same path in
// the same scope share one (production caches them) unless the path
// depends on a function's parameters or lets, whose values vary per call.
func lookupKey(c *ast.Call, s *scope) string {
	prefix := "doc:"
	if n := calleeName(c); n == "getAfter" || n == "existsAfter" {
		prefix = "after:"
	}
	if len(c.Args) == 0 {
		return fmt.Sprintf("site@%d", c.Sp.Start.Offset)
	}
	local := false
	inspect(c.Args[0], func(e, _ ast.Expr) bool {
		if id, ok := e.(*ast.Ident); ok && s.locals[id.Name] {
			local = true
		}
		return !local
	})
	if local {
		return fmt.Sprintf("site@%d", c.Sp.Start.Offset)
	}
	return prefix + fingerprint(c.Args[0], nil)
}

// lookupSet returns the documents evaluating e can read. Of a ternary's
// branches only the one with more lookups counts, since only one runs.
func (m *model) lookupSet(e ast.Expr, s *scope) map[string]bool {
	out := map[string]bool{}
	var walk func(e ast.Expr, into map[string]bool)
	walk = func(e ast.Expr, into map[string]bool) {
		if isNil(e) {
			return
		}
		switch e := e.(type) {
		case *ast.Ternary:
			walk(e.Cond, into)
			a, b := map[string]bool{}, map[string]bool{}
			walk(e.Then, a)
			walk(e.Else, b)
			if len(b) > len(a) {
				a = b
			}
			for k := range a {
				into[k] = true
			}
			return
		case *ast.Call:
			if name := calleeName(e); name != "" {
				if fi := s.lookupFunc(name); fi != nil {
					// A lookup whose path depends on the function's
					// parameters or lets reads a document per call.
					for k := range m.fnLookups(fi) {
						if strings.HasPrefix(k, "site@") {
							k += fmt.Sprintf("|%d", e.Sp.Start.Offset)
						}
						into[k] = true
					}
				} else if m.svc.builtins[name] {
					into[lookupKey(e, s)] = true
				}
			} else if mem, ok := e.Fn.(*ast.Member); ok && m.svc.storage && (mem.Name == "get" || mem.Name == "exists") {
				if id, ok := mem.X.(*ast.Ident); ok && id.Name == "firestore" && !s.isVar("firestore") {
					into[lookupKey(e, s)] = true
				}
			}
		}
		for _, c := range children(e) {
			walk(c, into)
		}
	}
	walk(e, out)
	return out
}

// fnLookups returns the documents fi can read, following calls.
func (m *model) fnLookups(fi *fnInfo) map[string]bool {
	switch fi.kState {
	case 1:
		return nil
	case 2:
		return fi.lookupKeys
	}
	fi.kState = 1
	keys := map[string]bool{}
	for _, l := range fi.f.Lets {
		for k := range m.lookupSet(l.Value, fi.scope) {
			keys[k] = true
		}
	}
	for k := range m.lookupSet(fi.f.Return, fi.scope) {
		keys[k] = true
	}
	fi.kState, fi.lookupKeys = 2, keys
	return keys
}

func (l *linter) getCount(r *rule) {
	n := len(l.m.lookupSet(r.allow.Cond, r.scope))
	if n > l.metrics.GetCallCount {
		l.metrics.GetCallCount = n
	}
	svc := l.svc
	fix := "read each document once: bind it with let in a helper (let user = get(...);) and reuse the value; put lookups that are rarely needed behind a cheaper condition"
	if svc.storage {
		fix = "read each document once: bind it with let in a helper (let user = firestore.get(...);) and reuse the value; put lookups that are rarely needed behind a cheaper condition"
	}
	what := "get/exists/getAfter/existsAfter"
	limit := fmt.Sprintf("production allows %d per evaluation (%d in a batched write)", GetCountMax, firestore.MaxLookupsBatch)
	if svc.storage {
		what = "firestore.get/firestore.exists"
		limit = fmt.Sprintf("Storage rules may read at most %d distinct Firestore documents per evaluation", StorageGetCountMax)
	}
	switch {
	case n > svc.lookupMax:
		l.report(source.Error, CodeGetCount, l.ruleSpan(r), fix,
			"%s can read %d distinct documents with %s, counting its helper functions; %s, and the request is denied past that",
			ruleLabel(r), n, what, limit)
	case svc.lookupWarn > 0 && n >= svc.lookupWarn:
		l.report(source.Warning, CodeGetCount, l.ruleSpan(r), fix,
			"%s can read %d distinct documents with %s, counting its helper functions; %s",
			ruleLabel(r), n, what, limit)
	}
}

// getDuplication reports a helper that reads documents called more than
// once with the same arguments in one expression: each call evaluates its
// body and lookups again (production caches the document, not the call).
func (l *linter) getDuplication(calls []callSite, s *scope, where string) {
	type key struct {
		fn   *fnInfo
		args string
	}
	count := map[key]int{}
	for _, cs := range calls {
		if len(l.m.fnLookups(cs.fn)) == 0 {
			continue
		}
		args := make([]string, len(cs.call.Args))
		for i, a := range cs.call.Args {
			args[i] = fingerprint(a, nil)
		}
		k := key{cs.fn, strings.Join(args, ",")}
		count[k]++
		if count[k] != 2 {
			continue
		}
		total := 0
		for _, o := range calls {
			if o.fn == cs.fn {
				total++
			}
		}
		name := cs.fn.f.Name
		lookups := "get/exists"
		if l.svc.storage {
			lookups = "firestore.get/exists"
		}
		l.report(source.Warning, CodeGetDuplication, cs.call.Sp,
			fmt.Sprintf("call it once: write a helper that binds the result with let (let v = %s; return v… && v…;) and call that instead", shorten(srcText(l.file, cs.call.Sp), 40)),
			"%s() reads documents (%s) and %s calls it %d times with the same arguments; each call evaluates its body and lookups again and counts against the evaluation budget",
			name, lookups, where, total)
	}
}

// blockShape returns a block's full path with wildcard names erased
// (/users/{*}/posts/{**}) and the renaming that erases its variables from
// expressions, so rules written under /users/{uid} and /users/{userId}
// compare equal.
func blockShape(b *eval.Block) (string, map[string]string) {
	var chain []*eval.Block
	for x := b; x != nil && x.Match != nil; x = x.Parent {
		chain = append([]*eval.Block{x}, chain...)
	}
	var sb strings.Builder
	rename := map[string]string{}
	i := 0
	for _, x := range chain {
		for _, seg := range x.Match.Path.Segments {
			sb.WriteByte('/')
			switch seg.Kind {
			case ast.SegWildcard:
				sb.WriteString("{*}")
				rename[seg.Text] = fmt.Sprintf("$%d", i)
			case ast.SegRecursive:
				sb.WriteString("{**}")
				rename[seg.Text] = fmt.Sprintf("$%d", i)
			default:
				sb.WriteString(seg.Text)
			}
			i++
		}
	}
	return sb.String(), rename
}

// sharedGates reports rules on the same path, granting a common method,
// whose conditions start with the same conjunct (seed: "shared gates"):
// when that condition holds, production evaluates each of them, and
// together they can exhaust the evaluation budget even when each rule
// alone is well inside it. The message gives their combined cost.
func (l *linter) sharedGates() {
	type gated struct {
		r     *rule
		shape string
		first string
		text  string
	}
	var all []gated
	for _, r := range l.m.rules {
		cs := conjuncts(r.allow.Cond)
		if len(cs) == 0 {
			continue
		}
		shape, rename := blockShape(r.block)
		all = append(all, gated{r: r, shape: shape, first: fingerprint(cs[0], rename), text: srcText(l.file, cs[0].Span())})
	}
	// Only rules with one shape and first conjunct can share a gate:
	// grouping them keeps a file of many rules linear instead of
	// comparing every pair.
	groups := map[string][]int{}
	for j := range all {
		key := all[j].shape + "\x00" + all[j].first
		groups[key] = append(groups[key], j)
	}
	for j := range all {
		b := all[j]
		key := b.shape + "\x00" + b.first
		if groups[key][0] == j {
			continue // no earlier rule with its shape and gate
		}
		exprs, calls := ruleCost(b.r)
		var peers []gated
		methods := map[string]bool{}
		for _, i := range groups[key] {
			if i >= j {
				break
			}
			a := all[i]
			shared := false
			for m := range b.r.methods {
				if a.r.methods[m] {
					methods[m], shared = true, true
				}
			}
			if !shared {
				continue
			}
			peers = append(peers, a)
			e, c := ruleCost(a.r)
			exprs, calls = satAdd(exprs, e), satAdd(calls, c)
		}
		if len(peers) == 0 {
			continue
		}
		common := sortedKeys(methods)
		first := conjuncts(b.r.allow.Cond)[0]
		example := "request.resource.data.kind == 'A'"
		if l.svc.storage {
			example = "request.resource.contentType == 'image/png'"
		}
		budget := ""
		if warn, _ := BudgetTier(calls); exprs >= warn {
			budget = ", enough to exhaust its evaluation budget (a silent deny)"
		}
		l.report(source.Warning, CodeSharedGate, first.Span(),
			fmt.Sprintf("start each rule with a condition that tells them apart (e.g. %s), or merge them: allow %s: if %s && (… || …)", example, strings.Join(common, ", "), shorten(b.text, 60)),
			"this rule and the one at line %d both grant %s on %s and start with `%s`; when it holds production evaluates every such rule, about %d expressions across %d function calls together%s",
			peers[len(peers)-1].r.allow.Span.Start.Line, strings.Join(common, ", "), display(b.r.block.Pattern), shorten(b.text, 60), exprs, calls, budget)
	}
}
