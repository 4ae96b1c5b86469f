package live_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pyric/pyric/rules/live"
	"github.com/pyric/pyric/rules/source"
)

// toyRules compile when the text has no "!": the compiled rules are the
// text upper-cased; a line starting with "warn" is a warning.
func toyRules(changed *atomic.Int32) *live.Rules[string, *int] {
	return live.New(live.Options[string, *int]{
		DefaultName: "toy.rules",
		Compile: func(f *source.File) (string, source.Diagnostics, bool) {
			var ds source.Diagnostics
			if i := strings.Index(f.Text, "!"); i >= 0 {
				ds = append(ds, source.Diagnostic{Severity: source.Error, Message: "bang",
					Span: source.Span{Start: source.Pos{Line: 1, Column: i + 1}}})
				return "", ds, false
			}
			if strings.HasPrefix(f.Text, "warn") {
				ds = append(ds, source.Diagnostic{Severity: source.Warning, Message: "careful"})
			}
			return strings.ToUpper(f.Text), ds, true
		},
		NewCoverage: func(string) *int { return new(int) },
		Changed:     func() { changed.Add(1) },
	})
}

func TestKeepLastGood(t *testing.T) {
	var changed atomic.Int32
	l := toyRules(&changed)
	if _, _, loaded := l.Base(); loaded {
		t.Fatal("loaded before any Set")
	}
	if rs := l.For("p"); rs != nil {
		t.Fatalf("For without rules = %v", rs)
	}
	diags, err := l.Set("", "warn a")
	if err != nil || len(diags) != 1 {
		t.Fatalf("Set = %v, %v", diags, err)
	}
	if name, text, loaded := l.Base(); name != "toy.rules" || text != "warn a" || !loaded {
		t.Fatalf("Base = %q %q %v", name, text, loaded)
	}
	if got := l.For("p").Compiled; got != "WARN A" {
		t.Fatalf("compiled %q", got)
	}
	if w := l.Warnings("p"); len(w) != 1 || w[0].Message != "careful" {
		t.Fatalf("warnings %v", w)
	}
	_, err = l.Set("x.rules", "bad!")
	var ce *live.CompileError
	if !errors.As(err, &ce) || ce.Error() != "x.rules:1:4: bang" || ce.EmulatorMessage() != "Error compiling rules:\nL1:4 bang" {
		t.Fatalf("err = %v", err)
	}
	if _, text, _ := l.Base(); text != "warn a" {
		t.Fatalf("last good rules not kept: %q", text)
	}
	if changed.Load() != 1 {
		t.Fatalf("changed %d times, want 1 (a failed Set swaps nothing)", changed.Load())
	}
}

func TestScopes(t *testing.T) {
	var changed atomic.Int32
	l := toyRules(&changed)
	l.SetHome("home")
	if _, err := l.Set("f", "base"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "home"} {
		if _, err := l.SetScope(s, "f", "own "+s); err != nil {
			t.Fatal(err)
		}
	}
	if _, text, _ := l.Source("a"); text != "own a" {
		t.Fatalf("a runs %q", text)
	}
	if _, text, _ := l.Source("b"); text != "base" {
		t.Fatalf("b runs %q", text)
	}
	if l.Own("b") != nil || l.Own("a") == nil {
		t.Fatal("Own")
	}
	// A new rules file replaces the home scope's own rules, not others'.
	if _, err := l.Set("f", "base2"); err != nil {
		t.Fatal(err)
	}
	if _, text, _ := l.Source("home"); text != "base2" {
		t.Fatalf("home runs %q after a new file", text)
	}
	if _, text, _ := l.Source("a"); text != "own a" {
		t.Fatalf("a runs %q after a new file", text)
	}
	l.ClearScope("a")
	if _, text, _ := l.Source("a"); text != "base2" {
		t.Fatalf("a runs %q after ClearScope", text)
	}
	l.Clear()
	if _, _, loaded := l.Source("a"); loaded {
		t.Fatal("rules after Clear")
	}
}

func TestCoverage(t *testing.T) {
	var changed atomic.Int32
	l := toyRules(&changed)
	var zero *int
	if c := l.Coverage("p"); c != zero {
		t.Fatal("coverage without rules")
	}
	if l.Counting() {
		t.Fatal("counting before CollectCoverage")
	}
	l.CollectCoverage()
	if !l.Counting() {
		t.Fatal("not counting")
	}
	l.Set("f", "r")
	*l.Coverage("p") += 2
	*l.Coverage("q") += 1
	if *l.Coverage("p") != 2 || *l.Coverage("q") != 1 {
		t.Fatal("coverage is not per scope")
	}
	l.For("p").ResetCoverage("p")
	if *l.Coverage("p") != 0 || *l.Coverage("q") != 1 {
		t.Fatal("ResetCoverage")
	}
	// New rules count afresh.
	l.Set("f", "r2")
	if *l.Coverage("q") != 0 {
		t.Fatal("coverage carried over to new rules")
	}
}
