package database

// The service.Replayer capability: a recorded session decided again. A
// fresh in-memory database engine with the candidate rules, started from
// the state the session found, re-issues every write of the session in
// order (admin writes as the admin, client writes as their identity, so
// the engine's own rules decide them), asks every client read and listen
// again, and diffs the final tree against the recorded one, leaf by
// leaf. The Studio's re-run (rerun.go) issues one recorded request the
// same way, on a branch of the live tree.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// writeMethods are the request methods that write, as the engine names
// them in events.
var writeMethods = map[string]bool{"set": true, "update": true, "remove": true, "push": true,
	"transaction": true, "ondisconnect": true, "ondisconnect_register": true}

// IsWriteMethod reports whether a request event's method writes.
func IsWriteMethod(method string) bool { return writeMethods[method] }

// SessionState is the service's state as a recorded session holds it
// (Snapshot's output): every namespace's tree, in export format, and its
// own rules.
type SessionState struct {
	Namespaces map[string]SessionNamespace `json:"namespaces"`
}

// SessionNamespace is one namespace of a SessionState.
type SessionNamespace struct {
	Data  any     `json:"data"`
	Rules *string `json:"rules,omitempty"`
}

// DecodeSessionState decodes a recorded state, numbers as json.Number;
// at names the state in the error (a *service.SessionError).
func DecodeSessionState(raw json.RawMessage, at string) (*SessionState, error) {
	st := &SessionState{Namespaces: map[string]SessionNamespace{}}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return st, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(st); err != nil {
		return nil, &service.SessionError{Path: at, Msg: "must be {namespaces: {name: {data, rules?}}}: " + err.Error()}
	}
	if st.Namespaces == nil {
		st.Namespaces = map[string]SessionNamespace{}
	}
	return st, nil
}

// EventKeys splits an event path ("/a/b" in the default namespace,
// "<ns>:/a/b" in another) into namespace ("" for the default) and keys.
func EventKeys(p string) (string, []string, error) {
	ns, p, err := SplitEventPath(p)
	if err != nil {
		return "", nil, err
	}
	keys, err := ParsePath(p)
	return ns, keys, err
}

