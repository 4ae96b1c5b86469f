package storage

// This file is where the engine's operations become events (the schema is
// package event's): one request event per decided request, one mutation
// event per changed object.

import (
	"maps"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/sandbox/service"
)

// Ops of the mutation events.
const (
	OpObjectPut      = "object_put"
	OpObjectDelete   = "object_delete"
	OpMetadataUpdate = "metadata_update"
	OpRulesSet       = "rules_set"
	OpTokenCreate    = "token_create" // a download token minted on a metadata read
)

func (e *Engine) eventsOn() bool { return e.env.Events != event.Discard }

func (e *Engine) emit(ev event.Event) {
	ev.Service = Service
	e.env.Events.Emit(ev)
}

// emitOp records one request and its verdict. err is the request's outcome
// after the verdict (not found, precondition failed, ...). Path is the
// object's full path (for a list, the prefix), as the original sandbox's
// events show it; the bucket is in what the rules saw.
func (e *Engine) emitOp(who identity.Identity, method, bkt, name string, dec decision, start time.Time, before, incoming *Object, err error) {
	if !e.eventsOn() {
		return
	}
	e.emitOpViews(who, method, bkt, name, dec, start, e.viewsOf(before, incoming), err)
}

// eventViews are the event views of one commit's objects (before, after:
// nil when absent), each built once for the commit's request event and
// its change event, which show the same objects: a view is a map of a
// dozen entries, most of them boxed, built per event it was (four per
// replaced object's upload). A stored object's view comes from the
// engine's cache of recent ones (viewCache).
type eventViews struct {
	before, after *Object
	bv, av        map[string]any
	cache         *viewCache
}

// viewsOf are the views of a change from before to after.
func (e *Engine) viewsOf(before, after *Object) *eventViews {
	return &eventViews{before: before, after: after, cache: &e.views}
}

// of is o's view; o is vs.before, vs.after or another object.
func (vs *eventViews) of(o *Object) map[string]any {
	switch {
	case o == nil:
		return nil
	case o == vs.before:
		if vs.bv == nil {
			vs.bv = vs.cache.view(o)
		}
		return vs.bv
	case o == vs.after:
		if vs.av == nil {
			vs.av = vs.cache.view(o)
		}
		return vs.av
	}
	return eventView(o)
}

// viewCacheSize is how many objects' event views viewCache keeps.
const viewCacheSize = 256

// absent is what a request's event shows of an object that does not
// exist (a create, a list, a read of a missing object): its bucket. The
// events of one bucket share one such view; the last bucket's is kept.
func (c *viewCache) absent(bkt string) map[string]any {
	if b := c.bucket.Load(); b != nil && b.name == bkt {
		return b.v
	}
	v := map[string]any{"bucket": bkt}
	c.bucket.Store(&bucketView{name: bkt, v: v})
	return v
}

type bucketView struct {
	name string
	v    map[string]any
}

// viewCache keeps the event views of recently seen object versions, so
// that the events of one version share one view: an upload's, then the
// reads of what it wrote (the request and change events of a commit and
// the reads after it). It holds a version by its *Object: the engine
// never changes a stored Object (a change stores a new one), so a view
// found for the same pointer shows that version, and a new version,
// another pointer, never finds an old one's. A slot is picked by the
// version's generation and metageneration; a collision replaces it.
// Events only read their views (a consumer that adds to one copies it,
// as withTokens does).
type viewCache struct {
	slots  [viewCacheSize]atomic.Pointer[cachedView]
	bucket atomic.Pointer[bucketView] // absent's
	// The last bucket and content type a view showed, boxed (as an any):
	// the views of one bucket's objects, most of one type, share the
	// box instead of a new one each.
	lastBucket, lastType atomic.Pointer[boxedString]
}

// boxedString is a string and its box.
type boxedString struct {
	s string
	v any
}

// box is s as an any, the one kept in last when it holds s.
func box(last *atomic.Pointer[boxedString], s string) any {
	if b := last.Load(); b != nil && b.s == s {
		return b.v
	}
	b := &boxedString{s: s, v: s}
	last.Store(b)
	return b.v
}

type cachedView struct {
	o *Object
	v map[string]any
}

// view is o's event view, from the cache or built and kept in it.
func (c *viewCache) view(o *Object) map[string]any {
	slot := &c.slots[uint64(o.Generation+31*o.Metageneration)%viewCacheSize]
	if cv := slot.Load(); cv != nil && cv.o == o {
		return cv.v
	}
	v := eventViewBoxed(o, box(&c.lastBucket, o.Bucket), box(&c.lastType, o.ContentType))
	slot.Store(&cachedView{o: o, v: v})
	return v
}

