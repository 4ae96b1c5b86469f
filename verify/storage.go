package verify

// The Storage replay. Object bytes are not in events (only what the rules
// see of an object: its metadata), so the replay keeps each object's
// rules view, starting from the captured final state with the session's
// changes undone newest first, re-decides every client request with the
// candidate storage.rules (uploads, downloads, metadata reads and
// patches, lists, deletes), applies the writes it allows, and diffs the
// objects' metadata against the captured state. firestore.get() and
// exists() in the rules read the Firestore state as the session had it
// at that moment (the captured Firestore commits up to the request).

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/rules/value"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// objectView decodes an object as events and snapshots show it.
func objectView(v any) (*srules.Object, bool) { return storage.ObjectView(v) }

func objKey(bucket, name string) string { return bucket + "/" + name }

// storageState decodes a Storage service state ({objects: [...]}, and
// the objects a capture appended one by one, {captured: {bucket: {name:
// metadata}}}: see storage.State).
func storageState(raw json.RawMessage) (map[string]*srules.Object, error) {
	out := map[string]*srules.Object{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return out, nil
	}
	var st struct {
		Objects  []map[string]any                     `json:"objects"`
		Captured map[string]map[string]map[string]any `json:"captured"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		return nil, &capture.Error{Path: "fixture.services.storage.state", Msg: "must be {objects: [...], captured: {...}}: " + err.Error()}
	}
	for bkt, objs := range st.Captured {
		for name, m := range objs {
			if m == nil {
				continue
			}
			m["bucket"], m["name"] = bkt, name
			st.Objects = append(st.Objects, m)
		}
	}
	for i, m := range st.Objects {
		o, ok := objectView(m)
		if !ok {
			return nil, &capture.Error{Path: fmt.Sprintf("fixture.services.storage.state.objects[%d]", i), Msg: "must be an object with a name"}
		}
		if data, ok := m["data"].(string); ok && m["size"] == nil {
			o.Size = int64(len(data) * 3 / 4)
		}
		out[objKey(o.Bucket, o.Name)] = o
	}
	return out, nil
}

// storageRules compiles the rules to replay with: the candidate, else the
// captured storage.rules (nil: none, every client request is denied).
func storageRules(f *capture.Fixture, candidate *source.File) (*srules.Ruleset, error) {
	file := candidate
	if file == nil {
		if sd := f.Services["storage"]; sd != nil && sd.Rules != nil && sd.Rules.Source != "" {
			name := sd.Rules.Name
			if name == "" {
				name = "storage.rules"
			}
			file = source.NewFile(name, sd.Rules.Source)
		}
	}
	if file == nil {
		return nil, nil
	}
	rs, diags := srules.Compile(file)
	if rs == nil || diags.HasErrors() {
		return nil, &RulesError{File: file.Name, Diags: diags}
	}
	return rs, nil
}

func bucketOf(ev *event.Event) string {
	if ev.Seen != nil {
		if ev.Seen.Before != nil {
			if m, ok := ev.Seen.Before.Data.(map[string]any); ok {
				if b, ok := m["bucket"].(string); ok {
					return b
				}
			}
		}
		if m, ok := ev.Seen.Data.(map[string]any); ok {
			if b, ok := m["bucket"].(string); ok {
				return b
			}
		}
	}
	return ""
}

// mutationKey is the object a Storage mutation event changed.
func mutationKey(ev *event.Event) (string, bool) {
	m := ev.Mutation
	if m == nil {
		return "", false
	}
	for _, v := range []any{m.Current, m.Previous} {
		if o, ok := v.(map[string]any); ok {
			b, _ := o["bucket"].(string)
			if n, _ := o["name"].(string); n != "" {
				return objKey(b, n), true
			}
		}
	}
	return "", false
}

// objectOps are the mutations that change an object as rules see it.
var objectOps = map[string]bool{storage.OpObjectPut: true, storage.OpObjectDelete: true, storage.OpMetadataUpdate: true}

// replayStorage is the Storage replay.
func replayStorage(f *capture.Fixture, candidate *source.File) (*ServiceResult, error) {
	rs, err := storageRules(f, candidate)
	if err != nil {
		return nil, err
	}
	var captured map[string]*srules.Object
	if sd := f.Services["storage"]; sd != nil {
		if captured, err = storageState(sd.State); err != nil {
			return nil, err
		}
	}
	events := f.Events
	first := len(events)
	for i := range events {
		if events[i].Kind == event.KindBoundary {
			first = i
			break
		}
	}
	state := map[string]*srules.Object{}
	if first == len(events) {
		for k, o := range captured {
			state[k] = o
		}
	}
	for i := first - 1; i >= 0; i-- {
		ev := &events[i]
		if ev.Service != storage.Service || ev.Kind != event.KindMutation || !objectOps[ev.Mutation.Op] {
			continue
		}
		k, ok := mutationKey(ev)
		if !ok {
			continue
		}
		if o, ok := objectView(ev.Mutation.Previous); ok {
			state[k] = o
		} else {
			delete(state, k)
		}
	}
	// firestore.get()/exists() see the session's Firestore as it was.
	fsView, err := firestoreAsCaptured(f)
	if err != nil {
		return nil, err
	}
	lookup := fsView.lookup(nil)

	// Link each allowed client write to its change.
	claimed := map[int]bool{}
	for i := range events {
		ev := &events[i]
		if ev.Service != storage.Service || ev.Kind != event.KindRequest || service.Bypassed(ev) || ev.Verdict != event.Allow {
			continue
		}
		if ev.Method != srules.Create && ev.Method != srules.Update && ev.Method != srules.Delete {
			continue
		}
		want := objKey(bucketOf(ev), ev.Path)
		for j := i + 1; j < len(events) && j <= i+linkWindow; j++ {
			c := &events[j]
			if c.Service != storage.Service || c.Kind != event.KindMutation || claimed[j] || !objectOps[c.Mutation.Op] ||
				c.Identity.UID != ev.Identity.UID || c.Identity.Lens != ev.Identity.Lens {
				continue
			}
			if k, ok := mutationKey(c); ok && k == want {
				claimed[j] = true
				break
			}
		}
	}

	sr := &ServiceResult{OK: true, Divergences: []Divergence{}}
	add := sr.add
	restored := false
	flipped := map[string]bool{}
	for i := range events {
		ev := &events[i]
		switch {
		case ev.Kind == event.KindBoundary:
			if ev.Boundary != nil && ev.Boundary.Boundary == event.Reset {
				state = map[string]*srules.Object{}
				fsView.br.clear()
				continue
			}
			restored = true
			add(Divergence{Kind: Unsupported, EventID: ev.ID, Explanation: "the session restored a snapshot; the replay cannot know the restored Storage state, so later verdicts may differ for that reason"})
			continue
		case ev.Service == "firestore" && ev.Kind == event.KindCommit:
			if err := fsView.apply(i, ev); err != nil {
				return nil, err
			}
			continue
		case ev.Service != storage.Service:
			continue
		case ev.Kind == event.KindMutation:
			if claimed[i] || !objectOps[ev.Mutation.Op] {
				continue
			}
			if k, ok := mutationKey(ev); ok {
				if o, ok := objectView(ev.Mutation.Current); ok {
					state[k] = o
				} else {
					delete(state, k)
				}
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
		div := Divergence{EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID, Before: string(ev.Verdict)}
		bkt := bucketOf(ev)
		key := objKey(bkt, ev.Path)
		method := ev.Method
		req := &srules.Request{Method: method, Bucket: bkt, Path: ev.Path, Time: ev.At, Firestore: lookup, NoTrace: true}
		if who := service.Who(ev); who.UID != "" {
			req.Auth = &srules.Auth{UID: who.UID, Token: who.Token}
		}
		if method != srules.List {
			req.Resource = state[key]
		}
		var incoming *srules.Object
		if method == srules.Create || method == srules.Update {
			// An upload's method follows what exists now.
			if req.Resource == nil {
				method = srules.Create
			} else {
				method = srules.Update
			}
			req.Method = method
			var ok bool
			if ev.Seen == nil {
				ok = false
			} else {
				incoming, ok = objectView(ev.Seen.Data)
			}
			if !ok {
				div.Kind, div.Explanation = Unsupported, "the captured write carries no object metadata, so it cannot be re-decided"
				add(div)
				continue
			}
			req.Incoming = incoming
		}
		var d *srules.Decision
		reason := "no storage.rules: every client request is denied"
		now := event.Deny
		if rs != nil {
			d = rs.Decide(req)
			if !d.Allowed() {
				req.NoTrace = false
				d = rs.Decide(req)
			}
			reason = storage.ReasonOf(d, method)
			if d.Allowed() {
				now = event.Allow
			}
		}
		if now == event.Allow {
			switch method {
			case srules.Create, srules.Update:
				state[key] = incoming
			case srules.Delete:
				delete(state, key)
			}
		}
		if ev.Verdict != now && (method == srules.Create || method == srules.Update || method == srules.Delete) {
			flipped[key] = true
		}
		div.After = string(now)
		div.Explanation = explainStorage(d, reason)
		if div.Kind = divergenceKind(ev.Verdict, now); div.Kind == "" {
			continue
		}
		add(div)
	}
	if captured == nil || restored {
		return sr, nil
	}
	for _, k := range service.UnionKeys(state, captured) {
		want, got := captured[k], state[k]
		switch {
		case want == nil:
			add(Divergence{Kind: StateDrift, Path: k, Before: nil, After: objectProps(got), Explanation: k + " exists after the replay but not in the captured state"})
		case got == nil:
			add(Divergence{Kind: StateDrift, Path: k, Before: objectProps(want), After: nil, Explanation: k + " is in the captured state but not after the replay"})
		default:
			w, g := objectProps(want), objectProps(got)
			for _, p := range service.UnionKeys(w, g) {
				if !equalJSON(w[p], g[p]) {
					add(Divergence{Kind: StateDrift, Path: k + " " + p, Before: w[p], After: g[p], Explanation: fmt.Sprintf("%s %s differs from the captured state", k, p)})
				}
			}
		}
	}
	return sr, nil
}

// capturedFirestore is the session's Firestore as it was at each moment:
// the state it started from, moved forward by the captured commits.
type capturedFirestore struct{ br *Branch }

func firestoreAsCaptured(f *capture.Fixture) (*capturedFirestore, error) {
	var docs map[string]map[string]any
	if sd := f.Services["firestore"]; sd != nil {
		var err error
		if docs, err = stateDocuments(sd.State); err != nil {
			return nil, err
		}
	}
	init, _ := initialState(f.Events, docs)
	br, err := Fork(init, nil)
	if err != nil {
		return nil, &capture.Error{Path: "fixture.events", Msg: "a Firestore commit's before state: " + err.Error()}
	}
	return &capturedFirestore{br: br}, nil
}

// apply moves the view past the Firestore commit events[i].
func (c *capturedFirestore) apply(i int, ev *event.Event) error {
	if err := c.br.Put(ev.Path, asFields(ev.Commit.After)); err != nil {
		return &capture.Error{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
	}
	return nil
}

// lookup resolves firestore.get()/exists() on the view; read, when set,
// is told each document path read.
func (c *capturedFirestore) lookup(read func(path string)) srules.FirestoreLookup {
	return srules.FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		if read != nil {
			read(path)
		}
		d := c.br.Get(path)
		if d == nil {
			return nil, false, nil
		}
		return firestore.FieldsToRules(d.Fields), true, nil
	})
}

// objectProps are the properties of an object the final-state diff
// compares: what its bytes and client-set metadata determine (generations
// and times differ on every replay by nature).
func objectProps(o *srules.Object) map[string]any {
	out := map[string]any{"size": o.Size, "contentType": o.ContentType, "md5Hash": o.MD5Hash, "metadata": o.Metadata}
	for k, v := range map[string]string{"cacheControl": o.CacheControl, "contentDisposition": o.ContentDisposition,
		"contentEncoding": o.ContentEncoding, "contentLanguage": o.ContentLanguage} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// explainStorage renders a Storage decision the way its events do.
func explainStorage(d *srules.Decision, reason string) string {
	if d == nil {
		return reason
	}
	exp := sim.Explain("storage", reason, d.Trace, d.Deciding, d.Notes, d.Expressions, d.Lookups)
	return service.ExplainDecision(exp.Rule, exp.Decision)
}
