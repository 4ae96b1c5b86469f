// Package verify replays a captured session (a capture.Fixture) against
// candidate Firestore, Realtime Database and Storage rules and reports
// what would change: requests whose verdict flips (now-denied,
// now-allowed), documents, database locations or objects whose final
// state differs (state-drift), requests the replay cannot decide
// (unsupported) and differences that are expected (expected-drift:
// sentinel, time and auto-id effects). It also derives simulator cases
// from a session and suggests the composite indexes its queries need.
// The Firestore replay runs on a Branch (branch.go), an in-memory fork of
// the Firestore state with its own rules; BranchHandler serves branches
// of a live sandbox over HTTP (fork, apply a fixture or re-run the live
// session, diff against live, promote or discard) for the Studio and
// scripts, and IndexesHandler the session's suggested indexes. Every
// other service replays its own requests: Run finds the service.Replayer
// among the backend's registrations (the Realtime Database's is
// database.Replay), the same capability the Studio's re-run calls
// (service.Rerunner). Storage's replay (storage.go) is still verify's,
// because its rules read the session's Firestore.
package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
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
	// FirestoreRules is the candidate firestore.rules.
	FirestoreRules *source.File
	// DatabaseRules is the candidate database.rules.json; it becomes the
	// rules of every Realtime Database namespace.
	DatabaseRules *source.File
	// StorageRules is the candidate storage.rules.
	StorageRules *source.File
	// Services, when set, are the services to verify (firestore,
	// database, storage, or a Replayer's name); by default every service
	// the session used or a candidate names.
	Services []string
	// Registrations are the services that replay their own requests
	// (those whose service is a service.Replayer); nil means the
	// backend's, backend.Services with default options. Each is verified
	// under its name, beside Firestore and Storage, which verify replays
	// itself.
	Registrations []service.Registration
	// Replayers are more services that replay their own requests, as
	// they are: each is verified as the registrations' are.
	Replayers []service.Replayer
	// Candidates are the Replayers' candidate rules, by service name.
	Candidates map[string]*source.File
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
	candidates := map[string]*source.File{"firestore": opts.FirestoreRules, "database": opts.DatabaseRules, storage.Service: opts.StorageRules}
	for name, c := range opts.Candidates {
		candidates[name] = c
	}
	regs := opts.Registrations
	if regs == nil {
		regs = backend.Services(&backend.Options{})
	}
	s := sessionOf(f)
	replayers := append(builtins(f), opts.Replayers...)
	for _, reg := range regs {
		if !want(reg.Name, candidates[reg.Name]) {
			continue
		}
		r, done, err := replayerOf(reg)
		if err != nil {
			return nil, err
		}
		if r != nil {
			defer done()
			replayers = append(replayers, r)
		}
	}
	for _, r := range replayers {
		name := r.Name()
		if !want(name, candidates[name]) {
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

// builtin is a service verify replays itself (until its engine does, as
// a service.Replayer).
type builtin struct {
	name   string
	f      *capture.Fixture
	replay func(*capture.Fixture, *source.File) (*ServiceResult, error)
}

func (b builtin) Name() string { return b.name }

func (b builtin) Replay(_ *service.Session, candidate *source.File) (*service.Report, error) {
	sr, err := b.replay(b.f, candidate)
	if err != nil {
		return nil, err
	}
	return &service.Report{OK: sr.OK, CheckedEvents: sr.CheckedEvents, Divergences: sr.Divergences}, nil
}

// builtins are the replays of Firestore and Storage, in that order.
func builtins(f *capture.Fixture) []service.Replayer {
	return []service.Replayer{
		builtin{"firestore", f, runFirestore},
		builtin{storage.Service, f, replayStorage},
	}
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

// runFirestore is the Firestore replay with its rules.
func runFirestore(f *capture.Fixture, file *source.File) (*ServiceResult, error) {
	fs := f.Services["firestore"]
	if file == nil && fs != nil && fs.Rules != nil {
		name := fs.Rules.Name
		if name == "" {
			name = "firestore.rules"
		}
		file = source.NewFile(name, fs.Rules.Source)
	}
	var rules firestore.Rules = firestore.NoRules{}
	if file != nil {
		gate, diags := firestore.NewRulesGate(file)
		if gate == nil || diags.HasErrors() {
			return nil, &RulesError{File: file.Name, Diags: diags}
		}
		rules = gate
	}
	var captured map[string]map[string]any
	if fs != nil {
		var err error
		if captured, err = stateDocuments(fs.State); err != nil {
			return nil, err
		}
	}
	return replayFirestore(f.Events, captured, rules)
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

// stateDocuments decodes a Firestore service state's documents.
func stateDocuments(state json.RawMessage) (map[string]map[string]any, error) {
	if len(state) == 0 || string(state) == "null" {
		return nil, nil
	}
	var st struct {
		Documents map[string]map[string]any `json:"documents"`
	}
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		return nil, &capture.Error{Path: "fixture.services.firestore.state", Msg: "must be {documents: {path: fields}}: " + err.Error()}
	}
	return st.Documents, nil
}

func isWrite(m string) bool { return m == "create" || m == "update" || m == "delete" || m == "set" }

// initialState reconstructs the state the session started from: each
// document a commit touched as its first commit found it, and the
// untouched documents of the final state (unless the session was reset or
// restored, after which untouched documents cannot predate it).
func initialState(events []event.Event, final map[string]map[string]any) (map[string]map[string]any, bool) {
	init := map[string]map[string]any{}
	touched := map[string]bool{}
	cut := false
	for i := range events {
		ev := &events[i]
		if ev.Kind == event.KindBoundary {
			cut = true
			break
		}
		if ev.Kind != event.KindCommit || ev.Service != "firestore" || touched[ev.Path] {
			continue
		}
		touched[ev.Path] = true
		if m, ok := ev.Commit.Before.(map[string]any); ok && m != nil {
			init[ev.Path] = m
		}
	}
	if !cut {
		for p, d := range final {
			if !touched[p] {
				init[p] = d
			}
		}
	}
	return init, cut
}

// replayFirestore is the Firestore replay.
func replayFirestore(events []event.Event, captured map[string]map[string]any, rules firestore.Rules) (*ServiceResult, error) {
	init, _ := initialState(events, captured)
	br, err := Fork(init, rules)
	if err != nil {
		return nil, &capture.Error{Path: "fixture.events", Msg: "a commit's before state: " + err.Error()}
	}
	return replayOn(br, events, captured)
}

// replayOn replays events on br and, when captured is set, diffs the
// final state against it.
func replayOn(br *Branch, events []event.Event, captured map[string]map[string]any) (*ServiceResult, error) {
	sr := &ServiceResult{OK: true, Divergences: []Divergence{}}
	// Link each allowed client write to its commit: the next commit of the
	// same path (and group).
	linked := map[int]int{} // request index → commit index
	claimed := map[int]bool{}
	groups := map[string][]int{} // group id → commit indexes
	sentinels := map[string]map[string]bool{}
	for i := range events {
		ev := &events[i]
		if ev.Service != "firestore" {
			continue
		}
		if ev.Kind == event.KindCommit {
			if ev.Group != nil {
				groups[ev.Group.ID] = append(groups[ev.Group.ID], i)
			}
			for _, s := range ev.Commit.Sentinels {
				if sentinels[ev.Path] == nil {
					sentinels[ev.Path] = map[string]bool{}
				}
				sentinels[ev.Path][s.Field] = true
			}
			if ev.Commit.AutoID != "" {
				if sentinels[ev.Path] == nil {
					sentinels[ev.Path] = map[string]bool{}
				}
				sentinels[ev.Path][""] = true
			}
		}
		if ev.Kind != event.KindRequest || !isWrite(ev.Method) || service.Bypassed(ev) || ev.Verdict != event.Allow {
			continue
		}
		for j := i + 1; j < len(events); j++ {
			c := &events[j]
			if c.Kind == event.KindCommit && c.Service == "firestore" && !claimed[j] && c.Path == ev.Path && sameGroup(ev.Group, c.Group) {
				linked[i], claimed[j] = j, true
				break
			}
		}
	}
	add := sr.add
	restored := false
	flipped := map[string]bool{} // documents a write of which changed verdict
	for i := range events {
		ev := &events[i]
		switch {
		case ev.Kind == event.KindBoundary:
			if ev.Boundary != nil && ev.Boundary.Boundary == event.Reset {
				br.clear()
				continue
			}
			restored = true
			add(Divergence{Kind: Unsupported, EventID: ev.ID, Explanation: "the session restored a snapshot; the replay cannot know the restored Firestore state, so later verdicts may differ for that reason"})
			continue
		case ev.Service != "firestore":
			continue
		case ev.Kind == event.KindListener:
			if !service.Bypassed(ev) {
				sr.CheckedEvents += redecideListen(br, events, i, add)
			}
			continue
		case ev.Kind == event.KindCommit:
			if claimed[i] {
				continue
			}
			if err := br.Put(ev.Path, asFields(ev.Commit.After)); err != nil {
				return nil, &capture.Error{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
			}
			continue
		case ev.Kind != event.KindRequest || service.Bypassed(ev):
			continue
		}
		switch ev.Verdict {
		case event.Allow, event.Deny, event.Unsupported:
		default:
			continue // failed besides the rules: nothing to re-decide
		}
		sr.CheckedEvents++
		req := Request{Method: ev.Method, Path: ev.Path, Who: service.Who(ev), Time: ev.At, Group: ev.Group}
		var commit *event.Event
		if j, ok := linked[i]; ok {
			commit = &events[j]
			req.Time = commit.Commit.RequestTime
		}
		if ev.Method == "list" {
			var sq *pb.StructuredQuery
			if ev.Seen != nil && ev.Seen.Query != nil {
				sq, _ = firestore.RecordedQuery(ev.Seen.Query)
			}
			if sq == nil {
				add(Divergence{Kind: Unsupported, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
					Before: string(ev.Verdict), Explanation: "the captured list request carries no query, so it cannot be re-decided"})
				continue
			}
			req.Query = sq
		}
		if isWrite(ev.Method) {
			req.Method = ev.Method
			if req.Method == "set" {
				req.Method = "create"
				if br.Get(ev.Path) != nil {
					req.Method = "update"
				}
			}
			if req.Method != "delete" {
				if commit != nil {
					req.After = asFields(commit.Commit.After)
				} else {
					req.After = proposed(ev, br, req.Method, req.Time)
				}
			}
			if ev.Group != nil {
				req.GetAfter = groupState(events, groups[ev.Group.ID])
			}
		}
		dec, afterDoc, err := br.decide(req)
		if err != nil {
			add(Divergence{Kind: Unsupported, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
				Before: string(ev.Verdict), Explanation: err.Error()})
			continue
		}
		now := dec.Verdict
		if isWrite(ev.Method) && now == event.Allow {
			if req.Method == "delete" {
				afterDoc = nil
			} else if afterDoc == nil {
				afterDoc = &pb.Document{Name: DB.DocName(strings.Trim(ev.Path, "/")), Fields: map[string]*pb.Value{}}
			}
			br.putDoc(ev.Path, afterDoc)
		}
		if isWrite(ev.Method) && now != ev.Verdict {
			flipped[strings.Trim(ev.Path, "/")] = true
		}
		if k := divergenceKind(ev.Verdict, now); k != "" {
			add(Divergence{Kind: k, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
				Before: string(ev.Verdict), After: string(now), Explanation: explain(dec)})
		}
	}
	if captured != nil && !restored {
		for _, c := range br.Diff(captured) {
			d := Divergence{Kind: StateDrift, Path: c.Path, Before: c.Before, After: c.After}
			if s := sentinels[c.Doc]; s != nil && !flipped[c.Doc] && (s[c.Field] || s[""]) {
				d.Kind, d.Drift = ExpectedDrift, "sentinel-drift"
				if s[""] {
					d.Drift = "autoid-alias"
				}
			}
			if d.Kind == StateDrift {
				d.Explanation = driftText(c)
			}
			add(d)
		}
	}
	return sr, nil
}

// redecideListen re-decides the listen attached at events[i]: a query
// target as a list of its query, a documents target as a get of each
// document, against the branch's state then. The captured verdict is the
// listen's first outcome: a delivery (allowed) or a PERMISSION_DENIED
// error (denied); a listen with neither (detached first, or failed
// otherwise) is not re-decided. It returns the number of checks made.
func redecideListen(br *Branch, events []event.Event, i int, add func(Divergence)) int {
	ev := &events[i]
	l := ev.Listener
	if l == nil || l.Phase != event.Attach || l.Target == nil {
		return 0
	}
	var was event.Verdict
	for j := i + 1; j < len(events) && was == ""; j++ {
		o := &events[j]
		if o.Kind != event.KindListener || o.Listener == nil || o.Listener.ListenerID != l.ListenerID || o.Service != "firestore" {
			continue
		}
		switch o.Listener.Phase {
		case event.Deliver, event.Suppress:
			was = event.Allow
		case event.Errored:
			if o.Err == nil || o.Err.Code != "PermissionDenied" && o.Err.Code != "PERMISSION_DENIED" {
				return 0
			}
			was = event.Deny
		case event.Detach:
			return 0
		}
	}
	if was == "" {
		return 0
	}
	var reqs []Request
	switch l.Target.Kind {
	case "query":
		sq, err := firestore.RecordedQuery(l.Target.Query)
		if err != nil || sq == nil {
			add(Divergence{Kind: Unsupported, EventID: ev.ID, Method: "listen", Path: l.Target.Path, UID: ev.Identity.UID,
				Before: string(was), Explanation: "the captured listen carries no readable query, so it cannot be re-decided"})
			return 1
		}
		reqs = append(reqs, Request{Method: "list", Path: l.Target.Path, Query: sq})
	case "docs":
		paths, _ := l.Target.Query.([]any)
		for _, p := range paths {
			if s, ok := p.(string); ok {
				if k := strings.Index(s, "/documents/"); k >= 0 {
					s = s[k+len("/documents/"):]
				}
				reqs = append(reqs, Request{Method: "get", Path: s})
			}
		}
	}
	if len(reqs) == 0 {
		return 0
	}
	// A listen is allowed when every part is.
	now, last := event.Allow, firestore.Decision{}
	for _, r := range reqs {
		r.Who, r.Time = service.Who(ev), ev.At
		d, err := br.Decide(r)
		if err != nil {
			add(Divergence{Kind: Unsupported, EventID: ev.ID, Method: "listen", Path: r.Path, UID: ev.Identity.UID, Before: string(was), Explanation: err.Error()})
			return 1
		}
		if v := d.Verdict; v != event.Allow {
			now, last = v, d
			break
		}
		last = d
	}
	path := l.Target.Path
	if path == "" {
		path = reqs[0].Path
	}
	if k := divergenceKind(was, now); k != "" {
		add(Divergence{Kind: k, EventID: ev.ID, Method: "listen", Path: path, UID: ev.Identity.UID, Before: string(was), After: string(now), Explanation: explain(last)})
	}
	return 1
}

// divergenceKind classifies a re-decided request by its recorded verdict
// (was) and the candidate rules' (now): "" when nothing diverges.
func divergenceKind(was, now event.Verdict) string { return service.DivergenceKind(was, now) }

func driftText(c Change) string {
	switch {
	case c.Field == "" && c.Before == nil:
		return fmt.Sprintf("%s exists after the replay but not in the captured state", c.Doc)
	case c.Field == "" && c.After == nil:
		return fmt.Sprintf("%s is in the captured state but not after the replay", c.Doc)
	}
	return fmt.Sprintf("%s field %s differs from the captured state", c.Doc, c.Field)
}

func sameGroup(a, b *event.Group) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ID == b.ID
}

func asFields(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// groupState is the state after every commit of a batch.
func groupState(events []event.Event, idx []int) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, j := range idx {
		out[events[j].Path] = asFields(events[j].Commit.After)
	}
	return out
}

// proposed is the document a write that was not committed would have
// produced: the data sent (sentinels resolved at the request time), over
// the stored document for an update.
func proposed(ev *event.Event, br *Branch, method string, t time.Time) map[string]any {
	var sent map[string]any
	if ev.Seen != nil {
		sent, _ = ev.Seen.Data.(map[string]any)
	}
	out := map[string]any{}
	if method == "update" {
		if d := br.Get(ev.Path); d != nil {
			for k, v := range firestore.EncodeFields(d.Fields, DB) {
				out[k] = v
			}
		}
	}
	for k, v := range sent {
		if m, ok := v.(map[string]any); ok {
			if s, ok := m["__sentinel"].(string); ok && len(m) == 1 {
				switch event.SentinelKind(s) {
				case event.ServerTimestamp:
					out[k] = map[string]any{"__type": "timestamp", "seconds": t.Unix(), "nanos": t.Nanosecond()}
				case event.DeleteField:
					delete(out, k)
				default:
					// increment/arrayUnion/...: the operand is not captured;
					// keep the stored value.
				}
				continue
			}
		}
		out[k] = v
	}
	return out
}

// explain renders the new decision: the reason, then the failing
// sub-expressions of the deciding rule.
func explain(d firestore.Decision) string {
	exp, ok := d.Explained()
	if !ok {
		return d.Reason
	}
	return service.ExplainDecision(exp.Rule, exp.Decision)
}

// Sorted returns the divergences ordered by kind then event.
func (s *ServiceResult) Sorted() []Divergence {
	out := append([]Divergence(nil), s.Divergences...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}
