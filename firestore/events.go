package firestore

import (
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
)

// This file is where the engine's operations become events (the schema is
// package event's): one request event per decided read or write, one
// commit event per changed document, listener lifecycle events.

func (e *Engine) eventsOn() bool { return e.events != event.Discard }

func (e *Engine) emit(ev event.Event) {
	ev.Service = "firestore"
	e.events.Emit(ev)
}

// requestEvent is the request event of one decided operation, its
// Request r (zero: the caller allocates it, with the parts it points to
// when it can, as requestParts).
func requestEvent(r *event.Request, who identity.Identity, m Method, path string, origin event.Origin, dec AuthzDecision, d time.Duration) event.Event {
	r.DurationMs = float64(d.Microseconds()) / 1000
	ev := event.Event{Kind: event.KindRequest, Method: string(m), Path: path, Origin: origin, Request: r}
	ev.Who(who)
	if who.IsAdmin() {
		r.Verdict = event.Bypassed
		if origin == event.OriginClient {
			ev.Origin = event.OriginAdmin
		}
		return ev
	}
	r.Verdict = dec.Verdict
	if x, ok := dec.Explanation.(*fsrules.Decision); ok && x != nil {
		exp := sim.Explain("firestore", dec.Reason, x.Trace, x.Deciding, x.Notes, x.Expressions, x.Lookups)
		exp.Decision.Bindings = sim.Bound(x.Bindings.Map())
		r.Rule, r.Trace, r.Decision = exp.Rule, exp.Trace, exp.Decision
	} else {
		r.Decision = &event.Explanation{Engine: "firestore", Reason: dec.Reason}
	}
	return ev
}

func groupOf(g *Group) *event.Group {
	if g == nil {
		return nil
	}
	return &event.Group{ID: g.ID, Kind: event.Origin(g.Kind)}
}

// emitAll emits evs as one (event.EmitBatch) and takes evs for reuse
// (eventSlice): the events of one commit,
// its request events and then its commit events, so that no reader of the
// bus (session capture flushing its file) finds an allowed write without
// the commit that says what it changed.
func (e *Engine) emitAll(evs []event.Event) {
	if len(evs) == 0 {
		return
	}
	for i := range evs {
		evs[i].Service = "firestore"
	}
	event.EmitBatch(e.events, evs)
	recycleEvents(evs)
}

// freeEventSlices holds the slices commits gather their events in, for
// reuse: the bus keeps and delivers copies of the events, so a slice is
// free once emitted, and a new one per commit was a tenth of a set's
// bytes allocated in the engine (an Event is over 300 bytes). A buffered
// channel, not a sync.Pool: putting a slice in a pool boxes its header,
// an allocation per commit. At most 32 are kept (a few kilobytes: most
// hold room for two events).
var freeEventSlices = make(chan []event.Event, 32)

// maxRecycledEvents bounds the slices kept for reuse: a commit of
// hundreds of writes does not keep its slice.
const maxRecycledEvents = 16

// eventSlice returns an empty slice with room for n events, reused when
// n is small.
func eventSlice(n int) []event.Event {
	if n <= maxRecycledEvents {
		select {
		case evs := <-freeEventSlices:
			if cap(evs) >= n {
				return evs
			}
		default:
		}
	}
	return make([]event.Event, 0, n)
}

// recycleEvents gives evs, emitted, back for reuse, zeroed first so that
// it holds nothing of the events.
func recycleEvents(evs []event.Event) {
	if cap(evs) > maxRecycledEvents {
		return
	}
	clear(evs[:cap(evs)])
	select {
	case freeEventSlices <- evs[:0]:
	default:
	}
}

// requestParts are a request event's Request, what it saw and the
// document before, allocated as one: they live as long as each other (the
// event's), and three allocations were a tenth of what a set or a get
// allocated in the engine.
type requestParts struct {
	req    event.Request
	seen   event.Seen
	before event.Resource
}

