package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox"
)

const ownerRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /c/{id} {
      allow read: if true;
      allow create, update: if request.auth.uid == request.resource.data.owner;
      allow delete: if request.auth.uid == resource.data.owner;
    }
  }
}`

// synthetic builds a fixture of n client creates (each a request and a
// commit event) by alternating users, all allowed under ownerRules.
func synthetic(n int) *capture.Fixture {
	f := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}}
	docs := map[string]map[string]any{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	for i := 0; i < n; i++ {
		uid := []string{"alice", "bob"}[i%2]
		path := fmt.Sprintf("c/d%d", i)
		data := map[string]any{"owner": uid, "i": int64(i), "nested": map[string]any{"tags": []any{"a", int64(i)}}}
		seq++
		at := t0.Add(time.Duration(i) * time.Millisecond)
		f.Events = append(f.Events, event.Event{Seq: seq, ID: fmt.Sprintf("evt-%d", seq), At: at, Kind: event.KindRequest, Service: "firestore",
			Identity: event.Identity{Lens: event.LensUser, UID: uid}, Method: "create", Path: path, Origin: event.OriginClient,
			Request: &event.Request{Verdict: event.Allow, Seen: &event.Seen{Data: data, Before: &event.Resource{}}}})
		seq++
		f.Events = append(f.Events, event.Event{Seq: seq, ID: fmt.Sprintf("evt-%d", seq), At: at, Kind: event.KindCommit, Service: "firestore",
			Identity: event.Identity{Lens: event.LensUser, UID: uid}, Method: "create", Path: path,
			Commit: &event.Commit{RequestTime: at, After: data}})
		docs[path] = data
	}
	f.Services["firestore"] = &capture.ServiceData{Rules: &capture.Rules{Format: capture.FormatFirestore, Source: ownerRules}}
	f.Services["firestore"].State = mustJSON(map[string]any{"documents": docs})
	return f
}

func TestReplaySynthetic(t *testing.T) {
	f := synthetic(20)
	res, err := Run(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Services["firestore"].CheckedEvents != 20 {
		t.Fatalf("%+v", res.Services["firestore"])
	}
	// Tamper with the captured state: a leaf drift is reported by path.
	var st struct {
		Documents map[string]map[string]any `json:"documents"`
	}
	st.Documents = map[string]map[string]any{}
	for i := 0; i < 20; i++ {
		st.Documents[fmt.Sprintf("c/d%d", i)] = map[string]any{"owner": []string{"alice", "bob"}[i%2], "i": int64(i), "nested": map[string]any{"tags": []any{"a", int64(i)}}}
	}
	st.Documents["c/d3"]["nested"] = map[string]any{"tags": []any{"b", int64(3)}}
	delete(st.Documents, "c/d5")               // replay has it, the capture does not
	st.Documents["c/extra"] = map[string]any{} // never written: an initial document, no drift
	f.Services["firestore"].State = mustJSON(st)
	res, err = Run(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, d := range res.Services["firestore"].Divergences {
		if d.Kind != StateDrift {
			t.Errorf("unexpected %+v", d)
		}
		got[d.Path] = true
	}
	if !got["c/d3 nested.tags[0]"] || !got["c/d5"] || len(got) != 2 {
		t.Errorf("drifts %v, want c/d3 nested.tags[0] and c/d5", got)
	}
}

func TestSentinelDriftIsExpected(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	after := map[string]any{"owner": "alice", "t": map[string]any{"__type": "timestamp", "seconds": int64(at.Unix()), "nanos": int64(0)}}
	f := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}, Events: []event.Event{
		{Seq: 1, ID: "evt-1", At: at, Kind: event.KindRequest, Service: "firestore", Identity: event.Identity{Lens: event.LensUser, UID: "alice"},
			Method: "create", Path: "c/x", Request: &event.Request{Verdict: event.Allow}},
		{Seq: 2, ID: "evt-2", At: at, Kind: event.KindCommit, Service: "firestore", Identity: event.Identity{Lens: event.LensUser, UID: "alice"},
			Method: "create", Path: "c/x", Commit: &event.Commit{RequestTime: at, After: after, Sentinels: []event.Sentinel{{Field: "t", Kind: event.ServerTimestamp}}}},
	}}
	f.Services["firestore"] = &capture.ServiceData{Rules: &capture.Rules{Format: capture.FormatFirestore, Source: ownerRules},
		State: mustJSON(map[string]any{"documents": map[string]any{"c/x": map[string]any{"owner": "alice", "t": map[string]any{"__type": "timestamp", "seconds": 5, "nanos": 0}}}})}
	res, err := Run(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := res.Services["firestore"].Divergences
	if !res.OK || len(ds) != 1 || ds[0].Kind != ExpectedDrift || ds[0].Drift != "sentinel-drift" {
		t.Fatalf("%+v", ds)
	}
}

func TestNowAllowed(t *testing.T) {
	// A denied create becomes allowed under permissive rules, and its
	// proposed document (sent data, serverTimestamp resolved) is applied.
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}, Events: []event.Event{
		{Seq: 1, ID: "evt-1", At: at, Kind: event.KindRequest, Service: "firestore", Identity: event.Identity{Lens: event.LensUser, UID: "eve"},
			Method: "create", Path: "c/y", Request: &event.Request{Verdict: event.Deny, Seen: &event.Seen{Data: map[string]any{"owner": "alice", "t": map[string]any{"__sentinel": "serverTimestamp"}}}}},
	}}
	f.Services["firestore"] = &capture.ServiceData{Rules: &capture.Rules{Format: capture.FormatFirestore, Source: ownerRules},
		State: mustJSON(map[string]any{"documents": map[string]any{}})}
	res, err := Run(f, Options{FirestoreRules: source.NewFile("open.rules", "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read, write: if true; } } }")})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, d := range res.Services["firestore"].Divergences {
		kinds[d.Kind]++
	}
	if res.OK || kinds[NowAllowed] != 1 || kinds[StateDrift] != 1 {
		t.Fatalf("%+v", res.Services["firestore"].Divergences)
	}
}

func TestRulesError(t *testing.T) {
	_, err := Run(synthetic(1), Options{FirestoreRules: source.NewFile("bad.rules", "service cloud.firestore { match /a { allow read: if ; } }")})
	re, ok := err.(*RulesError)
	if !ok || len(re.Diags) == 0 {
		t.Fatalf("err = %v", err)
	}
}

func BenchmarkReplay10k(b *testing.B) {
	f := synthetic(5000) // 10,000 events
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(f, Options{})
		if err != nil || !res.OK {
			b.Fatal(err, res)
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestBranchForkApplyPromote(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	testfs.Of(sb).Admin().SetDocument(ctx, "c/live", map[string]any{"owner": "zed"})
	gate, _ := firestore.NewRulesGate(source.NewFile("r", ownerRules))
	br, err := ForkLive(sb, gate)
	if err != nil {
		t.Fatal(err)
	}
	f := synthetic(4)
	res, err := br.Apply(f.Events)
	if err != nil || !res.OK || res.CheckedEvents != 4 {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if br.Len() != 5 {
		t.Fatalf("branch has %d docs", br.Len())
	}
	// The live database is untouched until promote.
	if d, _ := testfs.Of(sb).Admin().GetDocument(ctx, "c/d0"); d != nil {
		t.Fatal("apply leaked into live")
	}
	changes, err := br.Promote(ctx, sb)
	if err != nil || len(changes) != 4 {
		t.Fatalf("promote: %v %+v", err, changes)
	}
	live, _ := ForkLive(sb, nil)
	if d := br.Diff(live.Docs()); len(d) != 0 {
		t.Fatalf("after promote, branch and live differ: %+v", d)
	}
}
