package database

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/sim"
)

// This file is the only place the engine builds events (the schema is
// package event's): one request event per decided read, listen or write,
// one commit event per written location, listener lifecycle events, and
// mutation events for rules changes, clears and resets.

const serviceName = "database"

// evPath is an event's path: the database path in the project's default
// namespace, "<ns>:<path>" in any other.
func (d *Database) evPath(ns, path string) string {
	if ns == d.defaultNS {
		return path
	}
	return ns + ":" + path
}

// SplitEventPath is evPath's inverse: the namespace ("" for the default)
// and the location of an event's path ("/path" or "ns:/path").
func SplitEventPath(p string) (ns, path string, err error) {
	if strings.HasPrefix(p, "/") {
		return "", p, nil
	}
	i := strings.IndexByte(p, ':')
	if i <= 0 {
		return "", "", fmt.Errorf("path %q is neither /path nor namespace:/path", p)
	}
	return p[:i], p[i+1:], nil
}

func (d *Database) emit(ev event.Event) {
	ev.Service = serviceName
	d.env.Events.Emit(ev)
}

// verdict is how a request was decided, for the event.
type verdict int

const (
	vAllow verdict = iota
	vDeny
	vError
	vStale // a compare-and-set lost: the value changed since it was read
)

func resultOf(ok bool) verdict {
	if ok {
		return vAllow
	}
	return vDeny
}

// emitOp records a request and its verdict with the rules' explanation.
func (d *Database) emitOp(ns, method, path string, who identity.Identity, v verdict, dec *rtdb.Decision, reason string) {
	d.emitWrite(ns, method, path, who, v, dec, reason, nil)
}

// emitWrite is emitOp with what the rules saw of the request: a write's
// data as the caller sent it (denied writes too), a read's query, so a
// replay (verify) can decide it again. It returns the rules'
// explanation of the decision it recorded (none without dec), which a
// denial's why takes instead of building it again.
func (d *Database) emitWrite(ns, method, path string, who identity.Identity, v verdict, dec *rtdb.Decision, reason string, seen *event.Seen) sim.Explained {
	ev, exp := d.requestEvent(ns, method, path, who, v, dec, reason, seen)
	d.env.Events.Emit(ev)
	return exp
}

// requestEvent is the request event emitWrite emits, and its
// explanation; a commit emits it with the commit's events.
func (d *Database) requestEvent(ns, method, path string, who identity.Identity, v verdict, dec *rtdb.Decision, reason string, seen *event.Seen) (event.Event, sim.Explained) {
	ev := event.Event{Kind: event.KindRequest, Service: serviceName, Method: method, Path: d.evPath(ns, path), Origin: event.OriginClient,
		Request: &event.Request{Seen: seen}}
	ev.Who(who)
	r := ev.Request
	switch {
	case v == vError:
		r.Verdict = event.Error
		ev.Err = &event.Failure{Code: "invalid_data", Message: reason}
	case v == vStale:
		// Not a rules verdict: the rules were never asked.
		r.Verdict = event.Error
		ev.Err = &event.Failure{Code: "datastale", Message: reason}
	case who.IsAdmin() && v == vAllow:
		r.Verdict, ev.Origin = event.Bypassed, event.OriginAdmin
	case v == vAllow:
		r.Verdict = event.Allow
	default:
		r.Verdict = event.Deny
		ev.Err = &event.Failure{Code: "permission_denied", Message: "Permission denied"}
	}
	var exp sim.Explained
	if dec != nil {
		exp = sim.Explain("database", reason, dec.Rules, dec.Deciding, dec.Notes, 0, 0)
		r.Rule, r.Trace, r.Decision = exp.Rule, exp.Trace, exp.Decision
	} else if reason != "" && v != vError && v != vStale {
		r.Decision = &event.Explanation{Engine: "database", Reason: reason}
	}
	return ev, exp
}

// why explains a denial: the failing sub-expressions of the (traced)
// decision, as emitWrite explained it, with their values.
func why(exp sim.Explained) []string {
	return explain.Lines(exp.Decision, exp.Trace)
}

