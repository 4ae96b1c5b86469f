package event

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// encodingJSON is what AppendJSON must equal: encoding/json with HTML
// escaping off, the trailing newline cut.
func encodingJSON(t *testing.T, e *Event) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func checkAppendJSON(t *testing.T, name string, e *Event) {
	t.Helper()
	want := encodingJSON(t, e)
	got, err := AppendJSON([]byte("prefix"), e)
	if err != nil {
		t.Fatalf("%s: AppendJSON: %v", name, err)
	}
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("%s: AppendJSON lost what dst held: %q", name, got)
	}
	if s := string(got[len("prefix"):]); s != want {
		t.Errorf("%s:\n got %s\nwant %s", name, s, want)
	}
}

// nasty covers every way encoding/json escapes a string: quotes,
// backslashes, every control character, HTML characters (left alone),
// DEL, invalid UTF-8, U+2028/U+2029, multi-byte runes.
var nasty = func() string {
	var b strings.Builder
	b.WriteString(`a"b\c<d>&e` + "\x7f é ✓ 🙂 \u2028 \u2029 \xff \xc3 end")
	for c := range 0x20 {
		b.WriteByte(byte(c))
	}
	return b.String()
}()

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 12, 7, 0, 25, 49, 915296468, time.UTC)
	doc := map[string]any{"i": json.Number("7995"), "g": json.Number("-5"), "s": "x", "f": json.Number("1.5e-7"),
		"m": map[string]any{"__type": "float", "value": json.Number("1")}, "t": map[string]any{"__type": "timestamp", "seconds": int64(-12), "nanos": int32(5)},
		"l": []any{nil, true, false, 1.25, 1e21, 1e-7, -0.0, 123456789.0, []any{}, map[string]any{}}, nasty: nasty,
		"geo": map[string]any{"__type": "latlng", "lat": 1.5, "lng": float64(2)}, "n": nil, "empty": []any(nil), "nilmap": map[string]any(nil),
		"other": time.Unix(5, 0).UTC(), "raw": json.RawMessage(`{ "a" : 1 }`), "num": json.Number("")}
	events := map[string]*Event{
		"bare": {},
		"admin get": {Seq: 47997, ID: "evt-47997", At: at, Kind: KindRequest, Service: "firestore", Actor: Actor{Kind: ActorApp},
			Identity: Identity{Lens: LensAdmin, Admin: true}, Method: "get", Path: "b/d07996", Origin: OriginAdmin,
			Request: &Request{Verdict: Bypassed, DurationMs: 0.002, Seen: &Seen{Before: &Resource{Exists: true, Data: doc}}}},
		"user write": {Seq: 1, ID: "evt-1", At: at.In(time.FixedZone("x", 5*3600+30*60)), Kind: KindRequest, Service: "firestore",
			Actor: Actor{Kind: ActorAgent, Name: nasty, Invocation: "inv-1"}, Identity: Identity{Lens: LensUser, UID: "alice", Token: map[string]any{"email": "a@b", "n": 3.0, "sub": "alice"}},
			Method: "update", Path: "posts/p1", Origin: OriginTransaction, Group: &Group{ID: "txn-1", Kind: OriginTransaction},
			Err: &Failure{Code: "PERMISSION_DENIED", Message: nasty},
			Request: &Request{Verdict: Deny, DurationMs: 12.345,
				Rule:     &Rule{Index: 1, Operations: []string{"update"}, Line: 6, Column: 3, MatchPath: "/posts/{id}", Condition: "a < b && c"},
				Trace:    []Step{{Text: "a < b", Value: "false", Depth: 1}, {Text: "c", Skipped: true}},
				Decision: &Explanation{Engine: "firestore", Bindings: map[string]string{"id": "'p1'"}, Reason: "false for 'update' @ L6", Notes: []string{nasty}},
				Seen: &Seen{Data: doc, Before: &Resource{}, Query: map[string]any{"where": []any{"x"}}, Updates: map[string]any{"a/b": 1.0},
					After: &Resource{Exists: true, Data: map[string]any{}}, Lookups: []Lookup{{Function: "get", Path: "u/a", Exists: true, Data: doc}, {Function: "getAfter", Path: "u/b"}},
					Time: at}}},
		"empty seen": {Kind: KindRequest, Request: &Request{Verdict: Allow, DurationMs: 1e-9, Seen: &Seen{Updates: map[string]any{}}}},
		"commit": {Seq: 9, ID: "evt-9", At: at, Kind: KindCommit, Service: "firestore", Actor: Actor{Kind: ActorApp}, Identity: Identity{Lens: LensUnauthenticated},
			Method: "create", Path: "c/d", Origin: OriginBatch, Group: &Group{ID: "batch-2", Kind: OriginBatch},
			Commit: &Commit{RequestTime: at, After: doc, Written: doc, Sentinels: []Sentinel{{Field: "a.b", Kind: ServerTimestamp}},
				AutoID: "abc", Database: "(default)", CreateTime: at, UpdateTime: at.Add(time.Second), BeforeCreateTime: at.Add(-time.Hour), BeforeUpdateTime: at.Add(-time.Minute),
				Scope: &Scope{Path: "/a", Before: nil, After: doc}}},
		"delete": {Kind: KindCommit, Commit: &Commit{Before: map[string]any{"a": "b"}}},
		// A set shares one map as after and written (written once, then
		// copied); a transform's write does not.
		"set": {Kind: KindCommit, Commit: &Commit{After: map[string]any{"a": "b", "n": json.Number("1")}, Written: map[string]any{"a": "b"}}},
		"shared small doc": {Kind: KindCommit, Commit: func() *Commit {
			d := map[string]any{"i": int64(1), "s": "x"}
			return &Commit{Before: map[string]any{"i": int64(0)}, After: d, Written: d}
		}()},
		"listener": {Seq: 3, Kind: KindListener, Listener: &Listener{Phase: Deliver, ListenerID: "l1", Target: &Target{Kind: "doc", Path: "a/b"}, Size: 2}},
		"full listener": {Seq: 4, ID: "evt-4", At: at, Kind: KindListener, Service: "database", Actor: Actor{Kind: ActorApp},
			Identity: Identity{Lens: LensUser, UID: "u", Token: map[string]any{"sub": "u"}}, Path: "ns:/" + nasty, Origin: OriginListener,
			Err: &Failure{Code: "permission_denied", Message: nasty},
			Listener: &Listener{Phase: Errored, ListenerID: "c1:/a\x00{}" + nasty, Target: &Target{Kind: "query", Path: "/a", Query: map[string]any{"l": 3.0, "i": nasty}},
				Size: -1, Added: 2, Modified: 3, Removed: 4, Trigger: &Trigger{Method: "set", Path: nasty}}},
		"listener of a path":  {Kind: KindListener, Listener: &Listener{Phase: Attach, Target: &Target{Kind: "path", Path: "/a", Query: "{}"}, Trigger: &Trigger{Method: "update"}}},
		"listener, no target": {Kind: KindListener, Listener: &Listener{Phase: Detach}},
		"listener, odd query": {Kind: KindListener, Listener: &Listener{Target: &Target{Query: map[string]any(nil)}}},
		"mutation":            {Kind: KindMutation, Mutation: &Mutation{Op: "user_create", Current: map[string]any{"uid": "u"}}},
		"full mutation": {Seq: 12, ID: "evt-12", At: at, Kind: KindMutation, Service: "storage", Actor: Actor{Kind: ActorApp},
			Identity: Identity{Lens: LensUser, UID: "bob"}, Method: "object_put", Path: "a/" + nasty, Err: &Failure{Code: "NOT_FOUND", Message: "x"},
			Mutation: &Mutation{Op: "object_put", Project: "demo-" + nasty, Tenant: "t1", Previous: doc, Current: map[string]any{"size": int64(3), "metadata": map[string]any{}},
				Provider: "password", Note: nasty}},
		"mutation of other values": {Kind: KindMutation, Mutation: &Mutation{Op: "x", Previous: map[string]any(nil), Current: struct {
			A int `json:"a"`
		}{A: 1}}},
	}
	events["mutation of Appenders"] = &Event{Kind: KindMutation, Mutation: &Mutation{Op: "user_update", Previous: appenderValue{nasty}, Current: &appenderValue{"b"}}}
	for name, e := range events {
		checkAppendJSON(t, name, e)
	}
}

