package pubsub

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

func newEngine(t *testing.T, env service.Env, opts Options) *Engine {
	t.Helper()
	e, err := NewEngine(env, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func mustTopicSub(t *testing.T, e *Engine, sub *Subscription) {
	t.Helper()
	if _, err := e.CreateTopic(&Topic{Name: sub.Topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateSubscription(sub); err != nil {
		t.Fatal(err)
	}
}

func publishN(t *testing.T, e *Engine, topic string, n int, key string) {
	t.Helper()
	for i := range n {
		if _, err := e.Publish(topic, []*Message{{Data: fmt.Appendf(nil, "%d", i), OrderingKey: key}}); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	tp = "projects/p/topics/topic"
	sb = "projects/p/subscriptions/sub"
)

// TestWindowSpillsToBucket: with a window of 10, 100 messages are all
// delivered in order, memory never holding more than the window, and a
// reopened engine delivers what was left.
func TestWindowSpillsToBucket(t *testing.T) {
	b := servicetest.NewBucket()
	e := newEngine(t, service.Env{Bucket: b}, Options{Window: 10})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp})
	publishN(t, e, tp, 100, "")
	e.mu.Lock()
	inMem := len(e.subs[sb].entries)
	e.mu.Unlock()
	if inMem > 10 {
		t.Fatalf("%d messages in memory, window 10", inMem)
	}
	var got []string
	for len(got) < 60 {
		rs, err := e.Pull(context.Background(), sb, 7, true)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rs {
			got = append(got, string(r.Message.Data))
			ids = append(ids, r.AckID)
		}
		if err := e.Acknowledge(sb, ids); err != nil {
			t.Fatal(err)
		}
		e.mu.Lock()
		inMem = len(e.subs[sb].entries)
		e.mu.Unlock()
		if inMem > 10 {
			t.Fatalf("%d messages in memory, window 10", inMem)
		}
	}
	for i, d := range got {
		if d != fmt.Sprint(i) {
			t.Fatalf("delivery %d is %q: %v", i, d, got)
		}
	}
	if st, _ := e.Stats(sb); st.Backlog != 100-len(got) {
		t.Fatalf("backlog %d, want %d", st.Backlog, 100-len(got))
	}
	e.Close()
	e2 := newEngine(t, service.Env{Bucket: b}, Options{Window: 10})
	if st, _ := e2.Stats(sb); st.Backlog != 100-len(got) {
		t.Fatalf("backlog after reopen %d, want %d", st.Backlog, 100-len(got))
	}
	rest := 0
	for {
		rs, err := e2.Pull(context.Background(), sb, 1000, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			break
		}
		for _, r := range rs {
			if r.Message.Data[0] == 0 {
				t.Fatal("empty")
			}
			rest++
			_ = e2.Acknowledge(sb, []string{r.AckID})
		}
	}
	if rest != 100-len(got) {
		t.Fatalf("after reopen %d delivered, want %d", rest, 100-len(got))
	}
}

// TestOrderingNackRedeliversSuccessors: nacking a key's message
// redelivers it and the key's later outstanding messages, in order,
// while other keys flow.
func TestOrderingNackRedeliversSuccessors(t *testing.T) {
	e := newEngine(t, service.Env{}, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, EnableMessageOrdering: true})
	publishN(t, e, tp, 5, "k")
	publishN(t, e, tp, 2, "other")
	ctx := context.Background()
	rs, _ := e.Pull(ctx, sb, 100, true)
	if len(rs) != 7 {
		t.Fatalf("first pull %d, want 7", len(rs))
	}
	// Nothing of key k while its messages are outstanding.
	publishN(t, e, tp, 1, "k")
	if more, _ := e.Pull(ctx, sb, 100, true); len(more) != 0 {
		t.Fatalf("delivered %d while the key is busy", len(more))
	}
	// Nack k's second message: 1..4 come again, in order, once 0 (still
	// leased) is acknowledged, followed by k's newer message.
	if err := e.ModifyAckDeadline(sb, []string{rs[1].AckID}, 0); err != nil {
		t.Fatal(err)
	}
	if more, _ := e.Pull(ctx, sb, 100, true); len(more) != 0 {
		t.Fatalf("delivered %d while the key's first message is leased", len(more))
	}
	if err := e.Acknowledge(sb, []string{rs[0].AckID}); err != nil {
		t.Fatal(err)
	}
	again, _ := e.Pull(ctx, sb, 100, true)
	var ds []string
	for _, r := range again {
		ds = append(ds, string(r.Message.Data)+r.Message.OrderingKey)
	}
	if fmt.Sprint(ds) != "[1k 2k 3k 4k 0k]" {
		t.Fatalf("redelivered %v, want [1k 2k 3k 4k 0k]", ds)
	}
}

func TestFilterAppliedOnDelivery(t *testing.T) {
	e := newEngine(t, service.Env{}, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, Filter: `attributes.color = "red" AND NOT attributes:skip`})
	if _, err := e.CreateSubscription(&Subscription{Name: sb + "2", Topic: tp, Filter: `attributes.color = `}); Code(err).String() != "InvalidArgument" {
		t.Fatalf("bad filter accepted: %v", err)
	}
	for _, a := range []map[string]string{{"color": "red"}, {"color": "blue"}, {"color": "red", "skip": ""}, {"x": "y"}} {
		if _, err := e.Publish(tp, []*Message{{Attributes: a}}); err != nil {
			t.Fatal(err)
		}
	}
	rs, _ := e.Pull(context.Background(), sb, 10, true)
	if len(rs) != 1 || rs[0].Message.Attributes["color"] != "red" || len(rs[0].Message.Attributes) != 1 {
		t.Fatalf("filter delivered %v", rs)
	}
}

func TestDetach(t *testing.T) {
	e := newEngine(t, service.Env{}, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp})
	publishN(t, e, tp, 3, "")
	if err := e.DetachSubscription(sb); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pull(context.Background(), sb, 1, true); err != errDetached {
		t.Fatalf("pull of detached: %v", err)
	}
	s, _ := e.GetSubscription(sb)
	if !s.Detached {
		t.Fatal("not detached")
	}
}

