package verify

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/testsession"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

const ownerRules = testsession.OwnerRules

// backendRegs are the services Run replays in these tests: the
// backend's, as the CLI passes them.
func backendRegs() []service.Registration { return backend.Services(&backend.Options{}) }

// synthetic is testsession.Creates: n client creates, all allowed under
// ownerRules.
func synthetic(n int) *capture.Fixture { return testsession.Creates(n) }

func TestReplaySynthetic(t *testing.T) {
	f := synthetic(20)
	res, err := Run(f, Options{Registrations: backendRegs()})
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
	res, err = Run(f, Options{Registrations: backendRegs()})
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
	res, err := Run(f, Options{Registrations: backendRegs()})
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
	res, err := Run(f, Options{Registrations: backendRegs(), Candidates: map[string]*source.File{"firestore": source.NewFile("open.rules", "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read, write: if true; } } }")}})
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
	_, err := Run(synthetic(1), Options{Registrations: backendRegs(), Candidates: map[string]*source.File{"firestore": source.NewFile("bad.rules", "service cloud.firestore { match /a { allow read: if ; } }")}})
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
		res, err := Run(f, Options{Registrations: backendRegs()})
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
