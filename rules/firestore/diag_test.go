package firestore

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/source"
)

// TestConformanceDiagnostics checks that, where production recorded an
// error note, the simulator reports the same message at the same line and
// column ("Error: firestore.rules line [6], column [24]. Property x is
// undefined on object.").
func TestConformanceDiagnostics(t *testing.T) {
	scenarios, _ := conformance.Load("firestore")
	total, exact := 0, 0
	for _, s := range scenarios {
		rs, _ := Compile(source.NewFile("firestore.rules", s.Rules))
		for _, raw := range s.Cases {
			var c Case
			conformance.Decode(raw, &c)
			var rec struct {
				Description           string
				Production            string
				ProductionDiagnostics struct{ Notes []string }
			}
			json.Unmarshal(raw, &rec)
			if len(rec.ProductionDiagnostics.Notes) == 0 {
				continue
			}
			// getAfter is unknown to the hosted Test API; production's
			// verdict for it came from real deployed rules.
			if strings.Contains(rec.ProductionDiagnostics.Notes[0], "[getAfter]") {
				continue
			}
			total++
			rep, err := rs.Simulate([]Case{c}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Results[0]
			want := rec.ProductionDiagnostics.Notes[0]
			found := false
			for _, n := range got.Notes {
				if n == want {
					found = true
				}
			}
			if found {
				exact++
			} else {
				t.Errorf("%s / %s:\n  want note %q\n  got notes %q", s.ID, rec.Description, want, got.Notes)
			}
		}
	}
	t.Logf("%d/%d production error notes reproduced exactly", exact, total)
}
