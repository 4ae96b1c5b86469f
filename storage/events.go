package storage

// Every event the engine emits is built in this file, so the event schema
// can change in one place.

import (
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/sim"
)

// Ops of the change events.
const (
	OpObjectPut      = "object_put"
	OpObjectDelete   = "object_delete"
	OpMetadataUpdate = "metadata_update"
)

func (e *Engine) emit(ev event.Event) {
	ev.Service = Service
	e.env.Events.Emit(ev)
}

// emitOp records one request and its verdict. err is the request's outcome
// after the verdict (not found, precondition failed, ...). Path is the
// object's full path (for a list, the prefix), as the original sandbox's
// events show it; the bucket is in Detail.
func (e *Engine) emitOp(who identity.Identity, method, bkt, name string, dec decision, start time.Time, err error) {
	ev := event.Event{
		Kind: event.KindOperation, Method: method, Path: name, Auth: who,
		Origin:     event.OriginUser,
		DurationMs: float64(time.Since(start).Microseconds()) / 1000,
		Detail:     map[string]any{"bucket": bkt},
	}
	switch {
	case !dec.allowed:
		ev.Result = event.ResultDeny
	case err != nil && CodeOf(err) == Internal:
		ev.Result = event.ResultError
	default:
		ev.Result = event.ResultAllow
	}
	if who.IsAdmin() {
		ev.Origin = event.OriginAdmin
	}
	if dec.reason != "" {
		ev.Reasons = []string{dec.reason}
	}
	if err != nil && dec.allowed {
		ev.Error = &event.Error{Code: Reason(err), Message: err.Error()}
	}
	if dec.by == "rules" || dec.by == "no-rules" {
		r := &event.Rules{Engine: "storage", Reason: dec.reason}
		if d := dec.d; d != nil {
			expect := sim.Allow
			if !d.Allowed() {
				expect = d.Outcome
			}
			r.Explanation = d.Case(method+" "+objectPath(bkt, name), expect)
			if d.Deciding >= 0 && d.Deciding < len(d.Trace) {
				t := d.Trace[d.Deciding]
				idx := t.RuleIndex
				r.MatchedPath, r.RuleIndex, r.Operations = t.MatchPath, &idx, t.Operations
				r.Line, r.Column, r.Condition = t.Line, t.Column, t.Condition
			}
		}
		ev.Rules = r
	}
	if dec.by == "token" {
		ev.Detail["grantedBy"] = "downloadToken"
	}
	e.emit(ev)
}

// emitChange records a committed change: an object written, deleted or its
// metadata patched.
func (e *Engine) emitChange(who identity.Identity, op string, before, after *Object) {
	o := after
	if o == nil {
		o = before
	}
	ev := event.Event{Kind: event.KindServiceMutation, Op: op, Path: o.Name, Auth: who, Detail: map[string]any{"bucket": o.Bucket}}
	if before != nil {
		ev.Before = eventView(before)
	}
	if after != nil {
		ev.After = eventView(after)
		ev.Detail["size"] = after.Size
		ev.Detail["contentType"] = after.ContentType
	}
	e.emit(ev)
}

// emitBoundary records that the whole state was replaced (reset, restore).
func (e *Engine) emitBoundary(op string) {
	e.emit(event.Event{Kind: event.KindServiceMutation, Op: op, Path: "*"})
}

func (e *Engine) emitRulesLoaded(name string) {
	e.emit(event.Event{Kind: event.KindServiceMutation, Op: "rules_loaded", Path: name})
}

// eventView is the metadata an event shows (never the bytes).
func eventView(o *Object) map[string]any {
	return map[string]any{
		"bucket": o.Bucket, "name": o.Name, "size": o.Size, "contentType": o.ContentType,
		"generation": o.Generation, "metageneration": o.Metageneration,
		"md5Hash": o.MD5Hash, "metadata": o.CustomMetadata(),
	}
}

func objectPath(bkt, name string) string {
	if name == "" {
		return "/b/" + bkt + "/o"
	}
	return "/b/" + bkt + "/o/" + name
}
