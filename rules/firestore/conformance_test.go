package firestore

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// TestConformance asserts production's recorded verdict for every case of
// every recorded Firestore scenario.
// conformance: firestore-rules.verdicts
func TestConformance(t *testing.T) {
	scenarios, err := conformance.Load("firestore")
	if err != nil {
		t.Fatal(err)
	}
	total, passed := 0, 0
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range scenarios {
		rs, diags := Compile(source.NewFile("firestore.rules", s.Rules))
		if rs == nil {
			t.Errorf("%s: does not compile: %v", s.ID, diags)
			total += len(s.Cases)
			continue
		}
		for _, raw := range s.Cases {
			var c Case
			if err := conformance.Decode(raw, &c); err != nil {
				t.Fatal(err)
			}
			var rec conformance.Case
			json.Unmarshal(raw, &rec)
			total++
			rep, err := rs.Simulate([]Case{c}, now)
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Results[0]
			if got.Decision == sim.Outcome(rec.Production) {
				passed++
				continue
			}
			t.Errorf("%s / %s: got %s, production %s\n  notes: %s\n  trace: %s", s.ID, rec.Description, got.Decision, rec.Production,
				strings.Join(got.Notes, "; "), traceSummary(got))
		}
	}
	t.Logf("firestore conformance: %d/%d cases match production", passed, total)
}

func traceSummary(c sim.Case) string {
	var parts []string
	for _, r := range c.Trace {
		parts = append(parts, string(r.Verdict)+" "+r.Condition+" "+r.Message)
	}
	return strings.Join(parts, " | ")
}
