package firestore

// The service.Replayer capability: a recorded session decided again. A
// Branch of the state the session started from, with the candidate rules,
// re-issues every write of the session in order (admin writes as the
// admin, client writes decided by the rules), asks every client read,
// list and listen again, and diffs the final documents against the
// recorded ones, field by field.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
	"github.com/pyric/pyric/sandbox/service"
)

// Replay implements service.Replayer: it replays the session's Firestore
// events against candidate rules (nil: the rules the session recorded;
// none: NoRules) on a Branch of the state the session started from, and
// diffs the final state against the recorded one. The receiver's own
// state is not used.
func (s *Service) Replay(sess *service.Session, candidate *source.File) (*service.Report, error) {
	file := candidate
	if r := sess.Rules[ServiceName]; file == nil && r != nil {
		name := r.Name
		if name == "" {
			name = "firestore.rules"
		}
		file = source.NewFile(name, r.Source)
	}
	var rules Rules = NoRules{}
	if file != nil {
		gate, diags := NewRulesGate(file)
		if gate == nil || diags.HasErrors() {
			return nil, &service.RulesError{File: file.Name, Diags: diags}
		}
		rules = gate
	}
	br, captured, err := sessionBranch(sess, rules)
	if err != nil {
		return nil, err
	}
	return replayOn(br, sess.Events, captured)
}

// sessionBranch is a Branch, under rules, of the Firestore state the
// session started from, and the state it recorded at its end.
func sessionBranch(sess *service.Session, rules Rules) (*Branch, map[string]map[string]any, error) {
	captured, err := recordedDocuments(sess.States[ServiceName])
	if err != nil {
		return nil, nil, err
	}
	init, _ := InitialDocuments(sess.Events, captured)
	br, err := Fork(init, rules)
	if err != nil {
		return nil, nil, &service.SessionError{Path: "fixture.events", Msg: "a Firestore commit's before state: " + err.Error()}
	}
	return br, captured, nil
}

// recordedDocuments decodes a recorded Firestore state's documents.
func recordedDocuments(state json.RawMessage) (map[string]map[string]any, error) {
	if len(state) == 0 || string(state) == "null" {
		return nil, nil
	}
	var st struct {
		Documents map[string]map[string]any `json:"documents"`
	}
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		return nil, &service.SessionError{Path: "fixture.services.firestore.state", Msg: "must be {documents: {path: fields}}: " + err.Error()}
	}
	return st.Documents, nil
}

func isWrite(m string) bool { return m == "create" || m == "update" || m == "delete" || m == "set" }

