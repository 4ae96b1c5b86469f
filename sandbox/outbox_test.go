package sandbox

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

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
		o := newOutbox(st, time.Now)
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
		left, err := newOutbox(st, time.Now).Left()
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

// keptPayload is a Mutation payload whose JSON leaves a field out and
// whose event.OutboxForm keeps it.
type keptPayload struct {
	Topic string `json:"topic"`
	Body  string `json:"-"`
}

func (p *keptPayload) OutboxForm() any {
	return map[string]string{"topic": p.Topic, "body": p.Body}
}

// TestOutboxHeldInBucketUpdate: an engine that commits through its
// Bucket holds its events with HoldIn in the same transaction, so they
// are durable exactly when its writes are (a failed transaction holds
// nothing); a held event is stamped with the sandbox clock and keeps a
// payload's OutboxForm; the consumer's take through its Log (before or
// after a checkpoint) removes it; a transaction not of the store cannot
// hold.
func TestOutboxHeldInBucketUpdate(t *testing.T) {
	t.Parallel()
	for _, checkpointed := range []bool{false, true} {
		dir := t.TempDir()
		st, err := OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
		o := newOutbox(st, func() time.Time { return at })
		o.Want(func(ev *event.Event) bool { return ev.Service == "auth" })
		b := st.Bucket("auth")
		mutation := func(path, body string) event.Event {
			return event.Event{Kind: event.KindMutation, Service: "auth", Path: path,
				Mutation: &event.Mutation{Op: "user_create", Current: &keptPayload{Topic: path, Body: body}}}
		}
		// A transaction that fails keeps neither its write nor its events.
		failed := []event.Event{mutation("lost", "x")}
		if err := b.Update(func(tx service.Tx) error {
			if err := tx.Put([]byte("u/lost"), []byte("L")); err != nil {
				return err
			}
			if err := o.HoldIn(tx, failed); err != nil {
				return err
			}
			return errors.New("refused")
		}); err == nil {
			t.Fatal("the failing update succeeded")
		}
		evs := []event.Event{mutation("a", "body-a"), {Kind: event.KindMutation, Service: "storage", Path: "skip"}, mutation("b", "body-b")}
		if err := b.Update(func(tx service.Tx) error {
			if err := tx.Put([]byte("u/a"), []byte("A")); err != nil {
				return err
			}
			return o.HoldIn(tx, evs)
		}); err != nil {
			t.Fatal(err)
		}
		if evs[0].Held == "" || evs[1].Held != "" || evs[2].Held == "" {
			t.Fatalf("held keys %q %q %q", evs[0].Held, evs[1].Held, evs[2].Held)
		}
		// The consumer takes b's event.
		if err := st.Log("functions").Append("pending", []service.LogChange{{Key: evs[2].Held, Outbox: true}}); err != nil {
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
		left, err := newOutbox(st, time.Now).Left()
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 1 || left[0].Path != "a" || left[0].Held != evs[0].Held || !left[0].At.Equal(at) || left[0].Mutation == nil {
			t.Fatalf("checkpointed %v: left %+v, want a's event under its key, stamped %v", checkpointed, left, at)
		}
		if cur, _ := left[0].Mutation.Current.(map[string]any); cur["body"] != "body-a" || cur["topic"] != "a" {
			t.Errorf("checkpointed %v: the held payload is %v, want its OutboxForm", checkpointed, left[0].Mutation.Current)
		}
		_ = st.Bucket("auth").View(func(tx service.Tx) error {
			if v := tx.Get([]byte("u/a")); string(v) != "A" {
				t.Errorf("the committed write reads %q", v)
			}
			if v := tx.Get([]byte("u/lost")); v != nil {
				t.Errorf("the failed write is stored: %q", v)
			}
			return nil
		})
		if err := o.HoldIn(fakeTx{}, []event.Event{mutation("c", "")}); err == nil {
			t.Errorf("a transaction not of the store held events")
		}
		st.Close()
	}
}

// fakeTx is a service.Tx that is not the store's.
type fakeTx struct{ service.Tx }