// SetTree sets v at keys in a decoded JSON tree (maps modified in place)
// and returns the new root; null and empty objects vanish as in the
// database.
func SetTree(root any, keys []string, v any) any {
	if len(keys) == 0 {
		return v
	}
	m, ok := root.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	child := SetTree(m[keys[0]], keys[1:], v)
	if cm, ok := child.(map[string]any); child == nil || (ok && len(cm) == 0) {
		delete(m, keys[0])
	} else {
		m[keys[0]] = child
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// TreeAt is the value at keys of a decoded tree (nil when absent).
func TreeAt(root any, keys []string) any {
	for _, k := range keys {
		m, ok := root.(map[string]any)
		if !ok {
			return nil
		}
		root = m[k]
	}
	return root
}

// InitialTrees is the state a session started from: the recorded final
// state with the session's commits undone newest first, up to the first
// boundary (from nothing when there is one: what predates a reset is not
// known). A recorded namespace's tree is at stateKey(its name), a
// commit's at commitKey(its namespace): the replay keys every tree by
// the full namespace name, case derivation keys the default one "".
func InitialTrees(events []event.Event, recorded *SessionState, stateKey, commitKey func(ns string) string) (map[string]any, error) {
	first := len(events)
	for i := range events {
		if events[i].Kind == event.KindBoundary {
			first = i
			break
		}
	}
	trees := map[string]any{}
	if recorded != nil && first == len(events) {
		for ns, n := range recorded.Namespaces {
			trees[stateKey(ns)] = cloneJSON(n.Data)
		}
	}
	if err := undoCommits(trees, events[:first], commitKey, "fixture.events"); err != nil {
		return nil, err
	}
	return trees, nil
}

// clock is the replay's pinned server time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// lastRequest keeps the newest request event the replay engine emitted:
// its verdict and explanation are the candidate's.
type lastRequest struct{ ev *event.Event }

func (l *lastRequest) Emit(e event.Event) {
	if e.Kind == event.KindRequest {
		l.ev = &e
	}
}

// undoCommits sets each Realtime Database commit of events back to its
// before value in trees (namespace, as nsKey names it → tree), newest
// first: the trees before those commits. where names the events in
// errors (where[i].path).
func undoCommits(trees map[string]any, events []event.Event, nsKey func(ns string) string, where string) error {
	for i := len(events) - 1; i >= 0; i-- {
		ev := &events[i]
		if ev.Service != serviceName || ev.Kind != event.KindCommit || ev.Commit == nil {
			continue
		}
		ns, keys, err := EventKeys(ev.Path)
		if err != nil {
			return &service.SessionError{Path: fmt.Sprintf("%s[%d].path", where, i), Msg: err.Error()}
		}
		before, err := Normalize(ev.Commit.Before, nil, 0)
		if err != nil {
			return &service.SessionError{Path: fmt.Sprintf("%s[%d].before", where, i), Msg: err.Error()}
		}
		k := nsKey(ns)
		trees[k] = SetTree(trees[k], keys, before)
	}
	return nil
}

// RecordedRules returns the rules to replay with: the candidate, else the
// rules the session recorded.
func RecordedRules(s *service.Session, candidate *source.File) (name, src string) {
	if candidate != nil {
		return candidate.Name, candidate.Text
	}
	if r := s.Rules[serviceName]; r != nil {
		name = r.Name
		if name == "" {
			name = "database.rules.json"
		}
		if r.Source != "" {
			return name, r.Source
		}
		return name, string(r.JSON)
	}
	return "", ""
}

// Replay implements service.Replayer: it replays the session's Realtime
// Database events against candidate rules (nil: the recorded rules; they
// become every namespace's) on a fresh in-memory engine. The receiver's
// own state is not used.
func (d *Database) Replay(s *service.Session, candidate *source.File) (*service.Report, error) {
	name, src := RecordedRules(s, candidate)
	if strings.TrimSpace(src) != "" {
		if rs, diags := rtdb.Compile(source.NewFile(name, src)); rs == nil || diags.HasErrors() {
			return nil, &service.RulesError{File: name, Diags: diags}
		}
	}
	var recorded *SessionState
	if raw, ok := s.States[serviceName]; ok && len(raw) > 0 {
		var err error
		if recorded, err = DecodeSessionState(raw, "fixture.services.database.state"); err != nil {
			return nil, err
		}
	}
	events := s.Events
	project := "demo-verify"
	if recorded != nil {
		for ns := range recorded.Namespaces {
			if p, ok := strings.CutSuffix(ns, "-default-rtdb"); ok && p != "" {
				project = p
				break
			}
		}
	}
	defaultNS := DefaultNamespace(project)
	nsOf := func(ns string) string {
		if ns == "" {
			return defaultNS
		}
		return ns
	}
	init, err := InitialTrees(events, recorded, func(ns string) string { return ns }, nsOf)
	if err != nil {
		return nil, err
	}
	clk := &clock{t: time.Unix(0, 0)}
	if len(events) > 0 {
		clk.t = events[0].At
	}
	last := &lastRequest{}
	db, err := New(service.Env{Project: project, Now: clk.now, Events: last}, Options{Rules: src, RulesName: name})
	if err != nil {
		return nil, fmt.Errorf("replay: database: %w", err)
	}
	restore := func(trees map[string]any) error {
		st := SessionState{Namespaces: map[string]SessionNamespace{}}
		for ns, t := range trees {
			n := SessionNamespace{Data: t}
			// Rules a namespace set for itself stay, unless a candidate
			// replaces every namespace's rules.
			if candidate == nil && recorded != nil {
				n.Rules = recorded.Namespaces[ns].Rules
			}
			st.Namespaces[ns] = n
		}
		raw, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return db.Restore(raw)
	}
	if err := restore(init); err != nil {
		return nil, &service.SessionError{Path: "fixture.events", Msg: "the state before the session's commits: " + err.Error()}
	}

	// Link each allowed client write, and each admin write that carries
	// its data, to its commits: the replay re-issues the write itself (a
	// commit shows the value as clients read it, without priorities).
	claimed := map[int]bool{}
	commitTime := map[int]time.Time{}
	for i := range events {
		ev := &events[i]
		if ev.Service != serviceName || ev.Kind != event.KindRequest || !writeMethods[ev.Method] || ev.Method == "ondisconnect_register" {
			continue
		}
		if !(ev.Verdict == event.Allow && !service.Bypassed(ev)) && !adminReplayable(ev) {
			continue
		}
		ns, base, err := EventKeys(ev.Path)
		if err != nil {
			continue
		}
		want := 1
		if ev.Seen != nil && ev.Seen.Updates != nil {
			want = len(ev.Seen.Updates)
		}
		for j := i + 1; j < len(events) && j <= i+service.LinkWindow && want > 0; j++ {
			c := &events[j]
			if c.Service != serviceName || c.Kind != event.KindCommit || claimed[j] || c.Method != ev.Method ||
				c.Identity.Lens != ev.Identity.Lens || c.Identity.UID != ev.Identity.UID {
				continue
			}
			cns, keys, err := EventKeys(c.Path)
			if err != nil || cns != ns || !rtdb.IsPathPrefix(base, keys) {
				continue
			}
			claimed[j] = true
			if _, ok := commitTime[i]; !ok {
				commitTime[i] = c.Commit.RequestTime
			}
			want--
		}
	}

	rep := service.NewReport()
	add := rep.Add
	restored := false
	timed := map[string][][]string{} // namespace → locations written with server values
	flipped := map[string][][]string{}
	for i := range events {
		ev := &events[i]
		if !ev.At.IsZero() {
			clk.t = ev.At
		}
		switch {
		case ev.Kind == event.KindBoundary:
			if ev.Boundary != nil && ev.Boundary.Boundary == event.Reset {
				if err := db.Reset(); err != nil {
					return nil, fmt.Errorf("replay: database: %w", err)
				}
				continue
			}
			restored = true
			add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Explanation: "the session restored a snapshot; the replay cannot know the restored Realtime Database state, so later verdicts may differ for that reason"})
			continue
		case ev.Service != serviceName:
			continue
		case ev.Kind == event.KindCommit:
			if claimed[i] {
				continue
			}
			ns, keys, err := EventKeys(ev.Path)
			if err != nil {
				return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].path", i), Msg: err.Error()}
			}
			if !ev.Commit.RequestTime.IsZero() {
				clk.t = ev.Commit.RequestTime
			}
			if _, err := db.Set(identity.AdminIdentity(), nsOf(ns), "/"+strings.Join(keys, "/"), ev.Commit.After, WriteOptions{Method: ev.Method}); err != nil {
				return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
			}
			continue
		case ev.Kind == event.KindRequest && adminReplayable(ev):
			ns, keys, err := EventKeys(ev.Path)
			if err != nil {
				return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].path", i), Msg: err.Error()}
			}
			if t, ok := commitTime[i]; ok && !t.IsZero() {
				clk.t = t
			}
			path := "/" + strings.Join(keys, "/")
			if ev.Seen.Updates != nil {
				err = db.Update(identity.AdminIdentity(), nsOf(ns), path, ev.Seen.Updates, ev.Method)
			} else {
				_, err = db.Set(identity.AdminIdentity(), nsOf(ns), path, ev.Seen.Data, WriteOptions{Method: ev.Method})
			}
			if err != nil {
				return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].seen", i), Msg: "the admin write fails again: " + err.Error()}
			}
			continue
		case !service.RulesDecided(ev):
			continue
		}
		ns, keys, err := EventKeys(ev.Path)
		if err != nil {
			return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].path", i), Msg: err.Error()}
		}
		rep.CheckedEvents++
		div := service.Divergence{EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID, Before: string(ev.Verdict)}
		if t, ok := commitTime[i]; ok && !t.IsZero() {
			clk.t = t
		}
		last.ev = nil
		if writeMethods[ev.Method] && ev.Seen == nil {
			div.Kind, div.Explanation = service.Unsupported, errNoWriteData.Error()
			add(div)
			continue
		}
		now, err := redecide(db, ev, service.Who(ev), nsOf(ns), keys)
		if err != nil {
			div.Kind, div.After, div.Explanation = service.Unsupported, string(event.Error), "the replay failed: "+err.Error()
			add(div)
			continue
		}
		if writeMethods[ev.Method] && ev.Method != "ondisconnect_register" {
			if ev.Verdict != now {
				flipped[nsOf(ns)] = append(flipped[nsOf(ns)], keys)
			} else if hasServerValue(ev.Seen) {
				timed[nsOf(ns)] = append(timed[nsOf(ns)], keys)
			}
		}
		div.After = string(now)
		if last.ev != nil {
			div.Explanation = service.Explain(last.ev)
		}
		if div.Kind = service.DivergenceKind(ev.Verdict, now); div.Kind == "" {
			continue
		}
		add(div)
	}
	if recorded == nil || restored {
		return rep, nil
	}
	raw, err := db.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("replay: database: %w", err)
	}
	got, err := DecodeSessionState(raw, "replay")
	if err != nil {
		return nil, err
	}
	for _, ns := range service.UnionKeys(got.Namespaces, recorded.Namespaces) {
		var changes []treeChange
		diffTree(nil, recorded.Namespaces[ns].Data, got.Namespaces[ns].Data, &changes)
		for _, c := range changes {
			p := "/" + strings.Join(c.keys, "/")
			if ns != defaultNS {
				p = ns + ":" + p
			}
			d := service.Divergence{Kind: service.StateDrift, Path: p, Before: c.want, After: c.got}
			if under(timed[ns], c.keys) && !under(flipped[ns], c.keys) {
				d.Kind, d.Drift = service.ExpectedDrift, "time-drift"
			} else {
				d.Explanation = fmt.Sprintf("%s differs from the captured state", p)
			}
			add(d)
		}
	}
	return rep, nil
}

