// Package golden compares what a test renders with a file kept beside it
// in testdata/: a test builds its output as JSON lines, one per case, so a
// difference names the first case that changed; with the test's update
// flag set, the file is rewritten from the output instead.
package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// Lines is a golden file's content, one JSON value per line.
type Lines struct {
	buf bytes.Buffer
}

// Add appends v, encoded as one line of JSON.
func (l *Lines) Add(t testing.TB, v any) {
	t.Helper()
	line, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	l.buf.Write(line)
	l.buf.WriteByte('\n')
}

// Check fails t unless the lines are the file at path byte for byte,
// naming the first line that differs; with update it first writes them
// there.
func (l *Lines) Check(t testing.TB, path string, update bool) {
	t.Helper()
	got := l.buf.Bytes()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range g {
		if i >= len(w) || g[i] != w[i] {
			t.Fatalf("%s differs at line %d (rerun with the update flag only if the change is intended):\n got %s", path, i+1, g[i])
		}
	}
	t.Fatalf("%s has %d lines more than the test renders", path, len(w)-len(g))
}

// decisions renders one line per conformance case recorded for service
// (conformance.EachCase): the scenario's ID and what decide, given the
// scenario's rules and the case, returns; and checks the lines against
// the file at path (Check).
func decisions[C any](t testing.TB, service, path string, update bool, decide func(rules string, c C) (any, error)) {
	t.Helper()
	var lines Lines
	err := conformance.EachCase(service, func(s conformance.Scenario, c C) error {
		got, err := decide(s.Rules, c)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID, err)
		}
		lines.Add(t, struct {
			Scenario string
			Case     any
		}{s.ID, got})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lines.Check(t, path, update)
}

// RulesDecisions is decisions of a rules engine: each recorded case of
// service simulated (at now) against its scenario's rules, compiled once
// per ruleset as a file named service.rules.
func RulesDecisions[R, C any](t testing.TB, service, path string, update bool, now time.Time,
	compile func(*source.File) (*R, source.Diagnostics),
	simulate func(*R, []C, time.Time) (*sim.Report, error)) {
	t.Helper()
	compiled := map[string]*R{}
	decisions(t, service, path, update, func(rules string, c C) (any, error) {
		rs := compiled[rules]
		if rs == nil {
			var diags source.Diagnostics
			if rs, diags = compile(source.NewFile(service+".rules", rules)); rs == nil {
				return nil, diags
			}
			compiled[rules] = rs
		}
		rep, err := simulate(rs, []C{c}, now)
		if err != nil {
			return nil, err
		}
		return rep.Results[0], nil
	})
}
