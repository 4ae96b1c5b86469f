package rtdb

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestSimulateGolden runs a few cases through Simulate and compares the
// shared sim JSON and text reports with testdata/simulate.golden.*.
func TestSimulateGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "simulate.rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := source.NewFile("simulate.rules.json", string(src))
	rs, diags := Compile(file)
	if rs == nil {
		t.Fatal(diags)
	}
	alice := &Auth{UID: "alice", Provider: "anonymous", Token: map[string]any{"firebase": map[string]any{"sign_in_provider": "anonymous"}}}
	data := decode(t, `{"users": {"bob": {"name": "Bob"}}, "counters": {"c": 4}}`)
	report := rs.Simulate([]Case{
		{Description: "owner writes profile", Expectation: sim.Allow, Operation: Write, Path: "/users/alice", Auth: alice, Data: data,
			NewData: decode(t, `{"name": "Alice"}`), Now: testNow},
		{Description: "name must be a string", Expectation: sim.Deny, Operation: Write, Path: "/users/alice", Auth: alice, Data: data,
			NewData: decode(t, `{"name": 7}`), Now: testNow},
		{Description: "signed-out read", Expectation: sim.Deny, Operation: Read, Path: "/users/bob", Data: data, Now: testNow},
		{Description: "counter increments by one", Expectation: sim.Allow, Operation: Write, Path: "/counters/c", Auth: alice, Data: data,
			NewData: 5.0, Now: testNow},
		{Description: "wrong expectation", Expectation: sim.Allow, Operation: Write, Path: "/counters/c", Auth: alice, Data: data,
			NewData: 7.0, Now: testNow},
		{Description: "no rule", Expectation: sim.Deny, Operation: Read, Path: "/elsewhere", Auth: alice, Data: data, Now: testNow},
		{Description: "invalid path", Expectation: sim.Deny, Operation: Read, Path: "/a.b", Auth: alice, Data: data, Now: testNow},
	})
	if report.Passed != 6 || report.Failed != 1 {
		t.Errorf("passed %d failed %d, want 6 and 1", report.Passed, report.Failed)
	}
	var js, text bytes.Buffer
	if err := sim.WriteJSON(&js, report); err != nil {
		t.Fatal(err)
	}
	sim.WriteText(&text, file, report)
	for name, got := range map[string][]byte{"simulate.golden.json": js.Bytes(), "simulate.golden.txt": text.Bytes()} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs (run with -update after checking):\n%s", path, got)
		}
	}
}
