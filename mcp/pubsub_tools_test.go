package mcp

import (
	"testing"

	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

func TestPubSubTools(t *testing.T) {
	e := newEnvOn(t, sandbox.Options{Deterministic: true, Seed: 1, Services: []service.Registration{pubsub.Registration}}, Options{})
	ps, ok := sandbox.Lookup[*pubsub.Engine](e.sb)
	if !ok {
		t.Fatal("no pubsub engine")
	}
	if _, err := ps.CreateTopic(&pubsub.Topic{Name: "projects/p/topics/orders"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.CreateSubscription(&pubsub.Subscription{Name: "projects/p/subscriptions/worker", Topic: "projects/p/topics/orders"}); err != nil {
		t.Fatal(err)
	}
	r := e.call("pubsub_publish", map[string]any{"topic": "projects/p/topics/orders", "data": "hello", "attributes": map[string]string{"k": "v"}})
	if !r.OK || r.Data["messageId"] == "" {
		t.Fatalf("publish: %+v", r)
	}
	if r := e.call("pubsub_publish", map[string]any{"topic": "projects/p/topics/nope", "data": "x"}); r.OK || r.errCode() != "NOT_FOUND" || !r.recoverable() {
		t.Fatalf("publish to a missing topic: %+v", r)
	}
	r = e.call("pubsub_list", map[string]any{})
	topics := r.Data["topics"].([]any)
	sub := topics[0].(map[string]any)["subscriptions"].([]any)[0].(map[string]any)
	if !r.OK || len(topics) != 1 || sub["stats"].(map[string]any)["backlog"].(float64) != 1 {
		t.Fatalf("list: %+v", r)
	}
	// A peek leaves the message; a pull with ack consumes it.
	for i, want := range []int{1, 1, 1, 0} {
		ack := i == 2
		r = e.call("pubsub_pull", map[string]any{"subscription": "projects/p/subscriptions/worker", "ack": ack})
		msgs, _ := r.Data["messages"].([]any)
		if !r.OK || len(msgs) != want {
			t.Fatalf("pull %d (ack %v): %+v", i, ack, r)
		}
		if want == 1 && msgs[0].(map[string]any)["data"] != "hello" {
			t.Fatalf("pulled %v", msgs[0])
		}
	}
	if r := e.call("pubsub_pull", map[string]any{"subscription": "projects/p/subscriptions/worker", "maxMessages": 5000}); r.OK || r.errCode() != "INVALID_ARGUMENT" {
		t.Fatalf("oversized pull: %+v", r)
	}
}
