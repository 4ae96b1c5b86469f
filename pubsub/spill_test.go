package pubsub

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

// TestSpillUnderConcurrentPublishes: with a window far smaller than the
// backlog and publishes committing out of order, a stream receives
// every message exactly once, and the timer heap stays bounded by the
// live leases.
func TestSpillUnderConcurrentPublishes(t *testing.T) {
	e := newEngine(t, service.Env{Bucket: servicetest.NewBucket()}, Options{Window: 50})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp})
	const workers, per = 8, 250
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range per {
				if _, err := e.Publish(tp, []*Message{{Data: []byte("x")}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	st, err := e.OpenStream(sb, 60, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < workers*per {
		rs, err := st.Receive(ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", len(seen), err)
		}
		var ids []string
		for _, r := range rs {
			if seen[r.Message.ID] {
				t.Fatalf("message %s delivered twice", r.Message.ID)
			}
			seen[r.Message.ID] = true
			ids = append(ids, r.AckID)
		}
		// A receipt modack, as the client libraries send, then the ack.
		if err := e.ModifyAckDeadline(sb, ids, 60); err != nil {
			t.Fatal(err)
		}
		if err := e.Acknowledge(sb, ids); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.timers); n > 2*minTimerCompact {
		t.Fatalf("%d timer items for %d live leases", n, len(e.subs[sb].leases))
	}
	if b := e.subs[sb].backlog; b != 0 {
		t.Fatalf("backlog %d after everything was acknowledged", b)
	}
}