// TestPushEnvelopeAndRetry: a push endpoint failing twice gets the
// message again with backoff, in production's wrapped envelope, and a
// slow endpoint on another subscription does not hold it up.
func TestPushEnvelopeAndRetry(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	calls, hello := 0, 0
	ok := make(chan struct{})
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		bodies = append(bodies, m)
		if m["message"].(map[string]any)["data"] != base64.StdEncoding.EncodeToString([]byte("hello")) {
			w.WriteHeader(204)
			return
		}
		hello++
		if hello < 3 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(204)
		if hello == 3 {
			close(ok)
		}
	}))
	t.Cleanup(fast.Close)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a client gone only past the body
		<-r.Context().Done()
	}))
	t.Cleanup(slow.Close) // after the engine's cleanup ends its pushes
	e := newEngine(t, service.Env{}, Options{PushClient: &http.Client{Timeout: 30 * time.Second}})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, Push: &PushConfig{Endpoint: fast.URL}})
	if _, err := e.CreateSubscription(&Subscription{Name: sb + "-slow", Topic: tp, Push: &PushConfig{Endpoint: slow.URL}}); err != nil {
		t.Fatal(err)
	}
	publishN(t, e, tp, 40, "") // the slow endpoint's concurrency is exhausted
	if _, err := e.Publish(tp, []*Message{{Data: []byte("hello"), Attributes: map[string]string{"a": "b"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ok:
	case <-time.After(10 * time.Second):
		t.Fatal("the push was not retried to success")
	}
	mu.Lock()
	defer mu.Unlock()
	m := bodies[len(bodies)-1]["message"].(map[string]any)
	data, _ := base64.StdEncoding.DecodeString(m["data"].(string))
	if string(data) != "hello" || m["messageId"] != m["message_id"] || m["publishTime"] != m["publish_time"] || bodies[0]["subscription"] != sb {
		t.Fatalf("envelope %v", bodies[len(bodies)-1])
	}
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	e := newEngine(t, service.Env{}, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, Labels: map[string]string{"a": "b"}})
	publishN(t, e, tp, 3, "")
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	e2 := newEngine(t, service.Env{}, Options{})
	if err := e2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	rs, _ := e2.Pull(context.Background(), sb, 10, true)
	if len(rs) != 3 {
		t.Fatalf("restored %d messages", len(rs))
	}
	if err := e2.Restore(json.RawMessage(`{"topics":[{"name":"bad"}]}`)); err == nil {
		t.Fatal("bad state accepted")
	}
	if s, _ := e2.GetSubscription(sb); s == nil || s.Labels["a"] != "b" {
		t.Fatal("a failed restore changed the state")
	}
	if err := e2.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.GetTopic(tp); err != errTopicNotFound {
		t.Fatalf("after reset: %v", err)
	}
}

// TestRetentionDropsOldMessages: a message older than the
// subscription's retention is never delivered and leaves the bucket.
func TestRetentionDropsOldMessages(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := servicetest.NewBucket()
	e := newEngine(t, service.Env{Now: clock, Bucket: b}, Options{})
	mustTopicSub(t, e, &Subscription{Name: sb, Topic: tp, MessageRetentionDuration: 10 * time.Minute})
	publishN(t, e, tp, 2, "")
	mu.Lock()
	now = now.Add(11 * time.Minute)
	mu.Unlock()
	publishN(t, e, tp, 1, "")
	rs, _ := e.Pull(context.Background(), sb, 10, true)
	if len(rs) != 1 {
		t.Fatalf("delivered %d, want only the fresh message", len(rs))
	}
	if st, _ := e.Stats(sb); st.Backlog != 1 {
		t.Fatalf("backlog %d, want 1", st.Backlog)
	}
}
