package lint

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/source"
)

// Production's compile limits and the bands lint warns in. The exact values
// were measured against the official emulator (see the package doc of
// check); the bands give room before a deploy fails.
const (
	// MaxSourceBytes is the largest source production accepts.
	MaxSourceBytes = check.MaxSourceBytes
	// A flat && / || chain: production compiles 98 comparison operands and
	// rejects 99 (its nesting depth, operands + 1, passes 99). Lint warns
	// from ChainWarn operands and errors from ChainError ("approaching").
	ChainWarn  = 85
	ChainError = 95
	ChainLimit = 98
	// MaxLets is the most let bindings one function may have (11 compile,
	// 12 are rejected with "Maximum allowed variable count of 10 …").
	MaxLets = check.MaxLets
	// CallDepthMax is the most functions one call stack may hold (21
	// compile, 22 are rejected with "Maximum allowed call depth of 20 …");
	// lint warns from CallDepthWarn.
	CallDepthWarn = 18
	CallDepthMax  = check.MaxCallDepth + 1
)

// sourceSize reports a file over production's size limit, pointing at the
// first byte past it.
func (l *linter) sourceSize() {
	n := len(l.file.Text)
	if n <= MaxSourceBytes {
		return
	}
	start := MaxSourceBytes
	for start > 0 && !utf8.RuneStart(l.file.Text[start]) {
		start--
	}
	l.report(source.Error, CodeSourceSize, l.file.Span(start, n),
		"move repeated conditions into functions and remove long comments to bring the file under 256 KiB",
		"the rules source is %d bytes (%.1f KiB); production rejects a ruleset over %d bytes (256 KiB) at deploy; this is where the limit is crossed",
		n, float64(n)/1024, MaxSourceBytes)
}

// exprRoots lists every expression the limits apply to: allow conditions,
// let values and function results.
func (m *model) exprRoots() []ast.Expr {
	var out []ast.Expr
	for _, fi := range m.funcs {
		for _, l := range fi.f.Lets {
			out = append(out, l.Value)
		}
		out = append(out, fi.f.Return)
	}
	for _, r := range m.rules {
		out = append(out, r.allow.Cond)
	}
	return out
}

// limits reports production's compile limits lint measures itself:
// CHAIN_DEPTH, LET_LIMIT and CALL_DEPTH (with their warning bands).
func (l *linter) limits(cdiags source.Diagnostics) {
	m := l.m
	l.metrics.FunctionCount = len(m.funcs)
	l.metrics.AllowRuleCount = len(m.rules)
	for _, e := range m.exprRoots() {
		if isNil(e) {
			continue
		}
		if d := check.Depth(e); d > l.metrics.MaxNestingDepth {
			l.metrics.MaxNestingDepth = d
		}
		l.chains(e)
	}
	for _, fi := range m.funcs {
		n := len(fi.f.Lets)
		if n > l.metrics.MaxLetBindings {
			l.metrics.MaxLetBindings = n
		}
		if n > MaxLets {
			l.report(source.Error, CodeLetLimit, fi.f.Lets[MaxLets].Span,
				"group related values into one let holding a map, or move some of them into a helper function",
				"function %s binds %d variables with let; production accepts at most %d per function and rejects this ruleset (\"Maximum allowed variable count of %d for a given function has been reached.\")",
				fi.f.Name, n, MaxLets, MaxLets-1)
		}
	}
	l.callDepth()
}

