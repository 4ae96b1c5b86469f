package database

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// Rerun implements service.Rerunner: it decides a recorded request again
// as r.As against r.Rules (empty: the rules of the request's namespace in
// force) on a branch of the live state, the live tree with each later
// commit undone, newest first, so the rules see the tree exactly as the
// request found it; the request is then issued on the branch, at the
// time it was made, as Replay issues it. Nothing live changes. A reset or
// snapshot load after the request means the tree as of it is not known:
// an *service.ErrRerun.
func (d *Database) Rerun(_ context.Context, r service.RerunRequest) (*service.Rerun, error) {
	ev := r.Event
	if ev.Service != serviceName || ev.Kind != event.KindRequest {
		return nil, &service.ErrRerun{Msg: fmt.Sprintf("event %s is not a Realtime Database request", ev.ID)}
	}
	ns, keys, err := EventKeys(ev.Path)
	if err != nil {
		return nil, &service.ErrRerun{Msg: "the event's path: " + err.Error()}
	}
	if ns == "" {
		ns = d.defaultNS
	}
	const name = "database.rules.json"
	text := r.Rules
	if text == "" {
		if text = d.Rules(ns); text == "" {
			return nil, &service.ErrRerun{Msg: "no database rules are loaded: post the rules to re-run against as source"}
		}
	}
	if rs, diags := rtdb.Compile(source.NewFile(name, text)); rs == nil || diags.HasErrors() {
		return nil, &service.RulesError{File: name, Diags: diags}
	}
	for i := range r.Later {
		if r.Later[i].Kind == event.KindBoundary {
			return nil, &service.ErrRerun{Msg: fmt.Sprintf("the state was reset or a snapshot loaded after event %s: the tree as of that request is not known", ev.ID)}
		}
	}
	live, err := d.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("the live tree: %w", err)
	}
	st, err := DecodeSessionState(live, "live")
	if err != nil {
		return nil, err
	}
	trees := make(map[string]any, len(st.Namespaces))
	for k, n := range st.Namespaces {
		trees[k] = n.Data
	}
	defaultNS := d.defaultNS
	nsOf := func(ns string) string {
		if ns == "" {
			return defaultNS
		}
		return ns
	}
	if err := undoCommits(trees, r.Later, nsOf, "events after "+ev.ID); err != nil {
		return nil, err
	}
	for k, t := range trees {
		st.Namespaces[k] = SessionNamespace{Data: t} // no rules of its own: the rules re-run with apply everywhere
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	at := ev.At
	last := &lastRequest{}
	branch, err := New(service.Env{Project: d.Project(), Now: func() time.Time { return at }, Events: last}, Options{Rules: text, RulesName: name})
	if err != nil {
		return nil, fmt.Errorf("the branch: %w", err)
	}
	if err := branch.Restore(raw); err != nil {
		return nil, fmt.Errorf("the branch's tree: %w", err)
	}
	who := identity.Anonymous()
	if r.As.Lens == event.LensUser {
		who = identity.NewUser(r.As.UID, r.As.Token)
	}
	// (Admin is refused by the caller: it bypasses rules.)
	verdict, err := redecide(branch, &ev, who, ns, keys)
	if err != nil {
		return nil, &service.ErrRerun{Msg: "the request cannot be re-run: " + err.Error()}
	}
	out := &service.Rerun{Verdict: verdict, Notes: []string{}}
	if e := last.ev; e != nil && e.Request != nil {
		out.Rule, out.Trace, out.Decision = e.Request.Rule, e.Request.Trace, e.Request.Decision
		if e.Request.Decision != nil {
			out.Reason = e.Request.Decision.Reason
		}
		if out.Verdict != event.Allow {
			out.Explanation = explain.Lines(e.Request.Decision, e.Request.Trace)
		}
	}
	return out, nil
}
