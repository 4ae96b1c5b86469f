package storage

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/sandbox/service"
)

// ObjectView decodes an object as Storage events and snapshots show it
// (an event's resource and data) into what the rules see; false when v is
// not one. A re-run or replay of a recorded request rebuilds the rules'
// resource and request.resource with it.
func ObjectView(v any) (*srules.Object, bool) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, false
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) int64 {
		switch x := m[k].(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return int64(f)
		case float64:
			return int64(x)
		case int64:
			return x
		case int:
			return int64(x)
		case string:
			i, _ := strconv.ParseInt(x, 10, 64)
			return i
		}
		return 0
	}
	tm := func(k string) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, str(k))
		return t
	}
	o := &srules.Object{Name: str("name"), Bucket: str("bucket"), Size: num("size"), ContentType: str("contentType"),
		MD5Hash: str("md5Hash"), CRC32C: str("crc32c"), TimeCreated: tm("timeCreated"), Updated: tm("updated"),
		Generation: num("generation"), Metageneration: num("metageneration"),
		CacheControl: str("cacheControl"), ContentDisposition: str("contentDisposition"),
		ContentEncoding: str("contentEncoding"), ContentLanguage: str("contentLanguage"), Metadata: map[string]string{}}
	if md, ok := m["metadata"].(map[string]any); ok {
		for k, v := range md {
			if s, ok := v.(string); ok && k != TokenKey {
				o.Metadata[k] = s
			}
		}
	}
	if o.Generation != 0 {
		o.ETag = strconv.FormatInt(o.Generation, 36) + "/" + strconv.FormatInt(o.Metageneration, 10)
	}
	return o, o.Name != ""
}

// Rerun implements service.Rerunner: it decides a recorded Storage
// request again with the live or the given storage.rules; resource and
// request.resource are the object views the event recorded. Notes name
// what the event does not carry.
func (e *Engine) Rerun(_ context.Context, r service.RerunRequest) (*service.Rerun, error) {
	ev, text := r.Event, r.Rules
	if text == "" {
		var loaded bool
		if _, text, loaded = e.live.Base(); !loaded {
			return nil, &service.ErrRerun{Msg: "no storage.rules are loaded: post the rules to re-run against as source"}
		}
	}
	rs, ds := srules.Compile(source.NewFile("storage.rules", text))
	if rs == nil || ds.HasErrors() {
		return nil, &service.RulesError{File: "storage.rules", Diags: ds}
	}
	seen := ev.Seen
	if seen == nil || seen.Before == nil {
		return nil, &service.ErrRerun{Msg: "the event does not carry what the rules saw (an event recorded before Storage events did): it cannot be re-run"}
	}
	e.rulesMu.RLock()
	fs := e.firestore
	e.rulesMu.RUnlock()
	req := &srules.Request{Method: ev.Method, Path: ev.Path, Time: ev.At, Firestore: fs}
	if m, ok := seen.Before.Data.(map[string]any); ok {
		req.Bucket, _ = m["bucket"].(string)
	}
	if seen.Before.Exists {
		req.Resource, _ = ObjectView(seen.Before.Data)
	}
	if ev.Method == srules.Create || ev.Method == srules.Update {
		o, ok := ObjectView(seen.Data)
		if !ok {
			return nil, &service.ErrRerun{Msg: "the recorded write carries no object metadata (request.resource): it cannot be re-run"}
		}
		req.Incoming = o
	}
	if r.As.Lens == event.LensUser {
		who := identity.NewUser(r.As.UID, r.As.Token)
		req.Auth = &srules.Auth{UID: who.UID, Token: who.Token}
	}
	// (Admin is refused by the caller: it bypasses rules.)
	out := &service.Rerun{Notes: []string{}}
	if strings.Contains(text, "request.time") {
		out.Notes = append(out.Notes, "request.time is the event's time: Storage events do not record request.time")
	}
	if strings.Contains(text, "firestore.get") || strings.Contains(text, "firestore.exists") {
		out.Notes = append(out.Notes, "firestore.get()/exists() read the current Firestore state, not the state as of the request")
	}
	d := rs.Decide(req)
	out.Reason = ReasonOf(d, ev.Method)
	out.Verdict = event.Deny
	if d.Allowed() {
		out.Verdict = event.Allow
	}
	exp := sim.Explain("storage", out.Reason, d.Trace, d.Deciding, d.Notes, d.Expressions, d.Lookups)
	exp.Decision.Bindings = sim.Bound(d.Bindings.Map())
	out.Rule, out.Trace, out.Decision = exp.Rule, exp.Trace, exp.Decision
	if out.Verdict != event.Allow {
		out.Explanation = explain.Lines(exp.Decision, exp.Trace)
	}
	return out, nil
}