// errNoWriteData: a recorded write whose event carries no data.
var errNoWriteData = errors.New("the captured write carries no data (a capture older than write data in events), so it cannot be re-decided")

// redecide issues a recorded request again on db as who: a read is
// judged, a write is done (or, for an onDisconnect registration, decided
// without being done). It returns the new verdict; an error is a failure
// besides the rules.
func redecide(db *Database, ev *event.Event, who identity.Identity, ns string, keys []string) (event.Verdict, error) {
	path := "/" + strings.Join(keys, "/")
	var err error
	switch {
	case !writeMethods[ev.Method]:
		err = db.JudgeRead(who, ns, path, RulesQuery(ev.Seen), ev.Method)
	case ev.Seen == nil: // a set of null (a delete) carries Seen with no data
		return "", errNoWriteData
	case ev.Method == "ondisconnect_register":
		// Registering decides the write without doing it.
		c := db.Connect(ns, who)
		defer c.Close()
		defer c.OnDisconnectCancel("/")
		if ev.Seen.Updates != nil {
			err = c.OnDisconnectMerge(path, ev.Seen.Updates)
		} else {
			err = c.OnDisconnectSet(path, ev.Seen.Data)
		}
	case ev.Seen.Updates != nil:
		err = db.Update(who, ns, path, ev.Seen.Updates, ev.Method)
	default:
		_, err = db.Set(who, ns, path, ev.Seen.Data, WriteOptions{Method: ev.Method})
	}
	var denied *Denied
	switch {
	case err == nil:
		return event.Allow, nil
	case errors.As(err, &denied):
		return event.Deny, nil
	}
	return "", err
}

