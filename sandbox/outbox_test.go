package sandbox

import (
	"maps"
	"slices"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// TestOutboxHeldWithCommit: the events an Outbox holds are written in
// the same log record as the commit they came with, so that after kill
// -9 (the record only in the write-ahead log, or checkpointed) both the
// commit and its held events are there; a held event the consumer took
// (its deletion in the consumer's own append) is not; events the
// consumer does not want are not held, and none is without a consumer.
func TestOutboxHeldWithCommit(t *testing.T) {
	t.Parallel()
	for _, checkpointed := range []bool{false, true} {
		dir := t.TempDir()
		st, err := OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		o := newOutbox(st)
		evs := []event.Event{{Kind: event.KindCommit, Service: "firestore", Path: "docs/a"}}
		if held := o.Hold(evs); held != nil || evs[0].Held != "" {
			t.Fatalf("held %v with no consumer", held)
		}
		o.Want(func(ev *event.Event) bool { return ev.Path != "docs/skip" })
		evs = []event.Event{
			{Kind: event.KindCommit, Service: "firestore", Path: "docs/a", Commit: &event.Commit{After: map[string]any{"n": "1"}}},
			{Kind: event.KindCommit, Service: "firestore", Path: "docs/skip"},
			{Kind: event.KindCommit, Service: "firestore", Path: "docs/b"},
		}
		held := o.Hold(evs)
		if len(held) != 2 || evs[0].Held == "" || evs[1].Held != "" || evs[2].Held == "" || evs[0].Held >= evs[2].Held {
			t.Fatalf("held %v, keys %q %q %q", held, evs[0].Held, evs[1].Held, evs[2].Held)
		}
		commit := append([]service.LogChange{{Key: "docs/a", Value: []byte("A")}, {Key: "docs/b", Value: []byte("B")}}, held...)
		if err := st.Log("firestore").Append("db", commit); err != nil {
			t.Fatal(err)
		}
		// The consumer takes docs/b's event with what it made of it.
		if err := st.Log("functions").Append("pending", []service.LogChange{{Key: "p1", Value: []byte("P")}, {Key: evs[2].Held, Outbox: true}}); err != nil {
			t.Fatal(err)
		}
		if checkpointed {
			st.checkpoint()
		}
		abandon(st)

		st, err = OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		left, err := newOutbox(st).Left()
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 1 || left[0].Path != "docs/a" || left[0].Held != evs[0].Held || left[0].Commit == nil || left[0].Commit.After.(map[string]any)["n"] != "1" {
			t.Errorf("checkpointed %v: left %+v, want docs/a's commit event under its key", checkpointed, left)
		}
		got := map[string]string{}
		for _, svc := range []string{"firestore", "functions"} {
			_ = st.Log(svc).Load(func(space string, entries []service.LogChange) error {
				for _, e := range entries {
					got[svc+"/"+space+"/"+e.Key] = string(e.Value)
				}
				return nil
			})
		}
		want := map[string]string{"firestore/db/docs/a": "A", "firestore/db/docs/b": "B", "functions/pending/p1": "P"}
		if !maps.Equal(got, want) {
			t.Errorf("checkpointed %v: the services hold %v, want %v", checkpointed, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		st.Close()
	}
}
