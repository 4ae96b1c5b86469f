package trigger

import (
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/pubsub"
)

func publishEvent(topic string, msgs ...*pubsub.Message) event.Event {
	return event.Event{Kind: event.KindMutation, Service: pubsub.ServiceName, Method: pubsub.OpPublish, Path: topic,
		Mutation: &event.Mutation{Op: pubsub.OpPublish, Current: &pubsub.PublishEvent{Topic: topic, Count: len(msgs), Messages: msgs}}}
}

func TestPubSubPayloads(t *testing.T) {
	t.Parallel()
	v2 := Function{ID: "onOrders", Platform: GCFv2, EventType: pubsubV2Type, EventFilters: map[string]string{"topic": "orders"}}
	v1 := Function{ID: "legacy", Platform: GCFv1, EventType: pubsubV1Type, EventFilters: map[string]string{"resource": "projects/demo-p/topics/orders"}}
	for _, f := range []Function{v2, v1} {
		if k := kindOf(f.EventType); k != kindPubSubV2 && k != kindPubSubV1 {
			t.Fatalf("%s: kind %v", f.EventType, k)
		}
	}
	msgs := []*pubsub.Message{
		{ID: "7", Data: []byte(`{"n":1}`), Attributes: map[string]string{"k": "v"}, OrderingKey: "key-1", PublishTime: t0},
		{ID: "8", Data: []byte("plain"), PublishTime: t0},
	}
	ev := publishEvent("projects/demo-p/topics/orders", msgs...)

	ds, err := Deliveries(v2, ev, testEnv)
	if err != nil || len(ds) != 2 {
		t.Fatalf("v2: %d deliveries, %v; want 2", len(ds), err)
	}
	ce := decodeJSON(t, ds[0].Payload)
	for path, want := range map[string]any{
		"specversion": "1.0", "id": "7", "type": "google.cloud.pubsub.topic.v1.messagePublished",
		"source": "//pubsub.googleapis.com/projects/demo-p/topics/orders", "time": "2026-12-06T10:00:00.123Z",
		"data.message.data": "eyJuIjoxfQ==", "data.message.attributes.k": "v", "data.message.messageId": "7",
		"data.message.message_id": "7", "data.message.publishTime": "2026-12-06T10:00:00.123Z",
		"data.message.publish_time": "2026-12-06T10:00:00.123Z", "data.message.orderingKey": "key-1",
		"data.subscription": "projects/demo-p/subscriptions/emulator-sub-orders",
	} {
		if got := get(ce, path); got != want {
			t.Errorf("v2 %s = %v, want %v", path, got, want)
		}
	}
	if got := get(decodeJSON(t, ds[1].Payload), "data.message.data"); got != "cGxhaW4=" {
		t.Errorf("second message data = %v", got)
	}

	ds, err = Deliveries(v1, ev, testEnv)
	if err != nil || len(ds) != 2 {
		t.Fatalf("v1: %d deliveries, %v; want 2", len(ds), err)
	}
	le := decodeJSON(t, ds[0].Payload)
	for path, want := range map[string]any{
		"data.data": "eyJuIjoxfQ==", "data.attributes.k": "v", "data.messageId": "7", "data.orderingKey": "key-1",
		"data.@type":      "type.googleapis.com/google.pubsub.v1.PubsubMessage",
		"context.eventId": "7", "context.eventType": "google.pubsub.topic.publish", "context.timestamp": "2026-12-06T10:00:00.123Z",
		"context.resource.name": "projects/demo-p/topics/orders", "context.resource.service": "pubsub.googleapis.com",
	} {
		if got := get(le, path); got != want {
			t.Errorf("v1 %s = %v, want %v", path, got, want)
		}
	}
	if a, ok := get(decodeJSON(t, ds[1].Payload), "data.attributes").(map[string]any); !ok || len(a) != 0 {
		t.Errorf("a message without attributes has attributes %v, want {}", a)
	}

	// Other topics, projects and services do not fire.
	for name, other := range map[string]event.Event{
		"other topic":   publishEvent("projects/demo-p/topics/ordersX", msgs...),
		"other project": publishEvent("projects/elsewhere/topics/orders", msgs...),
		"not a publish": {Kind: event.KindMutation, Service: pubsub.ServiceName, Method: pubsub.OpAck, Path: "projects/demo-p/topics/orders",
			Mutation: &event.Mutation{Op: pubsub.OpAck, Current: &pubsub.AckEvent{}}},
	} {
		for _, f := range []Function{v1, v2} {
			if ds, err := Deliveries(f, other, testEnv); err != nil || len(ds) != 0 {
				t.Errorf("%s fired %s: %d, %v", name, f.ID, len(ds), err)
			}
		}
	}
	if got := PubSubTopic(v2, "demo-p"); got != "projects/demo-p/topics/orders" {
		t.Errorf("PubSubTopic(v2) = %q", got)
	}
	if !relevant(ev) {
		t.Error("a publish is not relevant to the dispatcher")
	}
}

// TestDispatcherWantsWatchedTopicsOnly: with Pub/Sub functions loaded, a
// publish is held for the dispatcher only when some function listens on
// its topic (v2's short topic name or v1's full resource); a publish to
// another topic fires nothing, so holding it would only cost its
// publisher. While the functions load (held) every change is wanted.
func TestDispatcherWantsWatchedTopicsOnly(t *testing.T) {
	t.Parallel()
	d := NewDispatcher(Options{Env: testEnv, Deliver: newRecorder().deliver, Logf: t.Logf,
		Journal: &memJournal{pending: map[string]Pending{}}, Held: true})
	defer d.Close()
	other := publishEvent("projects/demo-p/topics/unwatched")
	if !d.Wants(&other) {
		t.Errorf("a publish is not wanted while the functions load")
	}
	d.SetFunctions([]Function{
		{ID: "v2", Platform: GCFv2, EventType: pubsubV2Type, EventFilters: map[string]string{"topic": "orders"}},
		{ID: "v1", Platform: GCFv1, EventType: pubsubV1Type, EventFilters: map[string]string{"resource": "projects/demo-p/topics/legacy"}},
	})
	d.Release()
	for topic, want := range map[string]bool{
		"projects/demo-p/topics/orders":    true,
		"projects/demo-p/topics/legacy":    true,
		"projects/demo-p/topics/unwatched": false,
		"projects/other-p/topics/orders":   false,
	} {
		ev := publishEvent(topic)
		if got := d.Wants(&ev); got != want {
			t.Errorf("publish to %s wanted held: %v, want %v", topic, got, want)
		}
	}
}
