package firestore

import (
	"reflect"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// TestCommitEventsAndResultsApart checks what a commit's results and
// request events hold now that their parts are allocated together
// (newWriteResults, requestParts, opState.memoSpace): each result its own
// message with its document's update time, each request event its own
// request, what it saw and the document before, however many writes a
// commit has and however many commits follow one another.
func TestCommitEventsAndResultsApart(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: AllowAll, Events: bus})
	alice := identity.NewUser("alice", nil)
	commitT(t, e, alice, upd("c/a", M("v", Int(1))))
	from := len(bus.History())
	r1 := commitT(t, e, alice, upd("c/a", M("v", Int(2))))
	r3 := commitT(t, e, alice, upd("c/a", M("v", Int(3))), upd("c/b", M("w", String("x"))), del("c/z"))

	if len(r1.WriteResults) != 1 || len(r3.WriteResults) != 3 {
		t.Fatalf("results = %v, %v", r1.WriteResults, r3.WriteResults)
	}
	if !r1.WriteResults[0].UpdateTime.AsTime().Equal(r1.CommitTime.AsTime()) {
		t.Errorf("set's update time %v, commit time %v", r1.WriteResults[0].UpdateTime, r1.CommitTime)
	}
	seenResult := map[any]bool{}
	for i, wr := range r3.WriteResults {
		if seenResult[wr] {
			t.Errorf("result %d shared", i)
		}
		seenResult[wr] = true
		if i < 2 && !wr.UpdateTime.AsTime().Equal(r3.CommitTime.AsTime()) {
			t.Errorf("result %d update time %v, commit time %v", i, wr.UpdateTime, r3.CommitTime)
		}
	}
	if r3.WriteResults[2].UpdateTime != nil {
		t.Errorf("delete's result has an update time: %v", r3.WriteResults[2])
	}

	var reqs []event.Event
	for _, ev := range bus.History()[from:] {
		if ev.Kind == event.KindRequest {
			reqs = append(reqs, ev)
		}
	}
	want := []struct {
		path   string
		exists bool
		before any
		data   any
	}{
		{"c/a", true, EncodeFields(M("v", Int(1)), testDB), EncodeFields(M("v", Int(2)), testDB)},
		{"c/a", true, EncodeFields(M("v", Int(2)), testDB), EncodeFields(M("v", Int(3)), testDB)},
		{"c/b", false, nil, EncodeFields(M("w", String("x")), testDB)},
		{"c/z", false, nil, nil},
	}
	if len(reqs) != len(want) {
		t.Fatalf("request events = %+v", reqs)
	}
	parts := map[any]bool{}
	for i, w := range want {
		ev := reqs[i]
		if ev.Path != w.path || ev.Request == nil || ev.Request.Seen == nil || ev.Request.Seen.Before == nil {
			t.Fatalf("event %d = %+v", i, ev)
		}
		if ev.Request.Verdict != event.Allow {
			t.Errorf("event %d verdict %v", i, ev.Request.Verdict)
		}
		b := ev.Request.Seen.Before
		if b.Exists != w.exists || !reflect.DeepEqual(b.Data, w.before) {
			t.Errorf("event %d saw before %+v, want exists=%v data=%v", i, *b, w.exists, w.before)
		}
		if w.data != nil && !reflect.DeepEqual(ev.Request.Seen.Data, w.data) {
			t.Errorf("event %d saw data %v, want %v", i, ev.Request.Seen.Data, w.data)
		}
		for _, p := range []any{ev.Request, ev.Request.Seen, b} {
			if parts[p] {
				t.Errorf("event %d shares %T with an earlier one", i, p)
			}
			parts[p] = true
		}
	}
}
