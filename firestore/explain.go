package firestore

import (
	"github.com/pyric/pyric/explain"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
)

// Explained is d's traced explanation in the terms events carry it (the
// deciding rule, its trace, the whole decision); false when d carries
// none (no rules loaded, admin).
func (d AuthzDecision) Explained() (sim.Explained, bool) {
	x, ok := d.Explanation.(*fsrules.Decision)
	if !ok || x == nil {
		return sim.Explained{}, false
	}
	return sim.Explain(ServiceName, d.Reason, x.Trace, x.Deciding, x.Notes, x.Expressions, x.Lookups), true
}

// Lines explains d as explain.Lines does an event's decision: nil when it
// carries no traced explanation.
func (d AuthzDecision) Lines() []string {
	exp, ok := d.Explained()
	if !ok {
		return nil
	}
	return explain.Lines(exp.Decision, exp.Trace)
}
