package database

import (
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// The service.LiveRules capability.

// RulesFileName implements service.LiveRules.
func (d *Database) RulesFileName() string { return "database.rules.json" }

// RulesFormat is the format captured sessions give the Realtime
// Database's rules (capture.FormatDatabase), older than the file's name.
func (d *Database) RulesFormat() string { return "rtdb.rules.json" }

// RulesFile implements service.LiveRules: the rules every namespace
// without rules of its own runs under.
func (d *Database) RulesFile() (name, text string, loaded bool) { return d.BaseRules().Base() }

// SetRulesFile implements service.LiveRules (BaseRules.Set).
func (d *Database) SetRulesFile(name, text string) (source.Diagnostics, error) {
	return d.BaseRules().Set(name, text)
}

// CheckRules implements service.LiveRules: rtdb.Lint compiles and lints
// at once; its errors are the compile diagnostics.
func (d *Database) CheckRules(name, text string) (compiles bool, diags, findings source.Diagnostics) {
	res := rtdb.Lint(source.NewFile(name, text))
	for _, dg := range res.Diagnostics {
		if dg.Severity == source.Error {
			diags = append(diags, dg)
		} else {
			findings = append(findings, dg)
		}
	}
	return len(diags) == 0 && !res.Unparseable, diags, findings
}

// CollectCoverage implements service.LiveRules; the database counts
// coverage always.
func (d *Database) CollectCoverage() {}

// RulesView implements service.LiveRules: the rules of the namespace
// scope (the project's default namespace when empty) with each
// expression's and each rule's counts.
func (d *Database) RulesView(scope string) service.RulesView {
	if scope == "" {
		scope = d.defaultNS
	}
	text := d.Rules(scope)
	c := d.Coverage(scope)
	return service.RulesView{Name: d.RulesFileName(), Text: text, Loaded: text != "", Coverage: c.Expressions,
		Facts: map[string]any{"namespace": scope, "ruleCounts": c.Rules}}
}
