package studio_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
)

// TestPubSubPage: the Pub/Sub page's data comes from the engine — a
// message published from the Studio is in its subscription's backlog
// with the oldest unacked age at the sandbox's clock; peeking shows it
// twice without leasing it (the backlog is unchanged and a pull still
// receives it); bad input gets the engine's words and status.
func TestPubSubPage(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := startWith(t, backend.Options{Sandbox: sandbox.Options{Now: clock}}, backend.Firestore)
	ps, ok := sandbox.Lookup[*pubsub.Engine](e.b.Sandbox)
	if !ok {
		t.Fatal("no pubsub engine")
	}
	const topic, sub = "projects/p/topics/orders", "projects/p/subscriptions/worker"
	if _, err := ps.CreateTopic(&pubsub.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.CreateSubscription(&pubsub.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	var pub struct{ MessageIds []string }
	if c := e.do(t, "POST", "/api/pubsub/publish", map[string]any{"topic": topic, "data": "hello", "attributes": map[string]string{"kind": "test"}}, &pub); c != 200 || len(pub.MessageIds) != 1 {
		t.Fatalf("publish: %d %+v", c, pub)
	}
	mu.Lock()
	now = now.Add(90 * time.Second)
	mu.Unlock()

	type overview struct {
		Topics []struct {
			Topic         struct{ Name string }
			Subscriptions []struct {
				Subscription            struct{ Name string }
				Stats                   struct{ Backlog, Outstanding int }
				OldestUnackedAgeSeconds float64
			}
		}
	}
	var ov overview
	if c := e.do(t, "GET", "/api/pubsub", nil, &ov); c != 200 || len(ov.Topics) != 1 || ov.Topics[0].Topic.Name != topic || len(ov.Topics[0].Subscriptions) != 1 {
		t.Fatalf("overview: %d %+v", c, ov)
	}
	s := ov.Topics[0].Subscriptions[0]
	if s.Subscription.Name != sub || s.Stats.Backlog != 1 || s.Stats.Outstanding != 0 || s.OldestUnackedAgeSeconds != 90 {
		t.Fatalf("subscription row %+v", s)
	}

	type peeked struct {
		Stats    struct{ Backlog, Outstanding int }
		Messages []struct {
			ID         string
			Text       *string
			Size       int
			Attributes map[string]string
		}
	}
	for i := 0; i < 2; i++ {
		var p peeked
		if c := e.do(t, "GET", "/api/pubsub/messages?subscription="+sub, nil, &p); c != 200 || len(p.Messages) != 1 {
			t.Fatalf("peek %d: %d %+v", i, c, p)
		}
		m := p.Messages[0]
		if m.ID != pub.MessageIds[0] || m.Text == nil || *m.Text != "hello" || m.Size != 5 || m.Attributes["kind"] != "test" || p.Stats.Backlog != 1 || p.Stats.Outstanding != 0 {
			t.Fatalf("peek %d: %+v", i, p)
		}
	}
	got, err := ps.Pull(context.Background(), sub, 10, true)
	if err != nil || len(got) != 1 || string(got[0].Message.Data) != "hello" {
		t.Fatalf("pull after peeking: %+v %v", got, err)
	}

	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"unknown topic", "POST", "/api/pubsub/publish", map[string]any{"topic": "projects/p/topics/nope", "data": "x"}, 404, "Topic not found"},
		{"empty message", "POST", "/api/pubsub/publish", map[string]any{"topic": topic}, 400, "Some messages are empty"},
		{"bad topic name", "POST", "/api/pubsub/publish", map[string]any{"topic": "orders", "data": "x"}, 400, "Invalid [topics] name"},
		{"no topic", "POST", "/api/pubsub/publish", map[string]any{"data": "x"}, 400, "topic is required"},
		{"data twice", "POST", "/api/pubsub/publish", map[string]any{"topic": topic, "data": "x", "dataBase64": "eA=="}, 400, "not both"},
		{"unknown subscription", "GET", "/api/pubsub/messages?subscription=projects/p/subscriptions/nope", nil, 404, "Subscription does not exist"},
		{"no subscription", "GET", "/api/pubsub/messages", nil, 400, "subscription is required"},
		{"max out of range", "GET", "/api/pubsub/messages?max=0&subscription=" + sub, nil, 400, "max must be an integer from 1 to 1000"},
	} {
		var out struct{ Error string }
		if got := e.do(t, c.method, c.path, c.body, &out); got != c.status || !strings.Contains(out.Error, c.msg) {
			t.Errorf("%s: %d %q, want %d %q", c.name, got, out.Error, c.status, c.msg)
		}
	}
}
