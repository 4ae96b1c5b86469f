package rtdb

import (
	"time"

	"github.com/pyric/pyric/rules/sim"
)

// Case is one simulated request with its expected outcome.
type Case struct {
	Description string
	Expectation sim.Outcome // sim.Allow or sim.Deny
	Operation   Operation
	Path        string
	Auth        *Auth
	Data        any // the whole database before the request
	NewData     any // the value a write sets at Path
	Now         time.Time
	Query       *Query // a read's query (`query`); nil for a plain read
}

// Simulate evaluates every case with full traces and reports the results.
// A case whose request is invalid (e.g. an illegal key in its path) is
// reported as denied with the reason in its notes.
func (rs *Ruleset) Simulate(cases []Case) *sim.Report {
	r := &sim.Report{Results: []sim.Case{}}
	for _, c := range cases {
		d, err := rs.Evaluate(Request{
			Operation: c.Operation, Path: c.Path, Auth: c.Auth,
			Data: c.Data, NewData: c.NewData, Now: c.Now, Query: c.Query, Trace: true,
		})
		decision := sim.Deny
		notes := d.Notes
		if err != nil {
			notes = append(notes, "request rejected: "+err.Error())
		} else if d.Allowed {
			decision = sim.Allow
		}
		r.Add(sim.NewCase(c.Description, c.Expectation, decision, d.Rules, notes, d.Deciding))
	}
	return r
}
