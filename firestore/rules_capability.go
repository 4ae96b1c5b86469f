package firestore

import (
	"github.com/pyric/pyric/rules/coverage"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// The service.LiveRules capability, on the engine's LiveRules.

// RulesFileName implements service.LiveRules.
func (e *Engine) RulesFileName() string { return "firestore.rules" }

// RulesFile implements service.LiveRules: the rules file every project
// without rules of its own runs under. Reading it does not make the live
// rules the engine's gate: an engine gated by other rules (SetRules, as
// the MCP simulator does) has no rules file loaded.
func (e *Engine) RulesFile() (name, text string, loaded bool) {
	if lr, ok := e.Rules().(*LiveRules); ok {
		return lr.Base()
	}
	return "", "", false
}

// SetRulesFile implements service.LiveRules (LiveRules.Set).
func (e *Engine) SetRulesFile(name, text string) (source.Diagnostics, error) {
	return e.LiveRules().Set(name, text)
}

// CheckRules implements service.LiveRules: compile, then lint what
// compiles.
func (e *Engine) CheckRules(name, text string) (compiles bool, diags, findings source.Diagnostics) {
	f := source.NewFile(name, text)
	rs, ds := fsrules.Compile(f)
	if rs == nil {
		return false, ds, nil
	}
	return true, ds, lint.Lint(f, lint.Options{}).Diagnostics
}

// CollectCoverage implements service.LiveRules.
func (e *Engine) CollectCoverage() { e.LiveRules().CollectCoverage() }

// RulesView implements service.LiveRules: the rules file every project
// runs under without rules of its own, with its coverage in the service's
// project (scope is not used: Firestore's rules file has one scope). The
// Studio's session tools (indexes, fixtures, a branch re-run) are
// Firestore's, so the view says they apply.
func (s *Service) RulesView(scope string) service.RulesView {
	lr := s.Engine.LiveRules()
	name, text, loaded := lr.Base()
	if name == "" {
		name = s.RulesFileName()
	}
	cov := []coverage.Expr{}
	if c := lr.Coverage(s.def.Project); c != nil && loaded {
		cov = c.Summary()
	}
	return service.RulesView{Name: name, Text: text, Loaded: loaded, Coverage: cov, Facts: map[string]any{"sessionTools": true}}
}