// chains reports the && and || chains of e that are long enough to worry
// about. A chain is counted after flattening: a && b && c has three
// operands however the parser nested it; parentheses start a new chain.
func (l *linter) chains(root ast.Expr) {
	inspect(root, func(e, parent ast.Expr) bool {
		b, ok := e.(*ast.Binary)
		if !ok || b.Op != "&&" && b.Op != "||" {
			return true
		}
		if pb, ok := parent.(*ast.Binary); ok && pb.Op == b.Op {
			return true // counted from the top of the chain
		}
		n := chainLen(b, b.Op)
		if n > l.metrics.MaxChainDepth {
			l.metrics.MaxChainDepth = n
		}
		if n < ChainWarn {
			return true
		}
		fix := fmt.Sprintf("split the chain into helper functions that each hold part of it, or group its operands in parentheses: (a %s b) %s (c %s d)", b.Op, b.Op, b.Op)
		switch {
		case n >= ChainLimit+1 && check.Depth(b) > check.MaxNesting:
			l.overflow = append(l.overflow, b.Sp)
			l.report(source.Error, CodeChainDepth, b.Sp, fix,
				"this %s chain has %d operands and exceeds production's limit of %d: the ruleset does not compile (\"Expression is too complex to evaluate safely.\")",
				b.Op, n, ChainLimit)
		case n >= ChainLimit+1:
			l.report(source.Error, CodeChainDepth, b.Sp, fix,
				"this %s chain has %d operands, more than the %d comparisons production accepts; it compiles only because its operands are bare values, and any comparison among them breaks it",
				b.Op, n, ChainLimit)
		case n >= ChainError:
			l.report(source.Error, CodeChainDepth, b.Sp, fix,
				"this %s chain has %d operands, approaching production's limit of %d (a chain of %d comparisons does not compile)",
				b.Op, n, ChainLimit, ChainLimit+1)
		default:
			l.report(source.Warning, CodeChainDepth, b.Sp, fix,
				"this %s chain has %d operands; production rejects a chain of more than %d comparisons",
				b.Op, n, ChainLimit)
		}
		return true
	})
}

// chainLen counts the operands of a chain of op, not looking through
// parentheses.
func chainLen(e ast.Expr, op string) int {
	n := 0
	for {
		b, ok := e.(*ast.Binary)
		if !ok || b.Op != op {
			return n + 1
		}
		n += chainLen(b.Y, op)
		e = b.X
	}
}

// nestingDiag rewrites check's NESTING_DEPTH for a person, unless a
// CHAIN_DEPTH error already explains the same expression.
func (l *linter) nestingDiag(d source.Diagnostic) {
	for _, sp := range l.overflow {
		if sp.Start.Offset >= d.Span.Start.Offset && sp.End.Offset <= d.Span.End.Offset {
			return
		}
	}
	depth := 0
	for _, e := range l.m.exprRoots() {
		if !isNil(e) && e.Span() == d.Span {
			depth = check.Depth(e)
			break
		}
	}
	d.Message = fmt.Sprintf("this expression nests %d levels deep; production rejects more than %d and the ruleset does not compile (\"Expression is too complex to evaluate safely.\")", depth, check.MaxNesting)
	d.Fix = "move parts of it into helper functions, and drop parentheses that nest without need"
	l.diags = append(l.diags, d)
}

// depthOf returns the longest call chain starting at fi, counting fi, and
// remembers the next function on it. A cycle (RECURSION) is cut.
func depthOf(fi *fnInfo) int {
	switch fi.dState {
	case 1:
		return 0
	case 2:
		return fi.depth
	}
	fi.dState = 1
	d, next := 1, (*fnInfo)(nil)
	for _, cs := range fi.facts.calls {
		if cd := depthOf(cs.fn); cd+1 > d {
			d, next = cd+1, cs.fn
		}
	}
	fi.dState, fi.depth, fi.next = 2, d, next
	return d
}

// callDepth reports long call chains at the function that starts them.
// Production checks every chain, even one no rule calls.
func (l *linter) callDepth() {
	for _, fi := range l.m.funcs {
		d := depthOf(fi)
		if d > l.metrics.MaxCallDepth {
			l.metrics.MaxCallDepth = d
		}
		if fi.callers > 0 || d < CallDepthWarn {
			continue
		}
		var names []string
		for g := fi; g != nil && len(names) < d; g = g.next {
			names = append(names, g.f.Name)
		}
		chain := strings.Join(names, " → ")
		if len(names) > 6 {
			chain = strings.Join(names[:3], " → ") + " → … → " + names[len(names)-1]
		}
		fix := "inline small helpers so that no chain of calls holds more than 21 functions"
		if d > CallDepthMax {
			l.report(source.Error, CodeCallDepth, fi.f.NameSpan, fix,
				"%s starts a chain of %d functions calling each other (%s); production accepts at most %d on one call stack and rejects this ruleset (\"Maximum allowed call depth of %d is reached\")",
				fi.f.Name, d, chain, CallDepthMax, check.MaxCallDepth)
		} else {
			l.report(source.Warning, CodeCallDepth, fi.f.NameSpan, fix,
				"%s starts a chain of %d functions calling each other (%s); production rejects more than %d on one call stack",
				fi.f.Name, d, chain, CallDepthMax)
		}
	}
}