// writeOpEvent is the request event of one decided write of a commit.
func (e *Engine) writeOpEvent(c commitReq, s *opState, g *Group, origin event.Origin, d time.Duration) event.Event {
	parts := &requestParts{}
	ev := requestEvent(&parts.req, c.who, s.method, s.op.rel, origin, s.dec, d)
	ev.Group = groupOf(g)
	memo := s.eventMemo(c.db.name)
	parts.before = resourceIn(s.before, c.db.name, memo)
	seen := &parts.seen
	seen.Before = &parts.before
	if u := s.op.w.GetUpdate(); u != nil {
		if len(s.op.sentinels) == 0 {
			seen.Data = s.written(c.db.name)
		} else {
			// Marked in a map of its own: the commit event's written
			// data has no markers.
			seen.Data = withSentinels(encodeFields(u.GetFields(), c.db.name, memo), s.op.sentinels)
		}
	}
	s.dec.seen.event(seen, c.db.name, memo)
	ev.Request.Seen = seen
	return ev
}

// withSentinels marks the fields a write's transforms set, as the caller
// wrote them ({"__sentinel": "serverTimestamp"}), in the data it sent.
func withSentinels(data map[string]any, ss []event.Sentinel) map[string]any {
	if len(ss) == 0 {
		return data
	}
	if data == nil {
		data = map[string]any{}
	}
	for _, s := range ss {
		data[s.Field] = map[string]any{"__sentinel": string(s.Kind)}
	}
	return data
}

// eventMemo is the memo of the JSON forms s's request and commit events
// share: the written fields, the document before and after (one form when
// the write replaced the document with exactly what it sent).
func (s *opState) eventMemo(db DatabaseName) *encodeMemo {
	if s.memo == nil {
		s.memoSpace = encodeMemo{}
		s.memo = &s.memoSpace
		if s.after != nil && s.op.replacesWith(s.after) {
			// The document after the write holds what the write sent:
			// one form serves as both (a set's events then hold one
			// copy of the document, not two).
			s.memo.written = encodeFields(s.op.w.GetUpdate().GetFields(), db, s.memo)
			s.memo.docs[0] = docFields{s.after, s.memo.written}
		}
		if s.beforeForm != nil {
			// The transaction read this version: its read's event
			// encoded it already.
			s.memo.docs[1] = docFields{s.before, s.beforeForm}
		}
	}
	return s.memo
}

// written is the JSON form of the fields s's write sends (nil for a
// write that sends none), encoded once for its request event's data and
// its commit event's written fields, which share it as they share its
// arrays and maps (encodeMemo).
func (s *opState) written(db DatabaseName) map[string]any {
	u := s.op.w.GetUpdate()
	if u == nil {
		return nil
	}
	memo := s.eventMemo(db)
	if memo.written == nil {
		memo.written = encodeFields(u.GetFields(), db, memo)
	}
	return memo.written
}

// commitEvent is the commit event of one write of a commit: the document
// before and after it; final says the commit leaves the document so.
func (e *Engine) commitEvent(c commitReq, s *opState, g *Group, t time.Time, final bool) event.Event {
	memo := s.eventMemo(c.db.name)
	// The last event of the operation: the memo is done with.
	defer func() { s.memo, s.memoSpace = nil, encodeMemo{} }()
	// The service is set here, not only by emitAll: the outbox's
	// consumer decides whether to hold the event before it is emitted.
	ev := event.Event{Kind: event.KindCommit, Service: ServiceName, Method: string(s.method), Path: s.op.rel, Group: groupOf(g),
		Commit: &event.Commit{RequestTime: t, Before: stateOf(s.before, c.db.name, memo), After: stateOf(s.after, c.db.name, memo),
			Sentinels: s.op.sentinels, AutoID: c.autoID, Database: c.db.name.Database, Final: final}}
	if d := s.after; d != nil {
		ev.CreateTime, ev.UpdateTime = d.GetCreateTime().AsTime(), d.GetUpdateTime().AsTime()
	}
	if d := s.before; d != nil {
		ev.BeforeCreateTime, ev.BeforeUpdateTime = d.GetCreateTime().AsTime(), d.GetUpdateTime().AsTime()
	}
	ev.Who(c.who)
	if c.who.IsAdmin() {
		ev.Origin = event.OriginAdmin
	}
	if w := s.written(c.db.name); w != nil {
		ev.Written = w
	}
	return ev
}

