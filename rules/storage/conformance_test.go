package storage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// recorded is what a Storage conformance case records beyond the case
// itself: production's verdict and, for some cases, its hosted diagnostics.
type recorded struct {
	Description           string
	Production            string
	ProductionDiagnostics struct {
		Notes []string
		API   struct {
			VisitedExpressions []struct {
				SourcePosition struct{ Line, Column, CurrentOffset int }
				Value          any
			}
		}
	}
}

type conformanceCase struct {
	scenario string
	rs       *Ruleset
	c        Case
	rec      recorded
}

func loadConformance(t *testing.T) []conformanceCase {
	t.Helper()
	scenarios, err := conformance.Load("storage")
	if err != nil {
		t.Fatal(err)
	}
	var out []conformanceCase
	for _, s := range scenarios {
		rs, diags := Compile(source.NewFile("storage.rules", s.Rules))
		if rs == nil {
			t.Fatalf("%s: does not compile: %v", s.ID, diags)
		}
		for _, raw := range s.Cases {
			cc := conformanceCase{scenario: s.ID, rs: rs}
			if err := conformance.Decode(raw, &cc.c); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &cc.rec); err != nil {
				t.Fatal(err)
			}
			out = append(out, cc)
		}
	}
	return out
}

// TestConformance asserts production's recorded verdict for every case of
// every recorded Storage scenario.
// conformance: storage-rules.verdicts
func TestConformance(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	cases := loadConformance(t)
	passed := 0
	for _, cc := range cases {
		rep, err := cc.rs.Simulate([]Case{cc.c}, now)
		if err != nil {
			t.Fatalf("%s / %s: %v", cc.scenario, cc.rec.Description, err)
		}
		got := rep.Results[0]
		if got.Decision == sim.Outcome(cc.rec.Production) {
			passed++
			continue
		}
		t.Errorf("%s / %s: got %s, production %s\n  notes: %s\n  trace: %s", cc.scenario, cc.rec.Description,
			got.Decision, cc.rec.Production, strings.Join(got.Notes, "; "), traceSummary(got))
	}
	if len(cases) != 69 {
		t.Errorf("expected 69 recorded cases, found %d", len(cases))
	}
	t.Logf("storage conformance: %d/%d cases match production", passed, len(cases))
}

// TestConformanceDiagnostics checks production's recorded diagnostics: every
// error note (none are recorded for Storage so far, but the check is here
// for when they are) must be among the simulator's notes, and every visited
// expression production reports (the allow condition it evaluated, with
// its line, column and value) must be in the simulator's trace at the same
// position with the same value.
func TestConformanceDiagnostics(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	notes, notesOK, visited, visitedOK := 0, 0, 0, 0
	for _, cc := range loadConformance(t) {
		diag := cc.rec.ProductionDiagnostics
		if len(diag.Notes) == 0 && len(diag.API.VisitedExpressions) == 0 {
			continue
		}
		rep, err := cc.rs.Simulate([]Case{cc.c}, now)
		if err != nil {
			t.Fatal(err)
		}
		got := rep.Results[0]
		for _, want := range diag.Notes {
			notes++
			if contains(got.Notes, want) {
				notesOK++
			} else {
				t.Errorf("%s / %s:\n  want note %q\n  got notes %q", cc.scenario, cc.rec.Description, want, got.Notes)
			}
		}
		for _, ve := range diag.API.VisitedExpressions {
			visited++
			want := jsonValue(ve.Value)
			found := false
			for _, rule := range got.Trace {
				for _, e := range rule.Expressions {
					if e.Depth == 0 && e.Line == ve.SourcePosition.Line && e.Column == ve.SourcePosition.Column && e.Value == want {
						found = true
					}
				}
			}
			if found {
				visitedOK++
			} else {
				t.Errorf("%s / %s: production visited line %d column %d = %s; trace: %s", cc.scenario, cc.rec.Description,
					ve.SourcePosition.Line, ve.SourcePosition.Column, want, traceSummary(got))
			}
		}
	}
	t.Logf("storage diagnostics: %d/%d production error notes, %d/%d production visited expressions reproduced", notesOK, notes, visitedOK, visited)
}

func jsonValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func traceSummary(c sim.Case) string {
	var parts []string
	for _, r := range c.Trace {
		s := string(r.Verdict) + " " + r.Condition
		if r.Message != "" {
			s += " (" + r.Message + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}
