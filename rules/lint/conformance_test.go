package lint

import (
	"testing"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/source"
)

// TestConformanceRulesetsHaveNoErrors lints every ruleset production
// accepted (it compiled and returned verdicts): none may get an
// error-severity diagnostic, since an error means "this does not work in
// production". Warnings are expected (the scenarios probe the language,
// not good practice).
func TestConformanceRulesetsHaveNoErrors(t *testing.T) {
	t.Parallel()
	for _, svc := range []struct{ name, service string }{{"firestore", Firestore}, {"storage", Storage}} {
		scenarios, err := conformance.Load(svc.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scenarios {
			f := source.NewFile(s.ID+".rules", s.Rules)
			res := Lint(f, Options{Service: svc.service})
			if res.ParseFailed {
				t.Errorf("%s/%s: does not parse", svc.name, s.ID)
			}
			for _, d := range res.Diagnostics {
				if d.Severity == source.Error {
					t.Errorf("%s/%s: %s", svc.name, s.ID, source.Render(f, d))
				} else if testing.Verbose() {
					t.Logf("%s/%s: %s %s", svc.name, s.ID, d.Code, d)
				}
			}
		}
	}
}
