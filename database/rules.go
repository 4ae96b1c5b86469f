package database

import (
	"strings"

	"github.com/pyric/pyric/rules/live"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
)

// Rules are the database's live rules (rules/live): the rules file every
// namespace runs under (database.rules.json, hot-reloaded) and, per
// namespace, rules set for it alone (PUT /.settings/rules.json). A
// namespace's own rules may be empty source: no rules, only admin.
type Rules = live.Rules[*rtdb.Ruleset, *coverage]

// ruleset is one loaded rules file with its coverage per namespace.
type ruleset = live.Ruleset[*rtdb.Ruleset, *coverage]

func newRules() *Rules {
	return live.New(live.Options[*rtdb.Ruleset, *coverage]{
		DefaultName: "database.rules.json",
		Compile: func(f *source.File) (*rtdb.Ruleset, source.Diagnostics, bool) {
			if strings.TrimSpace(f.Text) == "" {
				return nil, nil, true // no rules
			}
			rs, diags := rtdb.Compile(f)
			return rs, diags, rs != nil
		},
		NewCoverage: func(*rtdb.Ruleset) *coverage { return &coverage{} },
	})
}

// LiveRules returns the database's live rules.
func (d *Database) LiveRules() *Rules { return d.live }

// compileRules compiles rules source as the database reports a failure:
// ErrInvalidData naming every diagnostic.
func (d *Database) compileRules(name, src string) (*ruleset, error) {
	rs, diags, err := d.live.Compile(name, src)
	if err != nil {
		var msgs []string
		for _, dg := range diags {
			msgs = append(msgs, dg.String())
		}
		if name == "" {
			name = "database.rules.json"
		}
		return nil, errorf(ErrInvalidData, "invalid rules in %s: %s", name, strings.Join(msgs, "; "))
	}
	return rs, nil
}

// rules returns the namespace's rules in force (nil: none, only admin).
func (ns *namespace) rules() *rtdb.Ruleset {
	if lr := ns.live.For(ns.name); lr != nil {
		return lr.Compiled
	}
	return nil
}

// custom reports whether the namespace has rules of its own.
func (ns *namespace) custom() bool { return ns.live.Own(ns.name) != nil }

// rulesSrc is the source of the namespace's rules in force ("" for none).
func (ns *namespace) rulesSrc() string {
	if lr := ns.live.For(ns.name); lr != nil {
		return lr.Text
	}
	return ""
}