// appenderValue is a value that writes its own JSON (Appender), as Auth's
// accounts do.
type appenderValue struct{ s string }

func (a appenderValue) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"s": a.s})
}

func (a appenderValue) AppendJSON(b []byte) []byte {
	m, _ := a.MarshalJSON()
	return append(b, m...)
}

// TestAppendJSONRandomValues compares AppendJSON with encoding/json over
// random documents, strings of random bytes and random floats.
func TestAppendJSONRandomValues(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	randString := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[i] = byte('a' + r.IntN(26))
			}
		}
		return string(b)
	}
	var randValue func(depth int) any
	randValue = func(depth int) any {
		switch k := r.IntN(9); {
		case k == 0:
			return nil
		case k == 1:
			return r.IntN(2) == 0
		case k == 2:
			return randString()
		case k == 3:
			return math.Float64frombits(r.Uint64())
		case k == 4:
			return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
		case k == 5:
			return r.Int64() >> r.IntN(64)
		case k == 6 && depth < 3:
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = randValue(depth + 1)
			}
			return l
		case depth < 3:
			m := map[string]any{}
			for range r.IntN(5) {
				m[randString()] = randValue(depth + 1)
			}
			return m
		}
		return randString()
	}
	for i := range 2000 {
		e := &Event{Seq: r.Uint64(), ID: randString(), At: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC(), Kind: KindCommit, Path: randString(),
			Commit: &Commit{Before: randValue(0), After: randValue(0)}}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		wantErr := enc.Encode(e)
		got, err := AppendJSON(nil, e)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("event %d: AppendJSON error %v, encoding/json error %v", i, err, wantErr)
		}
		if err == nil && string(got) != strings.TrimSuffix(buf.String(), "\n") {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, buf.String())
		}
	}
}

func TestAppendJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for name, e := range map[string]*Event{
		"NaN duration": {Request: &Request{DurationMs: math.NaN()}},
		"Inf in data":  {Commit: &Commit{After: map[string]any{"x": math.Inf(1)}}},
		"bad number":   {Commit: &Commit{After: json.Number("1x")}},
		"year 10000":   {At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := AppendJSON(nil, e); err == nil {
			t.Errorf("%s: AppendJSON wrote it; encoding/json refuses it", name)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	at := time.Now().UTC()
	e := &Event{Seq: 47997, ID: "evt-47997", At: at, Kind: KindRequest, Service: "firestore", Actor: Actor{Kind: ActorApp},
		Identity: Identity{Lens: LensAdmin, Admin: true}, Method: "get", Path: "bench1796603142935619583/d07996", Origin: OriginAdmin,
		Request: &Request{Verdict: Bypassed, DurationMs: 0.002, Seen: &Seen{Before: &Resource{Exists: true, Data: map[string]any{"g": json.Number("6"), "i": json.Number("7996"), "s": "x"}}}}}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = AppendJSON(buf[:0], e)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			enc.Encode(e)
		}
	})
}

// BenchmarkAppendJSONListener encodes a Realtime Database listener
// delivery as the bus stamps it (time.Now: the local zone), what session
// capture writes for each listener a write reaches.
func BenchmarkAppendJSONListener(b *testing.B) {
	e := &Event{Seq: 47997, ID: "evt-47997", At: time.Now(), Kind: KindListener, Service: "database", Actor: Actor{Kind: ActorApp},
		Identity: Identity{Lens: LensUnauthenticated}, Path: "demo-p:/fan/go", Origin: OriginListener,
		Listener: &Listener{Phase: Deliver, ListenerID: "l17", Target: &Target{Kind: "path", Path: "/fan/go", Query: "{}"}}}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf, _ = AppendJSON(buf[:0], e)
	}
}