// RulesQuery is a recorded read's query as the rules saw it (nil for a
// plain read).
func RulesQuery(s *event.Seen) *rtdb.Query {
	if s == nil {
		return nil
	}
	m, ok := s.Query.(map[string]any)
	if !ok {
		return nil
	}
	q := &rtdb.Query{StartAt: jsonScalar(m["startAt"]), EndAt: jsonScalar(m["endAt"]), EqualTo: jsonScalar(m["equalTo"])}
	q.OrderByKey, _ = m["orderByKey"].(bool)
	q.OrderByPriority, _ = m["orderByPriority"].(bool)
	q.OrderByValue, _ = m["orderByValue"].(bool)
	q.OrderByChild, _ = m["orderByChild"].(string)
	q.LimitToFirst = int(jsonInt(m["limitToFirst"]))
	q.LimitToLast = int(jsonInt(m["limitToLast"]))
	return q
}

// jsonScalar is a bound value as the rules take it: string, float64 or
// bool (a session decodes numbers as json.Number).
func jsonScalar(v any) any {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return v
}

func jsonInt(v any) int64 {
	switch x := v.(type) {
	case json.Number:
		i, _ := x.Int64()
		return i
	case float64:
		return int64(x)
	case int:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// adminReplayable reports whether ev is an admin write the replay can
// issue again from what it sent (captures older than write data in
// events replay its commits instead).
func adminReplayable(ev *event.Event) bool {
	return ev.Service == serviceName && ev.Kind == event.KindRequest && service.Bypassed(ev) && ev.Verdict == event.Bypassed &&
		writeMethods[ev.Method] && ev.Method != "ondisconnect_register" && ev.Seen != nil
}

// under reports whether keys is at or below one of locs.
func under(locs [][]string, keys []string) bool {
	for _, l := range locs {
		if rtdb.IsPathPrefix(l, keys) || rtdb.IsPathPrefix(keys, l) {
			return true
		}
	}
	return false
}

// hasServerValue reports whether a write sent a server value ({".sv": …}).
func hasServerValue(s *event.Seen) bool {
	if s == nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x[".sv"]; ok {
				return true
			}
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	if walk(s.Data) {
		return true
	}
	for _, v := range s.Updates {
		if walk(v) {
			return true
		}
	}
	return false
}

type treeChange struct {
	keys      []string
	want, got any
}

// smallSubtree is the most leaves a subtree present on one side only
// may have to be reported leaf by leaf; a larger one is one change at its
// root.
const smallSubtree = 16

// diffTree lists where two trees differ: each differing leaf, or the
// location where one side has a large subtree the other lacks.
func diffTree(at []string, want, got any, out *[]treeChange) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && got == nil && leaves(wm, smallSubtree+1) <= smallSubtree {
		gm, gok = map[string]any{}, true
	}
	if gok && want == nil && leaves(gm, smallSubtree+1) <= smallSubtree {
		wm, wok = map[string]any{}, true
	}
	if wok && gok {
		for _, k := range service.UnionKeys(wm, gm) {
			diffTree(append(append([]string(nil), at...), k), wm[k], gm[k], out)
		}
		return
	}
	if !sameJSON(want, got) {
		*out = append(*out, treeChange{keys: at, want: want, got: got})
	}
}

// leaves counts a tree's leaves, stopping at limit.
func leaves(v any, limit int) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 1
	}
	n := 0
	for _, e := range m {
		if n += leaves(e, limit-n); n >= limit {
			return n
		}
	}
	return n
}

// sameJSON compares decoded JSON values, numbers by value.
func sameJSON(a, b any) bool {
	if na, ok := a.(json.Number); ok {
		if nb, ok := b.(json.Number); ok {
			fa, e1 := na.Float64()
			fb, e2 := nb.Float64()
			if e1 == nil && e2 == nil {
				return fa == fb
			}
			return na == nb
		}
	}
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	}
	return v
}
