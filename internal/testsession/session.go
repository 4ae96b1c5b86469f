// Package testsession gives tests recorded sessions (capture fixtures)
// built by hand, for the replays and the tools that read sessions.
package testsession

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
)

// OwnerRules are Firestore rules under which a user creates, updates and
// deletes only documents of c whose owner field is their uid; anyone
// reads them.
const OwnerRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /c/{id} {
      allow read: if true;
      allow create, update: if request.auth.uid == request.resource.data.owner;
      allow delete: if request.auth.uid == resource.data.owner;
    }
  }
}`

// Creates is a recorded session of n client creates of c/d0, c/d1, …
// (each a request and a commit event) by alice and bob in turn, all
// allowed under OwnerRules, which the session records with its final
// documents.
func Creates(n int) *capture.Fixture {
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
	state, err := json.Marshal(map[string]any{"documents": docs})
	if err != nil {
		panic(err) // plain maps of strings and numbers always encode
	}
	f.Services["firestore"] = &capture.ServiceData{Rules: &capture.Rules{Format: capture.FormatFirestore, Source: OwnerRules}, State: state}
	return f
}