// InitialDocuments reconstructs the documents a recorded session started
// from: each document a commit touched as its first commit found it, and
// the untouched documents of the final state (unless the session was
// reset or restored, after which untouched documents cannot predate it;
// cut says so).
func InitialDocuments(events []event.Event, final map[string]map[string]any) (map[string]map[string]any, bool) {
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

// replayOn replays events on br and, when captured is set, diffs the
// final state against it.
func replayOn(br *Branch, events []event.Event, captured map[string]map[string]any) (*service.Report, error) {
	sr := service.NewReport()
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
	add := sr.Add
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
			add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Explanation: "the session restored a snapshot; the replay cannot know the restored Firestore state, so later verdicts may differ for that reason"})
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
				return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
			}
			continue
		case !service.RulesDecided(ev):
			continue
		}
		sr.CheckedEvents++
		req := BranchRequest{Method: ev.Method, Path: ev.Path, Who: service.Who(ev), Time: ev.At, Group: ev.Group}
		var commit *event.Event
		if j, ok := linked[i]; ok {
			commit = &events[j]
			req.Time = commit.Commit.RequestTime
		}
		if ev.Method == "list" {
			var sq *pb.StructuredQuery
			if ev.Seen != nil && ev.Seen.Query != nil {
				sq, _ = RecordedQuery(ev.Seen.Query)
			}
			if sq == nil {
				add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
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
			add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
				Before: string(ev.Verdict), Explanation: err.Error()})
			continue
		}
		now := dec.Verdict
		if isWrite(ev.Method) && now == event.Allow {
			if req.Method == "delete" {
				afterDoc = nil
			} else if afterDoc == nil {
				afterDoc = &pb.Document{Name: BranchDatabase.DocName(strings.Trim(ev.Path, "/")), Fields: map[string]*pb.Value{}}
			}
			br.putDoc(ev.Path, afterDoc)
		}
		if isWrite(ev.Method) && now != ev.Verdict {
			flipped[strings.Trim(ev.Path, "/")] = true
		}
		if k := divergenceKind(ev.Verdict, now); k != "" {
			add(service.Divergence{Kind: k, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
				Before: string(ev.Verdict), After: string(now), Explanation: dec.oneLine()})
		}
	}
	if captured != nil && !restored {
		for _, c := range br.Diff(captured) {
			d := service.Divergence{Kind: service.StateDrift, Path: c.Path, Before: c.Before, After: c.After}
			if s := sentinels[c.Doc]; s != nil && !flipped[c.Doc] && (s[c.Field] || s[""]) {
				d.Kind, d.Drift = service.ExpectedDrift, "sentinel-drift"
				if s[""] {
					d.Drift = "autoid-alias"
				}
			}
			if d.Kind == service.StateDrift {
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
func redecideListen(br *Branch, events []event.Event, i int, add func(service.Divergence)) int {
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
	var reqs []BranchRequest
	switch l.Target.Kind {
	case "query":
		sq, err := RecordedQuery(l.Target.Query)
		if err != nil || sq == nil {
			add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Method: "listen", Path: l.Target.Path, UID: ev.Identity.UID,
				Before: string(was), Explanation: "the captured listen carries no readable query, so it cannot be re-decided"})
			return 1
		}
		reqs = append(reqs, BranchRequest{Method: "list", Path: l.Target.Path, Query: sq})
	case "docs":
		paths, _ := l.Target.Query.([]any)
		for _, p := range paths {
			if s, ok := p.(string); ok {
				if k := strings.Index(s, "/documents/"); k >= 0 {
					s = s[k+len("/documents/"):]
				}
				reqs = append(reqs, BranchRequest{Method: "get", Path: s})
			}
		}
	}
	if len(reqs) == 0 {
		return 0
	}
	// A listen is allowed when every part is.
	now, last := event.Allow, AuthzDecision{}
	for _, r := range reqs {
		r.Who, r.Time = service.Who(ev), ev.At
		d, err := br.Decide(r)
		if err != nil {
			add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Method: "listen", Path: r.Path, UID: ev.Identity.UID, Before: string(was), Explanation: err.Error()})
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
		add(service.Divergence{Kind: k, EventID: ev.ID, Method: "listen", Path: path, UID: ev.Identity.UID, Before: string(was), After: string(now), Explanation: last.oneLine()})
	}
	return 1
}

// divergenceKind classifies a re-decided request by its recorded verdict
// (was) and the candidate rules' (now): "" when nothing diverges.
func divergenceKind(was, now event.Verdict) string { return service.DivergenceKind(was, now) }

func driftText(c BranchChange) string {
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
			for k, v := range EncodeFields(d.Fields, BranchDatabase) {
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

// oneLine renders a replayed decision as a divergence explains it: the
// reason, then the failing sub-expressions of the deciding rule.
func (d AuthzDecision) oneLine() string {
	exp, ok := d.Explained()
	if !ok {
		return d.Reason
	}
	return service.ExplainDecision(exp.Rule, exp.Decision)
}

// ViewSession implements service.StateViewer: the default database's
// documents as the session had them at each event, for another service's
// replay (Storage rules' firestore.get() and exists()).
func (s *Service) ViewSession(sess *service.Session) (service.StateView, error) {
	br, _, err := sessionBranch(sess, nil)
	if err != nil {
		return nil, err
	}
	return &sessionView{br: br, events: sess.Events}, nil
}

// sessionView is a service.StateView of a recorded Firestore: a Branch
// moved forward by the session's commits.
type sessionView struct {
	br     *Branch
	events []event.Event
}

func (v *sessionView) Advance(i int) error {
	ev := &v.events[i]
	switch {
	case ev.Kind == event.KindBoundary && ev.Boundary != nil && ev.Boundary.Boundary == event.Reset:
		v.br.clear()
	case ev.Kind == event.KindCommit && ev.Service == ServiceName:
		if err := v.br.Put(ev.Path, asFields(ev.Commit.After)); err != nil {
			return &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
		}
	}
	return nil
}

func (v *sessionView) RulesValue(path string) (value.Map, bool, error) {
	d := v.br.Get(path)
	if d == nil {
		return nil, false, nil
	}
	return FieldsToRules(d.Fields), true, nil
}

func (v *sessionView) Record(path string) map[string]any {
	d := v.br.Get(path)
	if d == nil {
		return nil
	}
	return simForm(EncodeFields(d.Fields, BranchDatabase)).(map[string]any)
}
