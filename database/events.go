package database

import (
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/rtdb"
)

// This file is the only place the engine builds events, so the event
// schema can change in one place.

const serviceName = "database"

// emitOp records a request and its verdict.
func (d *Database) emitOp(ns, method, path string, who identity.Identity, result string, dec *rtdb.Decision, reason string) {
	ev := event.Event{
		Kind: event.KindOperation, Service: serviceName, Method: method, Path: path, Auth: who,
		Result: result, Origin: originOf(who), Detail: map[string]any{"namespace": ns},
	}
	if reason != "" {
		ev.Reasons = []string{reason}
	}
	if dec != nil {
		r := &event.Rules{Engine: "rtdb", PathVariableBindings: dec.Bindings, Explanation: dec}
		if len(dec.Notes) > 0 {
			r.Reason = dec.Notes[0]
		}
		if dec.Deciding >= 0 && dec.Deciding < len(dec.Rules) {
			rule := dec.Rules[dec.Deciding]
			r.MatchedPath, r.Operations, r.Line, r.Column, r.Condition = rule.MatchPath, rule.Operations, rule.Line, rule.Column, rule.Condition
		}
		ev.Rules = r
	}
	d.env.Events.Emit(ev)
}

// emitCommit records what a write changed, path by path.
func (d *Database) emitCommit(ns, method string, who identity.Identity, changes []change) {
	paths := make([]any, 0, len(changes))
	for _, c := range changes {
		paths = append(paths, map[string]any{"path": joinPath(c.keys), "before": c.old, "after": c.new})
	}
	path := "/"
	if len(changes) > 0 {
		path = joinPath(changes[0].keys)
	}
	d.env.Events.Emit(event.Event{
		Kind: event.KindCommit, Service: serviceName, Method: method, Path: path, Auth: who,
		Origin: originOf(who), Data: paths, Detail: map[string]any{"namespace": ns},
	})
}

// emitListener records a listener's lifecycle and deliveries.
func (d *Database) emitListener(l *listener, phase, reason string) {
	d.env.Events.Emit(event.Event{
		Kind: event.KindListener, Service: serviceName, Path: l.path, Auth: l.conn.who, Phase: phase,
		ListenerID: l.id, Reason: reason, Origin: event.OriginListener,
		Target: &event.Target{Kind: "path", Path: l.path, Query: l.q.Canonical()},
		Detail: map[string]any{"namespace": l.conn.ns.name},
	})
}

// emitMutation records service-level changes (rules, clear, reset).
func (d *Database) emitMutation(ns, op string, before, after any) {
	d.env.Events.Emit(event.Event{
		Kind: event.KindServiceMutation, Service: serviceName, Op: op, Auth: identity.AdminIdentity(),
		Before: before, After: after, Detail: map[string]any{"namespace": ns},
	})
}

func originOf(who identity.Identity) string {
	if who.IsAdmin() {
		return event.OriginAdmin
	}
	return event.OriginUser
}
