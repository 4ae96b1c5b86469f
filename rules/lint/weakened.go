package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

// shapedRule is an allow statement keyed for comparison across versions.
type shapedRule struct {
	r      *rule
	shape  string          // the block's path with wildcard names erased
	ops    string          // expanded methods, sorted
	conj   map[string]bool // fingerprints of the top-level conjuncts
	texts  map[string]string
	rename map[string]string
}

func shapeRules(m *model) []shapedRule {
	var out []shapedRule
	for _, r := range m.rules {
		shape, rename := blockShape(r.block)
		sr := shapedRule{r: r, shape: shape, ops: strings.Join(sortedKeys(r.methods), ","), conj: map[string]bool{}, texts: map[string]string{}, rename: rename}
		for _, c := range conjuncts(r.allow.Cond) {
			fp := fingerprint(c, rename)
			sr.conj[fp] = true
			sr.texts[fp] = srcText(m.file, c.Span())
		}
		out = append(out, sr)
	}
	return out
}

// weakened compares the ruleset with the previous one: a match block that
// had allow statements and is gone, an allow statement that is gone, and a
// top-level && condition an allow statement no longer has. Wildcard names
// do not matter (/users/{uid} is /users/{userId}); an || inside a
// condition counts as one condition.
func (l *linter) weakened() {
	prev := l.opts.Previous
	if prev == nil {
		return
	}
	rs, diags := parser.Parse(prev)
	if len(diags) > 0 || rs.Service == nil {
		l.report(source.Info, CodeRulesWeakened, l.file.Span(0, 0), "fix the previous ruleset, or lint without --previous",
			"the previous ruleset %s does not parse (%s), so this one was not compared with it", prev.Name, diags.Error())
		return
	}
	old := newModel(prev, rs, l.svc)
	oldRules, newRules := shapeRules(old), shapeRules(l.m)
	newShapes := map[string]*eval.Block{}
	for _, b := range l.m.blocks {
		shape, _ := blockShape(b)
		if newShapes[shape] == nil {
			newShapes[shape] = b
		}
	}
	// Match blocks that had allows and are gone.
	removedBlocks := map[string]bool{}
	for _, b := range old.blocks {
		shape, _ := blockShape(b)
		if len(b.Match.Allows) == 0 || newShapes[shape] != nil || removedBlocks[shape] {
			continue
		}
		removedBlocks[shape] = true
		var ops []string
		for _, a := range b.Match.Allows {
			ops = append(ops, strings.Join(methodNames(a), ", "))
		}
		l.report(source.Warning, CodeRulesWeakened, l.anchor(b), "restore the match block if removing it was not intended",
			"match %s (line %d of %s) is gone, with its allow %s; requests there are now decided only by the remaining rules",
			display(b.Pattern), b.Match.Span.Start.Line, prev.Name, strings.Join(ops, "; allow "))
	}
	for _, o := range oldRules {
		if removedBlocks[o.shape] {
			continue
		}
		var best *shapedRule
		bestShared := -1
		for i := range newRules {
			n := &newRules[i]
			if n.shape != o.shape || n.ops != o.ops {
				continue
			}
			shared := 0
			for fp := range o.conj {
				if n.conj[fp] {
					shared++
				}
			}
			if shared > bestShared {
				best, bestShared = n, shared
			}
		}
		label := fmt.Sprintf("allow %s at %s", strings.Join(methodNames(o.r.allow), ", "), display(o.r.block.Pattern))
		if best == nil {
			l.report(source.Warning, CodeRulesWeakened, l.anchor(o.r.block), "restore the allow statement if removing it was not intended",
				"%s (line %d of %s) is gone; those requests are now decided only by the remaining rules",
				label, o.r.allow.Span.Start.Line, prev.Name)
			continue
		}
		var missing []string
		for fp := range o.conj {
			if !best.conj[fp] {
				missing = append(missing, fp)
			}
		}
		sort.Slice(missing, func(i, j int) bool { return o.texts[missing[i]] < o.texts[missing[j]] })
		if len(best.conj) == 0 && len(o.conj) > 0 {
			missing = nil // the whole condition is gone: one diagnostic
			l.report(source.Warning, CodeRulesWeakened, best.r.allow.Span, "restore the condition if dropping it was not intended",
				"%s no longer has a condition (it was `%s` at line %d of %s): it now grants every such request",
				label, shorten(srcText(old.file, o.r.allow.Cond.Span()), 80), o.r.allow.Span.Start.Line, prev.Name)
		}
		for _, fp := range missing {
			l.report(source.Warning, CodeRulesWeakened, l.ruleSpan(best.r), "restore the condition if dropping it was not intended",
				"%s no longer requires `%s` (line %d of %s): the rule now grants more",
				label, shorten(o.texts[fp], 80), o.r.allow.Span.Start.Line, prev.Name)
		}
	}
}

// anchor is where a removal from block b (of the previous ruleset) is
// reported in this one: the closest surviving enclosing match block, else
// the service name.
func (l *linter) anchor(b *eval.Block) source.Span {
	for p := b; p != nil && p.Match != nil; p = p.Parent {
		shape, _ := blockShape(p)
		for _, nb := range l.m.blocks {
			if s, _ := blockShape(nb); s == shape {
				return nb.Match.Path.Span
			}
		}
	}
	if l.m.rs.Service != nil {
		return l.m.rs.Service.NameSpan
	}
	return l.file.Span(0, 0)
}