// emitRead is emitOp for a read: seen carries its query as the rules see
// it (named as the rules and the simulator name query.*), so a replay
// can decide it again.
func (d *Database) emitRead(ns, method, path string, who identity.Identity, v verdict, dec *rtdb.Decision, reason string, rq *rtdb.Query) sim.Explained {
	var seen *event.Seen
	if rq != nil {
		seen = &event.Seen{Query: queryView(rq)}
	}
	return d.emitWrite(ns, method, path, who, v, dec, reason, seen)
}

// queryView is a rules query in the simulator's vocabulary (the names of
// query.* in .read rules).
func queryView(q *rtdb.Query) map[string]any {
	m := map[string]any{"orderByKey": q.OrderByKey, "orderByPriority": q.OrderByPriority, "orderByValue": q.OrderByValue}
	if q.OrderByChild != "" {
		m["orderByChild"] = q.OrderByChild
	}
	for k, v := range map[string]any{"startAt": q.StartAt, "endAt": q.EndAt, "equalTo": q.EqualTo} {
		if v != nil {
			m[k] = v
		}
	}
	if q.LimitToFirst != 0 {
		m["limitToFirst"] = q.LimitToFirst
	}
	if q.LimitToLast != 0 {
		m["limitToLast"] = q.LimitToLast
	}
	return m
}

// seenOf is what a write sent: the value of a set, or the values of a
// multi-location update by path relative to base.
func seenOf(base []string, ws []write, merge bool) *event.Seen {
	if !merge {
		if len(ws) == 0 {
			return nil
		}
		return &event.Seen{Data: ws[0].raw}
	}
	u := make(map[string]any, len(ws))
	for _, w := range ws {
		u[joinPath(w.keys[len(base):])] = w.raw
	}
	return &event.Seen{Updates: u}
}

// commitEvents are the events of what a write changed, location by
// location, after its request event req (the first of them), built in
// buf (whose events are overwritten); now is the time its server values resolved to (the commit's
// request time); basePath is joinPath(base), the request's path, which a
// change at base (a set's) takes instead of rendering it again.
func (d *Database) commitEvents(buf []event.Event, req event.Event, ns, method string, who identity.Identity, changes []change, now time.Time, base []string, basePath string) []event.Event {
	evs := slices.Grow(buf[:0], 1+len(changes))
	evs = append(evs, req)
	for _, c := range changes {
		path := basePath
		if !slices.Equal(c.keys, base) {
			path = joinPath(c.keys)
		}
		ev := event.Event{Kind: event.KindCommit, Service: serviceName, Method: method, Path: d.evPath(ns, path),
			Commit: &event.Commit{RequestTime: now, Before: Plain(c.old), After: Plain(c.new), Database: ns, Scope: c.scope}}
		ev.Who(who)
		if who.IsAdmin() {
			ev.Origin = event.OriginAdmin
		}
		evs = append(evs, ev)
	}
	return evs
}

// emitListener records a listener's lifecycle and deliveries.
func (d *Database) emitListener(l *listener, phase event.Phase, reason string) {
	payload := l.delivered
	if phase != event.Deliver || payload == nil {
		payload = &event.Listener{Phase: phase, ListenerID: l.id, Target: l.target}
	}
	ev := event.Event{Kind: event.KindListener, Path: d.evPath(l.conn.ns.name, l.path), Origin: event.OriginListener, Listener: payload}
	ev.Who(l.conn.Who())
	if reason != "" {
		ev.Err = &event.Failure{Code: "permission_denied", Message: reason}
	}
	d.emit(ev)
}

// emitMutation records service-level changes (rules, reset).
func (d *Database) emitMutation(ns, op string, before, after any) {
	ev := event.Event{Kind: event.KindMutation, Path: ns, Origin: event.OriginAdmin,
		Mutation: &event.Mutation{Op: op, Previous: before, Current: after}}
	ev.Who(identity.AdminIdentity())
	d.emit(ev)
}
