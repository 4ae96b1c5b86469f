// Package verify replays a captured session (a capture.Fixture) against
// candidate rules and reports what would change: requests whose verdict
// flips (now-denied, now-allowed), documents, database locations or
// objects whose final state differs (state-drift), requests the replay
// cannot decide (unsupported) and differences that are expected
// (expected-drift: sentinel, time and auto-id effects). It also derives
// simulator cases from a session. Verify names no service's replay: every
// service replays its own requests (service.Replayer: Firestore's
// firestore.Service.Replay on a Branch, the Realtime Database's
// database.Replay, Storage's storage.Engine.Replay), the same engines the
// Studio's re-run calls (service.Rerunner), and Run loops over the
// registrations its caller gives (Options.Registrations, e.g.
// backend.Services) that implement it, so verify imports no service.
// A replay that reads another service's recorded state (Storage rules'
// firestore.get()) finds it through the session
// (service.Session.StateAt).
package verify

import (
	"encoding/json"
	"errors"
	"sort"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// Divergence kinds.
const (
	NowDenied     = service.NowDenied
	NowAllowed    = service.NowAllowed
	StateDrift    = service.StateDrift
	Unsupported   = service.Unsupported
	ExpectedDrift = service.ExpectedDrift
)

// Divergence is one difference the replay found.
type Divergence = service.Divergence

// ServiceResult is one service's verdict.
type ServiceResult struct {
	OK bool `json:"ok"`
	// CheckedEvents is the number of client requests re-decided.
	CheckedEvents int          `json:"checkedEvents"`
	Divergences   []Divergence `json:"divergences"`
}

// add records a divergence: any but an expected drift fails the service.
func (sr *ServiceResult) add(d Divergence) {
	sr.Divergences = append(sr.Divergences, d)
	if d.Kind != ExpectedDrift {
		sr.OK = false
	}
}

// Result is the whole verdict, in the original's JSON shape.
type Result struct {
	OK       bool                      `json:"ok"`
	Services map[string]*ServiceResult `json:"services"`
}

// Options are the candidate rules; a nil one means the rules captured in
// the fixture for that service.
type Options struct {
	// Services, when set, are the services to verify (firestore,
	// database, storage, or a Replayer's name); by default every service
	// the session used or a candidate names.
	Services []string
	// Registrations are the services verify knows (e.g. backend.Services
	// with default options): each whose service is a service.Replayer
	// replays its own requests and is verified under its name. Run and
	// DeriveService fail with ErrNoServices when neither Registrations
	// nor Replayers name a service.
	Registrations []service.Registration
	// Replayers are more services that replay their own requests, as
	// they are: each is verified as the registrations' are.
	Replayers []service.Replayer
	// Candidates are the candidate rules, by the name of the service
	// they are for ("firestore": firestore.rules, "database":
	// database.rules.json, which becomes the rules of every namespace,
	// "storage": storage.rules, or a Replayer's name). A service without
	// a candidate is replayed with the rules its session had.
	Candidates map[string]*source.File
}

// ErrNoServices: Run or DeriveService was given no service to replay
// with (Options.Registrations and Options.Replayers are both empty).
var ErrNoServices = errors.New("verify: no services: set Options.Registrations (e.g. backend.Services) or Options.Replayers")

// check reports options that name no service.
func (o *Options) check() error {
	if len(o.Registrations) == 0 && len(o.Replayers) == 0 {
		return ErrNoServices
	}
	return nil
}

// RulesError is a candidate that does not compile.
type RulesError = service.RulesError

// Run replays the fixture's Firestore, Realtime Database and Storage
// events against the candidate rules; a service the session did not use
// (no events, no captured state) and no candidate names is not verified,
// unless Options.Services names it.
// It fails only for bad input (rules that don't compile, a fixture whose
// state cannot be decoded); everything else is a divergence.
func Run(f *capture.Fixture, opts Options) (*Result, error) {
	res := &Result{OK: true, Services: map[string]*ServiceResult{}}
	put := func(name string, sr *ServiceResult) {
		res.Services[name] = sr
		res.OK = res.OK && sr.OK
	}
	want := func(svc string, cand *source.File) bool {
		if len(opts.Services) > 0 {
			for _, s := range opts.Services {
				if s == svc {
					return true
				}
			}
			return false
		}
		return cand != nil || hasService(f, svc)
	}
	candidates := opts.Candidates
	if err := opts.check(); err != nil {
		return nil, err
	}
	regs := opts.Registrations
	s := sessionOf(f)
	// A service's replay may read another's recorded state (Storage
	// rules read Firestore's): the session finds it among the replayers,
	// created on first use.
	set := newReplayerSet(regs, opts.Replayers)
	defer set.close()
	s.Viewer = set.viewer
	var names []string
	for _, reg := range regs {
		names = append(names, reg.Name)
	}
	for _, r := range opts.Replayers {
		names = append(names, r.Name())
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] || !want(name, candidates[name]) {
			continue
		}
		seen[name] = true
		r, err := set.named(name)
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		rep, err := r.Replay(s, candidates[name])
		if err != nil {
			return nil, fixtureError(err)
		}
		put(name, &ServiceResult{OK: rep.OK, CheckedEvents: rep.CheckedEvents, Divergences: rep.Divergences})
	}
	return res, nil
}

// sessionOf is a fixture as a service.Replayer reads it.
func sessionOf(f *capture.Fixture) *service.Session {
	s := &service.Session{Events: f.Events, States: map[string]json.RawMessage{}, Rules: map[string]*service.RecordedRules{}}
	for name, sd := range f.Services {
		if sd == nil {
			continue
		}
		if len(sd.State) > 0 {
			s.States[name] = sd.State
		}
		if r := sd.Rules; r != nil {
			s.Rules[name] = &service.RecordedRules{Name: r.Name, Source: r.Source, JSON: r.JSON}
		}
	}
	return s
}

func hasService(f *capture.Fixture, svc string) bool {
	if _, ok := f.Services[svc]; ok {
		return true
	}
	for i := range f.Events {
		if f.Events[i].Service == svc {
			return true
		}
	}
	return false
}

// Sorted returns the divergences ordered by kind then event.
func (s *ServiceResult) Sorted() []Divergence {
	out := append([]Divergence(nil), s.Divergences...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}
