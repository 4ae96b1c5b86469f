package pubsub

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

// publishBatches publishes batches of n messages, attribute k
// alternating a and b, and returns the ids in order.
func publishBatches(t *testing.T, e *Engine, batches, n int) []string {
	t.Helper()
	var ids []string
	for b := range batches {
		msgs := make([]*Message, n)
		for i := range msgs {
			k := "a"
			if i%2 == 1 {
				k = "b"
			}
			msgs[i] = &Message{Data: fmt.Appendf(nil, "%d-%d", b, i), Attributes: map[string]string{"k": k}}
		}
		got, err := e.Publish(tp, msgs)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	return ids
}

// pullAll pulls (and acknowledges) every deliverable message of sub and
// returns their ids in delivery order.
func pullAll(t *testing.T, e *Engine, sub string) []string {
	t.Helper()
	var ids []string
	for {
		rs, err := e.Pull(context.Background(), sub, 3, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			return ids
		}
		var acks []string
		for _, r := range rs {
			ids = append(ids, r.Message.ID)
			acks = append(acks, r.AckID)
		}
		if err := e.Acknowledge(sub, acks); err != nil {
			t.Fatal(err)
		}
	}
}

// storedKeys counts the bucket's keys of queue uid (messages and ack
// bitmaps).
func storedKeys(t *testing.T, b service.Bucket, uid string) int {
	t.Helper()
	n := 0
	err := b.View(func(tx service.Tx) error {
		for _, p := range [][]byte{queuePrefix(uid), ackPrefix(uid)} {
			if err := tx.ForEach(p, func(_, _ []byte) error { n++; return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSegmentPartialAcksSurviveRestart: batches stored as one segment
// per queue, with a window smaller than a batch, keep each
// subscription's own acknowledgements (a filtered subscription holds
// only its messages) across a restart, deliver the rest in order once,
// and leave no key behind once everything is acknowledged.
func TestSegmentPartialAcksSurviveRestart(t *testing.T) {
	bucket := servicetest.NewBucket()
	e := newEngine(t, service.Env{Bucket: bucket}, Options{Window: 4})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp})
	const fsb = "projects/p/subscriptions/only-a"
	if _, err := e.CreateSubscription(&Subscription{Name: fsb, Topic: tp, Filter: `attributes.k = "a"`}); err != nil {
		t.Fatal(err)
	}
	ids := publishBatches(t, e, 2, 5)

	// Acknowledge the 2nd and 4th message of the first batch only.
	rs, err := e.Pull(context.Background(), sb, 4, true)
	if err != nil || len(rs) != 4 {
		t.Fatalf("pull: %d messages, %v", len(rs), err)
	}
	if got := []string{rs[0].Message.ID, rs[1].Message.ID, rs[2].Message.ID, rs[3].Message.ID}; !slices.Equal(got, ids[:4]) {
		t.Fatalf("delivered %v, want %v", got, ids[:4])
	}
	if err := e.Acknowledge(sb, []string{rs[1].AckID, rs[3].AckID}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e = newEngine(t, service.Env{Bucket: bucket}, Options{Window: 4})
	st, err := e.Stats(sb)
	if err != nil || st.Backlog != 8 {
		t.Fatalf("backlog after restart %d (%v), want 8", st.Backlog, err)
	}
	want := slices.Concat([]string{ids[0], ids[2]}, ids[4:])
	if got := pullAll(t, e, sb); !slices.Equal(got, want) {
		t.Fatalf("after restart %s delivered %v, want %v", sb, got, want)
	}
	wantA := []string{ids[0], ids[2], ids[4], ids[5], ids[7], ids[9]}
	if got := pullAll(t, e, fsb); !slices.Equal(got, wantA) {
		t.Fatalf("%s delivered %v, want %v", fsb, got, wantA)
	}
	e.mu.Lock()
	uids := []string{e.subs[sb].uid, e.subs[fsb].uid}
	e.mu.Unlock()
	// The acknowledgements commit before Acknowledge returns.
	for _, uid := range uids {
		if n := storedKeys(t, bucket, uid); n != 0 {
			t.Fatalf("queue %s keeps %d keys after every message was acknowledged", uid, n)
		}
	}
}

// restartEnv is an Env over bucket whose ids stay unique across the
// engines opened on it (the default counter restarts with each).
func restartEnv(bucket service.Bucket) service.Env {
	n := 0
	return service.Env{Bucket: bucket, NewID: func() string { n++; return fmt.Sprintf("u%d", n) }}
}

// TestSegmentRetainedAcksSeekBack: with retainAckedMessages, acknowledged
// messages of a segment stay stored (not in the backlog, also after a
// restart) and a seek to a time before them delivers them again.
func TestSegmentRetainedAcksSeekBack(t *testing.T) {
	bucket := servicetest.NewBucket()
	env := restartEnv(bucket)
	e := newEngine(t, env, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, RetainAckedMessages: true})
	start := time.Now().Add(-time.Second)
	ids := publishBatches(t, e, 1, 4)
	if got := pullAll(t, e, sb); !slices.Equal(got, ids) {
		t.Fatalf("delivered %v, want %v", got, ids)
	}
	e.Close()

	e = newEngine(t, env, Options{})
	if st, _ := e.Stats(sb); st.Backlog != 0 {
		t.Fatalf("backlog %d after every message was acknowledged", st.Backlog)
	}
	if n := storedKeys(t, bucket, e.subs[sb].uid); n != 2 {
		t.Fatalf("%d keys stored, want the segment and its bitmap", n)
	}
	if got := pullAll(t, e, sb); len(got) != 0 {
		t.Fatalf("acknowledged messages delivered again: %v", got)
	}
	if err := e.SeekToTime(sb, start); err != nil {
		t.Fatal(err)
	}
	if got := pullAll(t, e, sb); !slices.Equal(got, ids) {
		t.Fatalf("after the seek delivered %v, want %v", got, ids)
	}
}

// TestSegmentDroppedStayGoneAfterSeek: in a subscription that retains
// acknowledged messages, a segment's messages dropped past the retention
// duration are gone for good (as a one-record value is deleted) while
// its acknowledged ones are kept and come back with a seek, also after a
// restart.
func TestSegmentDroppedStayGoneAfterSeek(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	bucket := servicetest.NewBucket()
	env := restartEnv(bucket)
	env.Now = clock
	e := newEngine(t, env, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, RetainAckedMessages: true, MessageRetentionDuration: 10 * time.Minute})
	old := publishBatches(t, e, 1, 3)
	// The first old message acknowledged, the two others left to expire.
	rs, err := e.Pull(context.Background(), sb, 1, true)
	if err != nil || len(rs) != 1 || rs[0].Message.ID != old[0] {
		t.Fatalf("pull: %v, %v", rs, err)
	}
	if err := e.Acknowledge(sb, []string{rs[0].AckID}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(11 * time.Minute)
	mu.Unlock()
	fresh := publishBatches(t, e, 1, 2)
	if got := pullAll(t, e, sb); !slices.Equal(got, fresh) {
		t.Fatalf("delivered %v, want only the fresh %v (not %v)", got, fresh, old)
	}
	e.Close() // waits for the expiry's write
	e = newEngine(t, env, Options{})
	if err := e.SeekToTime(sb, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	// The acknowledged old message is back (until delivery finds it past
	// the retention), the fresh ones too, the expired ones not.
	if st, _ := e.Stats(sb); st.Backlog != 1+len(fresh) {
		t.Fatalf("backlog %d after the seek, want %d: dropped messages came back or kept ones were lost", st.Backlog, 1+len(fresh))
	}
	if got := pullAll(t, e, sb); !slices.Equal(got, fresh) {
		t.Fatalf("after the seek delivered %v, want %v", got, fresh)
	}
}
