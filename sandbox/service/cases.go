package service

import (
	"fmt"

	"github.com/pyric/pyric/event"
)

// CaseDeriver is implemented by a service whose recorded requests become
// simulator cases: the input `pyric <service> rules simulate --stdin`
// reads, each case expecting the verdict the session recorded. Verify
// derives a session's cases through it, naming no service.
type CaseDeriver interface {
	Name() string
	// DeriveCases writes the session's client requests of the service
	// as cases decided with rulesSource (the candidate, else the rules
	// the session recorded). It returns the *Cases value, its number of
	// cases and its number of events it could not write as one.
	DeriveCases(s *Session, rulesSource string) (cases any, n, unsupported int, err error)
}

// Cases is a session turned into simulator input, with which event each
// case came from.
type Cases[C any] struct {
	Source      string        `json:"source"`
	TestCases   []C           `json:"testCases"`
	Derived     []DerivedCase `json:"derived"`
	Warnings    []string      `json:"warnings"`
	Unsupported []string      `json:"unsupportedEvents"`
}

// NewCases is empty cases of rulesSource.
func NewCases[C any](rulesSource string) *Cases[C] {
	return &Cases[C]{Source: rulesSource, TestCases: []C{}, Derived: []DerivedCase{}, Warnings: []string{}, Unsupported: []string{}}
}

// Add appends a case derived from ev.
func (c *Cases[C]) Add(ev *event.Event, tc C) {
	c.Derived = append(c.Derived, DerivedCase{EventID: ev.ID, Index: len(c.TestCases)})
	c.TestCases = append(c.TestCases, tc)
}

// DerivedCase ties a case to its event.
type DerivedCase struct {
	EventID string `json:"eventId"`
	Index   int    `json:"index"`
}

// CaseExpectation is a simulator case's expectation of a recorded
// verdict ("ALLOW", "DENY"); ok is false for a verdict no case expects.
func CaseExpectation(v event.Verdict) (exp string, ok bool) {
	switch v {
	case event.Allow:
		return "ALLOW", true
	case event.Deny:
		return "DENY", true
	}
	return "", false
}

// CaseDescription describes the case of a recorded request: its event,
// method, path and who asked.
func CaseDescription(ev *event.Event) string {
	who := string(ev.Identity.Lens)
	if ev.Identity.Lens == event.LensUser {
		who = "uid " + ev.Identity.UID
	}
	return fmt.Sprintf("%s %s %s (%s)", ev.ID, ev.Method, ev.Path, who)
}
