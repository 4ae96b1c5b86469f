package trigger

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// probe is a service that only keeps the environment it was given.
type probe struct{ env *service.Env }

func (probe) Name() string                       { return "probe" }
func (probe) Reset() error                       { return nil }
func (probe) Snapshot() (json.RawMessage, error) { return json.RawMessage("{}"), nil }
func (probe) Restore(json.RawMessage) error      { return nil }

// openProbe opens a durable sandbox on dir and returns its outbox and a
// Log to append to.
func openProbe(t *testing.T, dir string) (*sandbox.Sandbox, service.Env) {
	t.Helper()
	var env service.Env
	sb, err := sandbox.Open(sandbox.Options{Project: "demo-p", DataDir: dir, Services: []service.Registration{{Name: "probe",
		New: func(e service.Env) (service.Service, error) { env = e; return probe{}, nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	return sb, env
}

// TestHeldEventsDeliverAlike: the changes of Auth, Pub/Sub and Eventarc
// that a trigger fires on, held in the sandbox's outbox and read back
// by the next start (as JSON: a Pub/Sub publish's messages through its
// OutboxForm, Eventarc's events, Auth's user record), make the same
// deliveries as the events themselves, byte for byte.
// conformance: functions.delivery.crash
func TestHeldEventsDeliverAlike(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 9, 30, 0, 123e6, time.UTC)
	env := testEnv
	env.NewID = func() string { return "fixed-id" }
	user := map[string]any{"localId": "u1", "email": "a@x.com", "createdAt": "1700000000000", "customAttributes": `{"role":"admin"}`}
	msgs := []*pubsub.Message{
		{ID: "7", Data: []byte("hello \x00 bytes"), Attributes: map[string]string{"k": "v"}, OrderingKey: "o", PublishTime: at},
		{ID: "8", Data: []byte(`{"n":1}`), PublishTime: at.Add(time.Millisecond)},
	}
	publish := event.Event{Kind: event.KindMutation, Service: pubsub.ServiceName, Method: pubsub.OpPublish, Path: "projects/demo-p/topics/orders",
		Mutation: &event.Mutation{Op: pubsub.OpPublish, Project: "demo-p", Current: &pubsub.PublishEvent{Topic: "projects/demo-p/topics/orders", Count: 2, IDs: []string{"7", "8"}, Messages: msgs}}}
	channel := "projects/demo-p/locations/us-central1/channels/firebase"
	custom := event.Event{Kind: event.KindMutation, Service: EventarcService, Method: OpPublishEvents, Path: channel,
		Mutation: &event.Mutation{Op: OpPublishEvents, Current: &CustomEvents{Channel: channel, Events: []map[string]any{
			{"specversion": "1.0", "id": "e1", "source": "s", "type": "shipped", "carrier": "ups", "n": 3, "data": map[string]any{"a": []any{1.5, "x"}}}}}}}
	cases := []struct {
		name string
		ev   event.Event
		fns  []Function
	}{
		{"auth", event.Event{Kind: event.KindMutation, Service: "auth", Method: "user_create", Path: "u1",
			Mutation: &event.Mutation{Op: "user_create", Project: "demo-p", Current: user}},
			[]Function{
				{ID: "a1", Platform: GCFv1, EventType: "providers/firebase.auth/eventTypes/user.create", EventFilters: map[string]string{"resource": "projects/demo-p"}},
			}},
		{"pubsub", publish, []Function{
			{ID: "p2", Platform: GCFv2, EventType: pubsubV2Type, EventFilters: map[string]string{"topic": "orders"}},
			{ID: "p1", Platform: GCFv1, EventType: pubsubV1Type, EventFilters: map[string]string{"resource": "projects/demo-p/topics/orders"}},
		}},
		{"eventarc", custom, []Function{
			{ID: "c", Platform: GCFv2, EventType: "shipped", Channel: DefaultChannel, EventFilters: map[string]string{"carrier": "ups", "n": "3"}},
		}},
	}
	dir := t.TempDir()
	sb, senv := openProbe(t, dir)
	senv.Outbox.Want(func(*event.Event) bool { return true })
	evs := make([]event.Event, len(cases))
	for i, c := range cases {
		evs[i] = c.ev
	}
	held := senv.Outbox.Hold(evs)
	if len(held) != len(cases) {
		t.Fatalf("held %d of %d events", len(held), len(cases))
	}
	if err := senv.Log.Append("commits", held); err != nil {
		t.Fatal(err)
	}
	sb.Close()

	sb, senv = openProbe(t, dir)
	defer sb.Close()
	left, err := senv.Outbox.Left()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != len(cases) {
		t.Fatalf("%d events left, want %d", len(left), len(cases))
	}
	for i, c := range cases {
		for _, f := range c.fns {
			want, err := Deliveries(f, evs[i], env)
			if err != nil || len(want) == 0 {
				t.Fatalf("%s: %s makes no delivery of the event itself: %v", c.name, f.ID, err)
			}
			got, err := Deliveries(f, left[i], env)
			if err != nil {
				t.Fatalf("%s: %s: %v", c.name, f.ID, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %s makes %d deliveries of the held event, %d of the event", c.name, f.ID, len(got), len(want))
			}
			for j := range want {
				if !bytes.Equal(got[j].Payload, want[j].Payload) {
					t.Errorf("%s: %s delivery %d of the held event:\n%s\nof the event:\n%s", c.name, f.ID, j, got[j].Payload, want[j].Payload)
				}
			}
		}
	}
}
