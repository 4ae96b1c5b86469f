package lint

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/storage"
)

// DefaultBucket is the bucket a Storage case names when it has none.
const DefaultBucket = storage.DefaultBucket

// readsTime reports whether a rule reads request.time, directly or in a
// function it calls, and where in its condition: the request.time itself,
// or the call that leads to it.
func readsTime(r *rule) (ast.Expr, bool) {
	if r.facts.time != nil {
		return r.facts.time, true
	}
	for _, cs := range r.facts.calls {
		for fi := range reachable([]callSite{cs}) {
			if fi.facts.time != nil {
				return cs.call, true
			}
		}
	}
	return nil, false
}

// caseSegments turns a case's path into the segments match blocks see.
func (l *linter) caseSegments(c Case) []string {
	rel := strings.Trim(c.Path, "/")
	if l.svc.storage {
		bucket := c.Bucket
		if bucket == "" {
			bucket = DefaultBucket
		}
		return storage.Segments(bucket, rel)
	}
	segs := []string{"databases", "(default)", "documents"}
	if rel != "" {
		segs = append(segs, strings.Split(rel, "/")...)
	}
	if strings.ToLower(c.Method) == "list" && (len(segs)-3)%2 == 1 {
		segs = append(segs, eval.Hypothetical) // a collection: its documents
	}
	return segs
}

// requestTime reports, for each test case without requestTime, the rules it
// reaches that read request.time: their verdict depends on the wall clock,
// so the case passes or fails depending on when it runs.
func (l *linter) requestTime() {
	for i, c := range l.opts.Cases {
		if c.RequestTime != "" || c.Path == "" {
			continue
		}
		method := strings.ToLower(c.Method)
		desc := c.Description
		if desc == "" {
			desc = fmt.Sprintf("case %d", i+1)
		}
		matched, _ := l.m.prog.Match(l.caseSegments(c))
		for _, mt := range matched {
			for _, r := range l.m.rules {
				if r.block != mt.Block || !r.methods[method] {
					continue
				}
				at, ok := readsTime(r)
				if !ok {
					continue
				}
				how := "reads request.time"
				if _, call := at.(*ast.Call); call {
					how = fmt.Sprintf("reads request.time through %s", srcText(l.file, at.(*ast.Call).Fn.Span())+"()")
				}
				l.report(source.Warning, CodeRequestTime, spanOf(at),
					fmt.Sprintf("add \"requestTime\": \"2026-01-01T00:00:00Z\" (any fixed ISO-8601 time) to test case %q", desc),
					"test case %q (%s %s) sets no requestTime, and %s %s: its verdict depends on when the test runs",
					desc, method, c.Path, ruleLabel(r), how)
			}
		}
	}
}
