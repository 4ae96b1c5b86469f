package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// The capabilities of a service with security rules. A service implements
// them as a database/sql/driver implements its optional interfaces, and
// the tools above the sandbox (the Studio, verify, `pyric serve`'s hot
// reload) loop over the services that do: a service joins them by
// implementing the methods, with no edit in any tool.
//
// This file imports rules/source and rules/value besides event:
// diagnostics of rules source are positioned, and a StateView reads
// records as the rules language sees them; both are leaves every rules
// package and engine shares.

// RulesFormatter is implemented by a LiveRules service whose rules, in a
// captured session, carry a format name other than its rules file's name
// (the Realtime Database: "rtdb.rules.json", for database.rules.json).
type RulesFormatter interface {
	RulesFormat() string
}

// LiveRules is implemented by a service whose rules can be read, replaced
// and diagnosed: Firestore, Cloud Storage, the Realtime Database.
type LiveRules interface {
	Service
	// RulesFileName is the name the service's rules file has by default
	// ("firestore.rules", "storage.rules", "database.rules.json").
	RulesFileName() string
	// RulesFile returns the rules file in force (the rules of every scope
	// — project, namespace — without rules of its own) and whether one
	// is loaded.
	RulesFile() (name, text string, loaded bool)
	// SetRulesFile compiles text and, when it compiles, makes it the rules
	// file in force; otherwise the last good rules stay live and the error
	// says why. It returns every diagnostic, warnings included.
	SetRulesFile(name, text string) (source.Diagnostics, error)
	// CheckRules compiles and lints text without loading it: compiles
	// says whether it would load, diags are its compile diagnostics
	// (errors and warnings), lint the linter's findings.
	CheckRules(name, text string) (compiles bool, diags, lint source.Diagnostics)
	// CollectCoverage makes decisions count rule coverage from now on.
	CollectCoverage()
	// RulesView is the rules in force in scope (a scope of the service's
	// own, such as a Realtime Database namespace; "" is the default one)
	// with what the rules decided since they were loaded: what the
	// Studio's rules page shows.
	RulesView(scope string) RulesView
}

// RulesView is what a LiveRules service shows of its rules in force.
type RulesView struct {
	// Name is the rules file's name (RulesFileName when none is loaded),
	// Text its source; Loaded says whether rules are in force.
	Name, Text string
	Loaded     bool
	// Coverage is each expression's true, false and error counts, as a
	// JSON list (empty, not nil, when nothing was counted).
	Coverage any
	// Facts are more facts the page shows, by their JSON key (the
	// Realtime Database: the namespace shown and each rule's counts;
	// Firestore: "sessionTools", true when the Studio's session tools —
	// the indexes a session needs, fixtures, the session re-run on a
	// branch — work on these rules).
	Facts map[string]any
}

// Replayer is implemented by a service whose recorded requests can be
// decided again under other rules (verify): the service rebuilds each
// request from its event and its engine decides it.
type Replayer interface {
	// Name is the service's name (Service.Name): the session's events,
	// states and rules of the service are under it.
	Name() string
	// Replay replays a recorded session against candidate rules (nil: the
	// rules the session recorded) on a fresh, in-memory state of the
	// service, and reports what would change. It fails only for bad input
	// (*RulesError, a recorded state that cannot be decoded).
	Replay(s *Session, candidate *source.File) (*Report, error)
}

// Session is a recorded session, as a Replayer reads it.
type Session struct {
	// Events are the session's events, oldest first.
	Events []event.Event
	// States are the services' final states (Snapshot output) by name.
	States map[string]json.RawMessage
	// Rules are the rules each service had, by name.
	Rules map[string]*RecordedRules
	// Viewer finds another service's StateViewer by name (nil, or a nil
	// result: the replay's runner knows none); StateAt reads through it.
	Viewer func(name string) StateViewer
}

// StateViewer is implemented by a service whose recorded state another
// service's replay reads as it was at each event of the session: Storage
// rules read Firestore's documents with firestore.get() and exists(), as
// the session had them when the request was made. The replay asks for it
// by the service's name, through Session.StateAt, and imports nothing of
// the service.
type StateViewer interface {
	Name() string
	// ViewSession returns the service's state as the session had it
	// before its first event.
	ViewSession(s *Session) (StateView, error)
}

// StateView is a service's recorded state at one moment of a session.
type StateView interface {
	// Advance moves the view past the session's event i: the service's
	// own changes apply, a reset empties it, other events change nothing.
	// Call it for each event in order.
	Advance(i int) error
	// RulesValue reads the record at key (Firestore: a document path
	// relative to the default database's documents) as the rules language
	// sees it; ok is false when there is none.
	RulesValue(key string) (v value.Map, ok bool, err error)
	// Record reads the record at key as a rules simulator's function mock
	// gives it (Firestore: fields in the JSON form, timestamps as
	// ISO-8601); nil when there is none.
	Record(key string) map[string]any
}