// emitOpViews is emitOp with the views of vs.before and vs.after (the
// incoming object).
func (e *Engine) emitOpViews(who identity.Identity, method, bkt, name string, dec decision, start time.Time, vs *eventViews, err error) {
	if !e.eventsOn() {
		return
	}
	before, incoming := vs.before, vs.after
	// The request, what it saw and the resource before, allocated
	// together (one allocation per event, not three).
	parts := &struct {
		r      event.Request
		seen   event.Seen
		before event.Resource
	}{}
	r := &parts.r
	r.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	ev := event.Event{Kind: event.KindRequest, Method: method, Path: name, Origin: event.OriginClient, Request: r}
	ev.Who(who)
	switch {
	case dec.by == "admin":
		r.Verdict = event.Bypassed
		ev.Origin = event.OriginAdmin
	case dec.by == "token":
		// A download token grants the read without the rules: a replay
		// against other rules must not decide it again.
		r.Verdict = event.Bypassed
	case !dec.allowed:
		r.Verdict = event.Deny
	default:
		r.Verdict = event.Allow
	}
	switch {
	case dec.d != nil:
		d := dec.d
		exp := sim.Explain("storage", dec.reason, d.Trace, d.Deciding, d.Notes, d.Expressions, d.Lookups)
		exp.Decision.Bindings = sim.Bound(d.Bindings.Map())
		r.Rule, r.Trace, r.Decision = exp.Rule, exp.Trace, exp.Decision
	case dec.by != "admin":
		r.Decision = &event.Explanation{Engine: "storage", Reason: dec.reason}
	}
	seen := &parts.seen
	seen.Before = &parts.before
	seen.Before.Exists = before != nil
	if before != nil {
		seen.Before.Data = vs.of(before)
	} else {
		seen.Before.Data = e.views.absent(bkt)
	}
	if incoming != nil {
		seen.Data = vs.of(incoming)
	}
	r.Seen = seen
	if err != nil && dec.allowed {
		if CodeOf(err) == Internal {
			r.Verdict = event.Error
		}
		ev.Err = &event.Failure{Code: Reason(err), Message: err.Error()}
	} else if !dec.allowed {
		ev.Err = &event.Failure{Code: Reason(dec.err()), Message: dec.err().Error()}
	}
	e.emit(ev)
}

// emitChange records a committed change: an object written, deleted or its
// metadata patched.
func (e *Engine) emitChange(who identity.Identity, op string, before, after *Object) {
	if !e.eventsOn() {
		return
	}
	e.emit(e.changeEvent(who, op, e.viewsOf(before, after)))
}

// heldChange is the change event of a commit about to be made durable,
// when it must be held in the outbox because a consumer must see it
// across a crash (the functions' triggers): persist writes the entries it
// returns in the same Log append as the object, and the caller emits the
// event once the commit is made (emitCommitted). Otherwise the event is nil,
// and emitCommitted makes it when it emits it: for a queued commit that is
// after the wait, outside e.mu, so that building the objects' views does
// not lengthen the lock every writer takes.
func (e *Engine) heldChange(who identity.Identity, op string, vs *eventViews) (*event.Event, []service.LogChange) {
	o := e.env.Outbox
	if !e.eventsOn() || o == nil || e.env.Log == nil || !o.Holding() {
		return nil, nil
	}
	ev := e.newChange(who, op, vs)
	evs := []event.Event{*ev}
	held := o.Hold(evs)
	*ev = evs[0]
	return ev, held
}

// newChange makes a commit's change event, its mutation allocated with
// it.
func (e *Engine) newChange(who identity.Identity, op string, vs *eventViews) *event.Event {
	parts := &struct {
		ev event.Event
		m  event.Mutation
	}{}
	ev := &parts.ev
	e.changeEventInto(ev, &parts.m, who, op, vs)
	ev.Service = Service
	return ev
}

// emitCommitted emits a made commit's change event: held, what heldChange
// made, or when it made none (nothing held) one made now from vs.
func (e *Engine) emitCommitted(held *event.Event, who identity.Identity, op string, vs *eventViews) {
	switch {
	case held != nil:
		e.emit(*held)
	case e.eventsOn():
		e.emit(*e.newChange(who, op, vs))
	}
}

// changeEvent is the event of a committed change from vs.before to
// vs.after.
func (e *Engine) changeEvent(who identity.Identity, op string, vs *eventViews) event.Event {
	var ev event.Event
	e.changeEventInto(&ev, new(event.Mutation), who, op, vs)
	return ev
}

