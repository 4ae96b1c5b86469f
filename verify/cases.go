package verify

import (
	"errors"
	"fmt"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// Cases is a session turned into simulator input (what `pyric <service>
// rules simulate --stdin` reads), with which event each case came from.
type Cases[C any] = service.Cases[C]

// DerivedCase ties a case to its event.
type DerivedCase = service.DerivedCase

// DeriveService writes a fixture's session of one service ("firestore",
// "database", "storage", or any service.CaseDeriver among
// opts.Registrations) as that service's simulator input, deciding with
// the candidate rules opts names for it, else the captured ones. It
// returns the *Cases value with its number of cases and of unsupported
// events.
func DeriveService(f *capture.Fixture, name string, opts Options) (cases any, n, unsupported int, err error) {
	if err := opts.check(); err != nil {
		return nil, 0, 0, err
	}
	regs := opts.Registrations
	set := newReplayerSet(regs, opts.Replayers)
	defer set.close()
	s := sessionOf(f)
	s.Viewer = set.viewer
	candidate := opts.Candidates[name]
	r, err := set.named(name)
	if err != nil {
		return nil, 0, 0, err
	}
	d, ok := r.(service.CaseDeriver)
	if !ok {
		var names []string
		for _, reg := range regs {
			if r, _ := set.named(reg.Name); r != nil {
				if _, ok := r.(service.CaseDeriver); ok {
					names = append(names, reg.Name)
				}
			}
		}
		return nil, 0, 0, fmt.Errorf("%w %q: want one of %v", ErrUnknownService, name, names)
	}
	cases, n, unsupported, err = d.DeriveCases(s, RulesText(f, candidate, name))
	if err != nil {
		return nil, 0, 0, fixtureError(err)
	}
	return cases, n, unsupported, nil
}

// ErrUnknownService: DeriveService was asked for a service it doesn't know.
var ErrUnknownService = errors.New("unknown service")

// RulesText is the rules source a derivation of service decides with:
// the candidate, else the fixture's captured rules for it ("" when none).
func RulesText(f *capture.Fixture, candidate *source.File, service string) string {
	if candidate != nil {
		return candidate.Text
	}
	if sd := f.Services[service]; sd != nil && sd.Rules != nil {
		if sd.Rules.Source == "" {
			return string(sd.Rules.JSON)
		}
		return sd.Rules.Source
	}
	return ""
}
