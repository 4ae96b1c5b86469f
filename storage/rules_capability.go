package storage

import (
	"github.com/pyric/pyric/rules/coverage"
	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/sandbox/service"
)

// The service.LiveRules capability.

// RulesFileName implements service.LiveRules.
func (e *Engine) RulesFileName() string { return "storage.rules" }

// RulesFile implements service.LiveRules: the rules in force.
func (e *Engine) RulesFile() (name, text string, loaded bool) { return e.live.Base() }

// SetRulesFile implements service.LiveRules (SetRules).
func (e *Engine) SetRulesFile(name, text string) (source.Diagnostics, error) {
	return e.live.Set(name, text)
}

// CheckRules implements service.LiveRules: compile, then lint what
// compiles.
func (e *Engine) CheckRules(name, text string) (compiles bool, diags, findings source.Diagnostics) {
	f := source.NewFile(name, text)
	rs, ds := srules.Compile(f)
	if rs == nil {
		return false, ds, nil
	}
	return true, ds, lint.Lint(f, lint.Options{Service: lint.Storage}).Diagnostics
}

// CollectCoverage implements service.LiveRules.
func (e *Engine) CollectCoverage() { e.live.CollectCoverage() }

// RulesView implements service.LiveRules: the rules in force and their
// coverage (scope is not used: Storage's rules have one scope).
func (e *Engine) RulesView(scope string) service.RulesView {
	name, text, loaded := e.live.Base()
	if name == "" {
		name = e.RulesFileName()
	}
	cov := []coverage.Expr{}
	if c := e.live.Coverage(""); c != nil {
		cov = c.Summary()
	}
	return service.RulesView{Name: name, Text: text, Loaded: loaded, Coverage: cov}
}