// changeEventInto is changeEvent written into ev, its mutation into m.
func (e *Engine) changeEventInto(ev *event.Event, m *event.Mutation, who identity.Identity, op string, vs *eventViews) {
	before, after := vs.before, vs.after
	o := after
	if o == nil {
		o = before
	}
	*m = event.Mutation{Op: op, Project: e.env.Project}
	if before != nil {
		m.Previous = vs.of(before)
	}
	if after != nil {
		m.Current = withTokens(vs.of(after), after)
	}
	if before != nil && op != OpTokenCreate {
		m.Previous = withTokens(m.Previous.(map[string]any), before)
	}
	*ev = event.Event{Kind: event.KindMutation, Method: op, Path: o.Name, Mutation: m}
	ev.Who(who)
	if who.IsAdmin() {
		ev.Origin = event.OriginAdmin
	}
}

func (e *Engine) emitRulesLoaded(name string) {
	ev := event.Event{Kind: event.KindMutation, Method: OpRulesSet, Path: name, Actor: event.Actor{Kind: event.ActorSystem},
		Mutation: &event.Mutation{Op: OpRulesSet, Project: e.env.Project}}
	e.emit(ev)
}

// withTokens is an object's view with its download tokens, for a
// change's event: Storage triggers send them
// (metadata.firebaseStorageDownloadTokens). v may be the request event's
// view too (eventViews), so it is copied, not changed, when tokens are
// added.
func withTokens(v map[string]any, o *Object) map[string]any {
	if ts := o.DownloadTokens(); len(ts) > 0 {
		v = maps.Clone(v)
		v["downloadTokens"] = strings.Join(ts, ",")
	}
	return v
}

// eventView is the metadata an event shows (never the bytes): every
// property the rules see of the object, so a replay (verify) can build
// resource and request.resource again from the event alone.
func eventView(o *Object) map[string]any { return eventViewBoxed(o, o.Bucket, o.ContentType) }

// eventViewBoxed is eventView with o's bucket and content type given
// boxed.
func eventViewBoxed(o *Object, bucket, contentType any) map[string]any {
	// Sized for what it will hold (a map literal's size would be grown
	// once past it), and a time both stamps share boxed once: a view is
	// a score of allocations, two per upload's events.
	n := 9
	for _, s := range [...]string{o.ContentEncoding, o.ContentDisposition, o.ContentLanguage, o.CacheControl} {
		if s != "" {
			n++
		}
	}
	if !o.TimeCreated.IsZero() {
		n++
	}
	if !o.Updated.IsZero() {
		n++
	}
	v := make(map[string]any, n)
	v["bucket"], v["name"], v["size"], v["contentType"] = bucket, o.Name, o.Size, contentType
	v["generation"], v["metageneration"] = o.Generation, o.Metageneration
	v["md5Hash"], v["crc32c"], v["metadata"] = o.MD5Hash, o.CRC32C, customMetadataView(o)
	var created any
	if !o.TimeCreated.IsZero() {
		created = o.TimeCreated.UTC().Format(time.RFC3339Nano)
		v["timeCreated"] = created
	}
	if !o.Updated.IsZero() {
		if created != nil && o.Updated.Equal(o.TimeCreated) {
			v["updated"] = created
		} else {
			v["updated"] = o.Updated.UTC().Format(time.RFC3339Nano)
		}
	}
	opt := func(k, s string) {
		if s != "" {
			v[k] = s
		}
	}
	opt("contentEncoding", o.ContentEncoding)
	opt("contentDisposition", o.ContentDisposition)
	opt("contentLanguage", o.ContentLanguage)
	opt("cacheControl", o.CacheControl)
	return v
}

// customMetadataView is o's custom metadata as an event shows it: a
// map[string]any, the type JSON decodes to, so that ObjectView reads it
// alike from a live event and from a recorded one, and event.AppendJSON
// writes it directly (a map[string]string went through encoding/json,
// the event with it: a tenth of an upload's CPU time).
func customMetadataView(o *Object) map[string]any {
	out := make(map[string]any, len(o.Metadata))
	for k, v := range o.Metadata {
		if k != TokenKey {
			out[k] = v
		}
	}
	return out
}

// Reject records a request the wire adapter refused before the engine
// could decide it (a malformed body, an unknown route, an unreadable
// token): method and path are the HTTP request's.
func (e *Engine) Reject(method, path string, err error) {
	if !e.eventsOn() {
		return
	}
	ev := event.Event{Kind: event.KindRequest, Method: method, Path: path, Origin: event.OriginClient,
		Request: &event.Request{Verdict: event.Error}, Err: &event.Failure{Code: Reason(err), Message: err.Error()}}
	ev.Who(identity.Anonymous())
	e.emit(ev)
}