// readEvent is the request event of a decided read, in or out of a
// transaction.
func readEvent(r *event.Request, who identity.Identity, m Method, path string, dec AuthzDecision, dur time.Duration, v readView) event.Event {
	origin := event.OriginClient
	if v.tx != nil {
		origin = event.OriginTransaction
	}
	ev := requestEvent(r, who, m, path, origin, dec, dur)
	if v.tx != nil {
		ev.Group = &event.Group{ID: v.tx.group, Kind: event.OriginTransaction}
	}
	return ev
}

func (e *Engine) emitRead(who identity.Identity, db DatabaseName, m Method, path string, dec AuthzDecision, d *pb.Document, dur time.Duration, v readView) {
	if !e.eventsOn() {
		return
	}
	// The request, what it saw and the document before it are allocated
	// as one: a read's request event is most of what a small get
	// allocates in the engine.
	parts := &requestParts{}
	ev := readEvent(&parts.req, who, m, path, dec, dur, v)
	seen := &parts.seen
	if m == MethodGet {
		parts.before = resourceIn(d, db, nil)
		seen.Before = &parts.before
		if v.tx != nil && d != nil {
			if form, ok := parts.before.Data.(map[string]any); ok {
				v.tx.keepForm(d, form)
			}
		}
	}
	dec.seen.event(seen, db, nil)
	ev.Request.Seen = seen
	e.emit(ev)
}

// resourceIn is document d of database db as an event says it (db is
// the one its name says: it is not parsed again from the name), its form
// from memo when memo has it.
func resourceIn(d *pb.Document, db DatabaseName, memo *encodeMemo) event.Resource {
	if d == nil {
		return event.Resource{Exists: false}
	}
	return event.Resource{Data: memo.fields(d, db), Exists: true}
}

// emitList records a decided query, with the query the rules saw (so a
// replay can re-decide it and index suggestions can see it).
func (e *Engine) emitList(who identity.Identity, q *query, dec AuthzDecision, dur time.Duration, v readView) {
	if !e.eventsOn() {
		return
	}
	ev := readEvent(&event.Request{}, who, MethodList, q.collPath(), dec, dur, v)
	ev.Request.Seen = &event.Seen{Query: q.sq}
	dec.seen.event(ev.Request.Seen, q.db, nil)
	e.emit(ev)
}

func stateOf(d *pb.Document, db DatabaseName, memo *encodeMemo) any {
	if d == nil {
		return nil
	}
	return memo.fields(d, db)
}

// listenerEvent is a listener lifecycle event of target t.
func (t *target) listenerEvent(phase event.Phase) event.Event {
	ev := event.Event{Kind: event.KindListener, Origin: event.OriginListener,
		Listener: &event.Listener{Phase: phase, ListenerID: t.listenerID, Target: t.eventTarget()}}
	ev.Who(t.who)
	return ev
}

func (t *target) eventTarget() *event.Target {
	if t.q != nil {
		return &event.Target{Kind: "query", Path: t.q.collPath(), Query: t.q.sq}
	}
	if len(t.paths) == 1 {
		return &event.Target{Kind: "doc", Path: t.paths[0]}
	}
	return &event.Target{Kind: "docs", Query: t.paths}
}

// emitDelivery records what a delivery sent (or the error that ended the
// target).
func (e *Engine) emitDelivery(t *target, d *delivery, trig *event.Trigger) {
	if !e.eventsOn() {
		return
	}
	if d.err != nil {
		ev := t.listenerEvent(event.Errored)
		ev.Err = &event.Failure{Code: Code(d.err).String(), Message: d.err.Error()}
		e.emit(ev)
		return
	}
	ev := t.listenerEvent(event.Deliver)
	l := ev.Listener
	l.Size = len(d.docs)
	for _, c := range d.changes {
		switch c.Kind {
		case Added:
			l.Added++
		case Modified:
			l.Modified++
		case Removed:
			l.Removed++
		}
	}
	if !d.initial {
		l.Trigger = trig
	}
	e.emit(ev)
}
