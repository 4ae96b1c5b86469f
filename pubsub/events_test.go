package pubsub

import (
	"context"
	"sync"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

type recorder struct {
	mu  sync.Mutex
	evs []event.Event
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
}

func (r *recorder) ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.evs {
		if e.Mutation != nil {
			out = append(out, e.Mutation.Op)
		}
	}
	return out
}

// TestTypedEvents: publish, deliver, nack, ack and dead-lettering each
// emit their typed record.
func TestTypedEvents(t *testing.T) {
	rec := &recorder{}
	e := newEngine(t, service.Env{Events: rec}, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, DeadLetter: &DeadLetterPolicy{Topic: "projects/p/topics/dead", MaxDeliveryAttempts: 5}})
	if _, err := e.CreateTopic(&Topic{Name: "projects/p/topics/dead"}); err != nil {
		t.Fatal(err)
	}
	publishN(t, e, tp, 1, "")
	ctx := context.Background()
	for range 5 {
		rs, _ := e.Pull(ctx, sb, 1, true)
		if len(rs) != 1 {
			t.Fatal("no delivery")
		}
		if err := e.ModifyAckDeadline(sb, []string{rs[0].AckID}, 0); err != nil {
			t.Fatal(err)
		}
	}
	publishN(t, e, tp, 1, "")
	rs, _ := e.Pull(ctx, sb, 1, true)
	if err := e.Acknowledge(sb, []string{rs[0].AckID}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{OpPublish: 3, OpDeliver: 6, OpNack: 5, OpDeadLetter: 1, OpAck: 1}
	got := map[string]int{}
	for _, op := range rec.ops() {
		got[op]++
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s events: %d, want %d (all: %v)", op, got[op], n, rec.ops())
		}
	}
	for _, ev := range rec.evs {
		if ev.Mutation == nil || ev.Mutation.Op != OpDeadLetter {
			continue
		}
		d, ok := ev.Mutation.Current.(*DeadLetterEvent)
		if !ok || d.DeliveryAttempt != 5 || d.DeadLetterTopic != "projects/p/topics/dead" || ev.Service != ServiceName {
			t.Fatalf("dead-letter event %+v", ev.Mutation.Current)
		}
	}
}
