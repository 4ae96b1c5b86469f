package firestore

import (
	"flag"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/golden"
)

var updateDecisions = flag.Bool("update-decisions", false, "rewrite testdata/decisions.golden.json")

// TestDecisionsGolden pins the traced explanation of every conformance
// case — each rule's rendered sub-expression trace and failing set, the
// notes, bindings and lookups (sim.Explain of them has its own test) — as
// the evaluator wrote them before the rendering was made to allocate
// less: that work must not change a byte.
func TestDecisionsGolden(t *testing.T) {
	golden.RulesDecisions(t, "firestore", "testdata/decisions.golden.json", *updateDecisions,
		time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Compile, (*Ruleset).Simulate)
}
