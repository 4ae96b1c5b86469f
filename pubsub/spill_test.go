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

// TestSpillMixedSegmentsAndSingles: batches (stored as segments) and
// single messages published concurrently, past a window far smaller than
// the backlog, are all delivered exactly once.
func TestSpillMixedSegmentsAndSingles(t *testing.T) {
	e := newEngine(t, service.Env{Bucket: servicetest.NewBucket()}, Options{Window: 50})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp})
	const workers, per, batch = 6, 60, 7
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range per {
				n := 1
				if w%2 == 0 {
					n = batch
				}
				msgs := make([]*Message, n)
				for i := range msgs {
					msgs[i] = &Message{Data: []byte("x")}
				}
				if _, err := e.Publish(tp, msgs); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	total := workers / 2 * per * (batch + 1)
	st, err := e.OpenStream(sb, 60, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < total {
		rs, err := st.Receive(ctx)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(seen), total, err)
		}
		var ids []string
		for _, r := range rs {
			if seen[r.Message.ID] {
				t.Fatalf("message %s delivered twice", r.Message.ID)
			}
			seen[r.Message.ID] = true
			ids = append(ids, r.AckID)
		}
		if err := e.Acknowledge(sb, ids); err != nil {
			t.Fatal(err)
		}
	}
}
