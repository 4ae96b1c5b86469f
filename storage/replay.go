package storage

// The service.Replayer capability: a recorded session decided again.
// Object bytes are not in events (only what the rules see of an object:
// its metadata), so the replay keeps each object's rules view, starting
// from the recorded final state with the session's changes undone newest
// first, re-decides every client request with the candidate storage.rules
// (uploads, downloads, metadata reads and patches, lists, deletes),
// applies the writes it allows, and diffs the objects' metadata against
// the recorded state. firestore.get() and exists() in the rules read the
// Firestore state as the session had it at that moment (the session's
// Firestore commits up to the request), through the session's
// service.StateView of Firestore.

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/rules/value"
	"github.com/pyric/pyric/sandbox/service"
)

func objectKey(bucket, name string) string { return bucket + "/" + name }

// recordedObjects decodes a recorded Storage state ({objects: [...]}, and
// the objects a capture appended one by one, {captured: {bucket: {name:
// metadata}}}: see State).
func recordedObjects(raw json.RawMessage) (map[string]*srules.Object, error) {
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
		return nil, &service.SessionError{Path: "fixture.services.storage.state", Msg: "must be {objects: [...], captured: {...}}: " + err.Error()}
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
		o, ok := ObjectView(m)
		if !ok {
			return nil, &service.SessionError{Path: fmt.Sprintf("fixture.services.storage.state.objects[%d]", i), Msg: "must be an object with a name"}
		}
		if data, ok := m["data"].(string); ok && m["size"] == nil {
			o.Size = int64(len(data) * 3 / 4)
		}
		out[objectKey(o.Bucket, o.Name)] = o
	}
	return out, nil
}

// replayRules compiles the rules to replay with: the candidate, else the
// captured storage.rules (nil: none, every client request is denied).
func replayRules(s *service.Session, candidate *source.File) (*srules.Ruleset, error) {
	file := candidate
	if file == nil {
		if r := s.Rules[Service]; r != nil && r.Source != "" {
			name := r.Name
			if name == "" {
				name = "storage.rules"
			}
			file = source.NewFile(name, r.Source)
		}
	}
	if file == nil {
		return nil, nil
	}
	rs, diags := srules.Compile(file)
	if rs == nil || diags.HasErrors() {
		return nil, &service.RulesError{File: file.Name, Diags: diags}
	}
	return rs, nil
}

// BucketOf is the bucket a recorded Storage request named, as its event
// recorded the object ("" when it carries none).
func BucketOf(ev *event.Event) string {
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
				return objectKey(b, n), true
			}
		}
	}
	return "", false
}

// objectOps are the mutations that change an object as rules see it.
var objectOps = map[string]bool{OpObjectPut: true, OpObjectDelete: true, OpMetadataUpdate: true}