// StateAt opens the recorded state of the service name at the session's
// start (ok false: the runner knows no StateViewer of that name).
func (s *Session) StateAt(name string) (v StateView, ok bool, err error) {
	if s.Viewer == nil {
		return nil, false, nil
	}
	sv := s.Viewer(name)
	if sv == nil {
		return nil, false, nil
	}
	v, err = sv.ViewSession(s)
	return v, err == nil, err
}

// RecordedRules are a service's rules as a session recorded them.
type RecordedRules struct {
	Name   string
	Source string
	// JSON is the rules as JSON when Source is empty (the Realtime
	// Database).
	JSON json.RawMessage
}

// Has reports whether the session used the service: it has a recorded
// state or rules, or an event.
func (s *Session) Has(name string) bool {
	if _, ok := s.States[name]; ok {
		return true
	}
	if _, ok := s.Rules[name]; ok {
		return true
	}
	for i := range s.Events {
		if s.Events[i].Service == name {
			return true
		}
	}
	return false
}

// Divergence kinds.
const (
	NowDenied     = "now-denied"
	NowAllowed    = "now-allowed"
	StateDrift    = "state-drift"
	Unsupported   = "unsupported"
	ExpectedDrift = "expected-drift"
)

// Divergence is one difference a replay found.
type Divergence struct {
	Kind    string `json:"kind"`
	EventID string `json:"eventId,omitempty"`
	Method  string `json:"method,omitempty"`
	Path    string `json:"path,omitempty"`
	UID     string `json:"uid,omitempty"`
	// Before and After are the old and new verdicts (now-denied,
	// now-allowed) or the captured and replayed values (state-drift).
	Before      any    `json:"before"`
	After       any    `json:"after"`
	Explanation string `json:"explanation,omitempty"`
	// Drift names an expected drift: sentinel-drift, time-drift,
	// autoid-alias.
	Drift string `json:"drift,omitempty"`
}

// Report is one service's replay verdict.
type Report struct {
	OK bool `json:"ok"`
	// CheckedEvents is the number of client requests re-decided.
	CheckedEvents int          `json:"checkedEvents"`
	Divergences   []Divergence `json:"divergences"`
}

// NewReport is an empty, passing report.
func NewReport() *Report { return &Report{OK: true, Divergences: []Divergence{}} }

// Add records a divergence: any but an expected drift fails the report.
func (r *Report) Add(d Divergence) {
	r.Divergences = append(r.Divergences, d)
	if d.Kind != ExpectedDrift {
		r.OK = false
	}
}

// DivergenceKind classifies a re-decided request by its recorded verdict
// (was) and the candidate rules' (now): "" when nothing diverges.
func DivergenceKind(was, now event.Verdict) string {
	switch {
	case now == event.Unsupported || (was == event.Unsupported && now != was):
		return Unsupported
	case was == event.Allow && now == event.Deny:
		return NowDenied
	case was == event.Deny && now == event.Allow:
		return NowAllowed
	}
	return ""
}

// RulesError is candidate rules that do not compile.
type RulesError struct {
	File  string
	Diags source.Diagnostics
}

func (e *RulesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not compile:", e.File)
	for _, d := range e.Diags {
		if d.Severity == source.Error {
			fmt.Fprintf(&b, "\n  %s:%s", e.File, d)
		}
	}
	return b.String()
}

// Rerunner is implemented by a service whose recorded requests of the
// live sandbox can be decided again, as another identity or under other
// rules, without changing any state (the Studio's re-run).
type Rerunner interface {
	Name() string
	// Rerun decides r.Event again. A *RulesError says r.Rules do not
	// compile; an *ErrRerun that the event cannot be re-run.
	Rerun(ctx context.Context, r RerunRequest) (*Rerun, error)
}

// RerunRequest is a recorded request to decide again.
type RerunRequest struct {
	// Event is the recorded request event.
	Event event.Event
	// Later are the events recorded after Event, oldest first.
	Later []event.Event
	// As is who decides: the event's identity or another (never admin).
	As event.Identity
	// Rules is the rules source to decide under; empty means the live
	// rules.
	Rules string
}

// Rerun is a recorded request decided again.
type Rerun struct {
	Verdict     event.Verdict
	Reason      string
	Rule        *event.Rule
	Trace       []event.Step
	Decision    *event.Explanation
	Explanation []string
	// Notes say where the re-run could not use what the request saw;
	// none means exact.
	Notes []string
}

// ErrRerun is a recorded request that cannot be re-run (no rules loaded,
// an event without what the rules saw); its message says why.
type ErrRerun struct{ Msg string }

func (e *ErrRerun) Error() string { return e.Msg }
