package firestore

import (
	"flag"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/golden"
	"github.com/pyric/pyric/rules/source"
)

var updateDecisions = flag.Bool("update-decisions", false, "rewrite testdata/decisions.golden.json")

// TestDecisionsGolden pins the traced explanation of every conformance
// case — each rule's rendered sub-expression trace and failing set, the
// notes, bindings and lookups (sim.Explain of them has its own test) — as
// the evaluator wrote them before the rendering was made to allocate
// less: that work must not change a byte.
func TestDecisionsGolden(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	compiled := map[string]*Ruleset{}
	golden.Decisions(t, "firestore", "testdata/decisions.golden.json", *updateDecisions, func(rules string, c Case) (any, error) {
		rs := compiled[rules]
		if rs == nil {
			var diags source.Diagnostics
			if rs, diags = Compile(source.NewFile("firestore.rules", rules)); rs == nil {
				return nil, diags
			}
			compiled[rules] = rs
		}
		rep, err := rs.Simulate([]Case{c}, now)
		if err != nil {
			return nil, err
		}
		return rep.Results[0], nil
	})
}
