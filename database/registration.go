package database

import (
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// Registration adds the database to a sandbox (service name "database").
func Registration(opts Options) service.Registration {
	return service.Registration{Name: serviceName, New: Factory(opts)}
}

// BaseRules is the rules every namespace without rules of its own runs
// under: what `pyric serve` loads from database.rules.json and
// hot-reloads.
type BaseRules struct{ d *Database }

// BaseRules returns the database's base rules handle.
func (d *Database) BaseRules() BaseRules { return BaseRules{d} }

// Set compiles text and, when it compiles, makes it the base rules;
// otherwise the rules in force stay and the diagnostics say why.
func (b BaseRules) Set(name, text string) (source.Diagnostics, error) {
	if _, diags := rtdb.Compile(source.NewFile(name, text)); diags.HasErrors() {
		return diags, diags
	}
	b.d.mu.Lock()
	b.d.opts.RulesName = name
	b.d.mu.Unlock()
	return nil, b.d.SetDefaultRules(text)
}

// Base returns the base rules in force and whether any are loaded.
func (b BaseRules) Base() (name, text string, loaded bool) {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	name = b.d.opts.RulesName
	if name == "" {
		name = "database.rules.json"
	}
	_, text, loaded = b.d.live.Base()
	return name, text, loaded
}
