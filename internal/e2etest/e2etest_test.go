package e2etest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records the errors it is given.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}

// TestRunStepsExit: a script that exits non-zero though every step passed
// fails the test; one whose non-zero exit a failed step explains leaves
// the verdict to the checks; a clean run reports nothing.
func TestRunStepsExit(t *testing.T) {
	NeedNode(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"crash.cjs":  `console.log(JSON.stringify({step: "a", ok: true, got: 1})); process.exit(2);`,
		"failed.cjs": `console.log(JSON.stringify({step: "a", ok: false, error: "no"})); process.exit(1);`,
		"clean.cjs":  `console.log("noise"); console.log(JSON.stringify({step: "a", ok: true, got: [1]}));`,
		"early.cjs":  `throw new Error("no step");`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		script string
		errs   string
	}{
		{"crash.cjs", "every step it printed passed"},
		{"failed.cjs", ""},
		{"clean.cjs", ""},
		{"early.cjs", "before printing a step"},
	} {
		r := &recorder{TB: t}
		steps := RunSteps(r, time.Minute, dir, c.script)
		if c.script != "early.cjs" && (len(steps) != 1 || steps[0].Step != "a") {
			t.Errorf("%s: steps %+v, want the one step a", c.script, steps)
		}
		got := strings.Join(r.errors, "\n")
		if c.errs == "" && got != "" || c.errs != "" && !strings.Contains(got, c.errs) {
			t.Errorf("%s: errors %q, want %q", c.script, got, c.errs)
		}
	}
}

func TestSameJSON(t *testing.T) {
	for _, c := range []struct {
		got, want string
		same      bool
	}{
		{`{"a":1,"b":[2]}`, `{"b":[2], "a":1.0}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`not json`, `null`, false},
	} {
		if SameJSON([]byte(c.got), c.want) != c.same {
			t.Errorf("SameJSON(%s, %s) = %v", c.got, c.want, !c.same)
		}
	}
}

// checkCases are CheckSteps runs that TestCheckSteps expects to fail
// (with the message given) or, with "", to pass.
var checkCases = map[string]struct {
	steps []Step
	want  Want
	fails string
}{
	"pass":        {[]Step{{Step: "a", OK: true, Got: []byte(`1`)}, {Step: "b", OK: true}}, Want{Steps: map[string]string{"a": "1"}}, ""},
	"wrong value": {[]Step{{Step: "a", OK: true, Got: []byte(`2`)}}, Want{Steps: map[string]string{"a": "1"}}, "got 2, want 1"},
	"failed step": {[]Step{{Step: "b", Error: "boom"}}, Want{}, "failed: boom"},
	"did not run": {nil, Want{Steps: map[string]string{"a": "1"}}, `step "a" did not run`},
	"unlisted":    {[]Step{{Step: "b", OK: true}}, Want{Listed: true}, "unexpected step"},
	"known gap":   {[]Step{{Step: "a", Error: "gap"}}, Want{Known: map[string]string{"a": "issue 1"}}, ""},
	"normalized":  {[]Step{{Step: "a", OK: true, Got: []byte(`{"g":7}`)}}, Want{Steps: map[string]string{"a": `{"g":"G"}`}, Normalize: func(string, json.RawMessage) json.RawMessage { return []byte(`{"g":"G"}`) }}, ""},
}

// TestCheckSteps runs each case in a child test process (a failing check
// fails the test it runs in) and checks its verdict.
func TestCheckSteps(t *testing.T) {
	if name := os.Getenv("E2ETEST_CHECK_CASE"); name != "" {
		c := checkCases[name]
		CheckSteps(t, c.steps, c.want)
		return
	}
	for name, c := range checkCases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckSteps$", "-test.v")
		cmd.Env = append(os.Environ(), "E2ETEST_CHECK_CASE="+name)
		out, err := cmd.CombinedOutput()
		switch {
		case c.fails == "" && err != nil:
			t.Errorf("%s: failed:\n%s", name, out)
		case c.fails != "" && (err == nil || !strings.Contains(string(out), c.fails)):
			t.Errorf("%s: want a failure saying %q, got (%v):\n%s", name, c.fails, err, out)
		}
	}
}
