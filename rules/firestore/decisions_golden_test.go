package firestore

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/internal/golden"
	"github.com/pyric/pyric/rules/sim"
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
	var lines golden.Lines
	var rs *Ruleset
	compiled := ""
	err := conformance.EachCase("firestore", func(s conformance.Scenario, c Case) error {
		if s.ID != compiled {
			var diags []source.Diagnostic
			if rs, diags = Compile(source.NewFile("firestore.rules", s.Rules)); rs == nil {
				return fmt.Errorf("%s: %v", s.ID, diags)
			}
			compiled = s.ID
		}
		rep, err := rs.Simulate([]Case{c}, now)
		if err != nil {
			return err
		}
		lines.Add(t, struct {
			Scenario string
			Case     sim.Case
		}{s.ID, rep.Results[0]})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lines.Check(t, "testdata/decisions.golden.json", *updateDecisions)
}