// Replay implements service.Replayer: it replays the session's Storage
// requests against candidate rules (nil: the rules the session recorded;
// none: every client request is denied) on the objects' rules views, and
// diffs their metadata against the recorded state. The receiver's own
// state is not used.
func (e *Engine) Replay(s *service.Session, candidate *source.File) (*service.Report, error) {
	rs, err := replayRules(s, candidate)
	if err != nil {
		return nil, err
	}
	var captured map[string]*srules.Object
	if raw, ok := s.States[Service]; ok {
		if captured, err = recordedObjects(raw); err != nil {
			return nil, err
		}
	}
	events := s.Events
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
		if ev.Service != Service || ev.Kind != event.KindMutation || !objectOps[ev.Mutation.Op] {
			continue
		}
		k, ok := mutationKey(ev)
		if !ok {
			continue
		}
		if o, ok := ObjectView(ev.Mutation.Previous); ok {
			state[k] = o
		} else {
			delete(state, k)
		}
	}
	// firestore.get()/exists() see the session's Firestore as it was.
	fsView, err := firestoreAt(s)
	if err != nil {
		return nil, err
	}
	lookup := firestoreLookup(fsView, nil)

	// Link each allowed client write to its change.
	claimed := map[int]bool{}
	for i := range events {
		ev := &events[i]
		if ev.Service != Service || ev.Kind != event.KindRequest || service.Bypassed(ev) || ev.Verdict != event.Allow {
			continue
		}
		if ev.Method != srules.Create && ev.Method != srules.Update && ev.Method != srules.Delete {
			continue
		}
		want := objectKey(BucketOf(ev), ev.Path)
		for j := i + 1; j < len(events) && j <= i+service.LinkWindow; j++ {
			c := &events[j]
			if c.Service != Service || c.Kind != event.KindMutation || claimed[j] || !objectOps[c.Mutation.Op] ||
				c.Identity.UID != ev.Identity.UID || c.Identity.Lens != ev.Identity.Lens {
				continue
			}
			if k, ok := mutationKey(c); ok && k == want {
				claimed[j] = true
				break
			}
		}
	}

	sr := service.NewReport()
	add := sr.Add
	restored := false
	flipped := map[string]bool{}
	for i := range events {
		ev := &events[i]
		if err := fsView.Advance(i); err != nil {
			return nil, err
		}
		switch {
		case ev.Kind == event.KindBoundary:
			if ev.Boundary != nil && ev.Boundary.Boundary == event.Reset {
				state = map[string]*srules.Object{}
				continue
			}
			restored = true
			add(service.Divergence{Kind: service.Unsupported, EventID: ev.ID, Explanation: "the session restored a snapshot; the replay cannot know the restored Storage state, so later verdicts may differ for that reason"})
			continue
		case ev.Service != Service:
			continue
		case ev.Kind == event.KindMutation:
			if claimed[i] || !objectOps[ev.Mutation.Op] {
				continue
			}
			if k, ok := mutationKey(ev); ok {
				if o, ok := ObjectView(ev.Mutation.Current); ok {
					state[k] = o
				} else {
					delete(state, k)
				}
			}
			continue
		case !service.RulesDecided(ev):
			continue
		}
		sr.CheckedEvents++
		div := service.Divergence{EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID, Before: string(ev.Verdict)}
		bkt := BucketOf(ev)
		key := objectKey(bkt, ev.Path)
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
				incoming, ok = ObjectView(ev.Seen.Data)
			}
			if !ok {
				div.Kind, div.Explanation = service.Unsupported, "the captured write carries no object metadata, so it cannot be re-decided"
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
			reason = ReasonOf(d, method)
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
		if div.Kind = service.DivergenceKind(ev.Verdict, now); div.Kind == "" {
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
			add(service.Divergence{Kind: service.StateDrift, Path: k, Before: nil, After: objectProps(got), Explanation: k + " exists after the replay but not in the captured state"})
		case got == nil:
			add(service.Divergence{Kind: service.StateDrift, Path: k, Before: objectProps(want), After: nil, Explanation: k + " is in the captured state but not after the replay"})
		default:
			w, g := objectProps(want), objectProps(got)
			for _, p := range service.UnionKeys(w, g) {
				if !service.SameJSON(w[p], g[p]) {
					add(service.Divergence{Kind: service.StateDrift, Path: k + " " + p, Before: w[p], After: g[p], Explanation: fmt.Sprintf("%s %s differs from the captured state", k, p)})
				}
			}
		}
	}
	return sr, nil
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

// firestoreAt is the session's Firestore as it was at each event, for
// firestore.get() and exists() (a session without one: no documents).
func firestoreAt(s *service.Session) (service.StateView, error) {
	v, ok, err := s.StateAt(firestoreService)
	if err != nil {
		return nil, err
	}
	if !ok {
		return noDocuments{}, nil
	}
	return v, nil
}

// firestoreService is the name of the service firestore.get() reads.
const firestoreService = "firestore"

// noDocuments is a Firestore with no documents.
type noDocuments struct{}

func (noDocuments) Advance(int) error                          { return nil }
func (noDocuments) RulesValue(string) (value.Map, bool, error) { return nil, false, nil }
func (noDocuments) Record(string) map[string]any               { return nil }

// firestoreLookup resolves firestore.get()/exists() on v; read, when set,
// is told each document path read.
func firestoreLookup(v service.StateView, read func(path string)) srules.FirestoreLookup {
	return srules.FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		if read != nil {
			read(path)
		}
		return v.RulesValue(path)
	})
}
