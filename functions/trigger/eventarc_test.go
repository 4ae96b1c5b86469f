package trigger

import (
	"errors"
	"slices"
	"testing"

	"github.com/pyric/pyric/event"
)

func TestChannelName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		channel, region, want string
		err                   error
	}{
		{"", "", "projects/demo-p/locations/us-central1/channels/firebase", nil},
		{"audit", "europe-west1", "projects/demo-p/locations/europe-west1/channels/audit", nil},
		{"audit", "", "projects/demo-p/locations/us-central1/channels/audit", nil},
		{"locations/asia-east1/channels/c_1", "europe-west1", "projects/demo-p/locations/asia-east1/channels/c_1", nil},
		{"projects/other/locations/l/channels/c", "", "projects/other/locations/l/channels/c", nil},
		{"locations/l/channels/a.b", "", "", ErrChannelName},
		{"projects/p/channels/c", "", "", ErrChannelName},
	} {
		got, err := ChannelName("demo-p", c.region, c.channel)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("ChannelName(%q, %q) = %q, %v; want %q, %v", c.channel, c.region, got, err, c.want, c.err)
		}
	}
}

func TestEventarcDeliveries(t *testing.T) {
	t.Parallel()
	publish := func(channel string, evs ...map[string]any) event.Event {
		return event.Event{Kind: event.KindMutation, Service: EventarcService, Method: OpPublishEvents, Path: channel,
			Mutation: &event.Mutation{Op: OpPublishEvents, Current: &CustomEvents{Channel: channel, Events: evs}}}
	}
	def := "projects/demo-p/locations/us-central1/channels/firebase"
	ups := map[string]any{"type": "shipped", "id": "1", "carrier": "ups", "n": int64(3), "data": map[string]any{"a": 1.0}}
	fedex := map[string]any{"type": "shipped", "id": "2", "carrier": "fedex", "n": int64(3)}
	other := map[string]any{"type": "lost", "id": "3", "carrier": "ups"}
	const alertType = "google.firebase.firebasealerts.alerts.v1.published"
	fatal := map[string]any{"type": alertType, "id": "a1", "alerttype": "crashlytics.newFatalIssue", "appid": "1:1:web:1"}
	billing := map[string]any{"type": alertType, "id": "a2", "alerttype": "billing.planUpdate"}
	for _, c := range []struct {
		name string
		f    Function
		ev   event.Event
		ids  []string
	}{
		{"type on the default channel", Function{ID: "f", EventType: "shipped", Channel: DefaultChannel}, publish(def, ups, fedex, other), []string{"1", "2"}},
		{"a string filter", Function{ID: "f", EventType: "shipped", Channel: DefaultChannel, EventFilters: map[string]string{"carrier": "ups"}}, publish(def, ups, fedex), []string{"1"}},
		{"an integer extension compares as its string", Function{ID: "f", EventType: "shipped", Channel: DefaultChannel, EventFilters: map[string]string{"n": "3"}}, publish(def, ups, fedex), []string{"1", "2"}},
		{"a filter on an absent attribute", Function{ID: "f", EventType: "shipped", Channel: DefaultChannel, EventFilters: map[string]string{"zone": "x"}}, publish(def, ups), nil},
		{"data is no attribute", Function{ID: "f", EventType: "shipped", Channel: DefaultChannel, EventFilters: map[string]string{"data": "map[a:1]"}}, publish(def, ups), nil},
		{"another channel", Function{ID: "f", EventType: "shipped", Channel: "audit"}, publish(def, ups), nil},
		{"the function's region", Function{ID: "f", EventType: "shipped", Channel: "audit", Region: "europe-west1"}, publish("projects/demo-p/locations/europe-west1/channels/audit", ups), []string{"1"}},
		{"a Pub/Sub publish", Function{ID: "f", EventType: "shipped", Channel: DefaultChannel}, publishEvent("projects/demo-p/topics/orders"), nil},
		{"an alert on the google channel", Function{ID: "f", Platform: GCFv2, EventType: alertType, EventFilters: map[string]string{"alerttype": "crashlytics.newFatalIssue"}},
			publish(GoogleChannel, fatal, billing), []string{"a1"}},
		{"google's events reach no custom channel", Function{ID: "f", EventType: alertType, Channel: DefaultChannel}, publish(GoogleChannel, fatal), nil},
		{"custom events reach no alert function", Function{ID: "f", Platform: GCFv2, EventType: alertType}, publish(def, fatal), nil},
		{"a v1 function of an unknown type takes no CloudEvent", Function{ID: "f", Platform: GCFv1, EventType: alertType}, publish(GoogleChannel, fatal), nil},
		{"a v2 Firestore function is not on the google channel", Function{ID: "f", Platform: GCFv2, EventType: "google.cloud.firestore.document.v1.created"},
			publish(GoogleChannel, map[string]any{"type": "google.cloud.firestore.document.v1.created", "id": "x"}), nil},
	} {
		ds, err := Deliveries(c.f, c.ev, testEnv)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var ids []string
		for _, d := range ds {
			ids = append(ids, decodeJSON(t, d.Payload)["id"].(string))
		}
		if !slices.Equal(ids, c.ids) {
			t.Errorf("%s: delivered %v, want %v", c.name, ids, c.ids)
		}
	}
}
