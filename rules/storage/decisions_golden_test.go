package storage

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
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
	scenarios, err := conformance.Load("storage")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	for _, s := range scenarios {
		rs, diags := Compile(source.NewFile("storage.rules", s.Rules))
		if rs == nil {
			t.Fatalf("%s: %v", s.ID, diags)
		}
		for _, raw := range s.Cases {
			var c Case
			if err := conformance.Decode(raw, &c); err != nil {
				t.Fatal(err)
			}
			rep, err := rs.Simulate([]Case{c}, now)
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Results[0]
			line, err := json.Marshal(struct {
				Scenario string
				Case     sim.Case
			}{s.ID, got})
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	const golden = "testdata/decisions.golden.json"
	if *updateDecisions {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		g, w := strings.Split(buf.String(), "\n"), strings.Split(string(want), "\n")
		for i := range g {
			if i >= len(w) || g[i] != w[i] {
				t.Fatalf("decisions differ from %s at line %d:\n got %s", golden, i+1, g[i])
			}
		}
		t.Fatalf("decisions differ from %s", golden)
	}
}
