package pubsub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
)

// TestCaptureStateKeepsCountsNotMessages: what a session capture keeps of
// Pub/Sub is every configuration and each subscription's backlog, never
// the messages' content.
func TestCaptureStateKeepsCountsNotMessages(t *testing.T) {
	e, err := NewEngine(service.Env{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var _ service.Capturer = e
	if _, err := e.CreateTopic(&Topic{Name: "projects/p/topics/top"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateSubscription(&Subscription{Name: "projects/p/subscriptions/sub", Topic: "projects/p/topics/top"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.Publish("projects/p/topics/top", []*Message{{Data: []byte("secret-payload")}}); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := e.CaptureState()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "c2VjcmV0") || strings.Contains(string(raw), "secret-payload") {
		t.Errorf("the capture state holds message data: %s", raw)
	}
	var got captureOut
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.LastID != 3 || len(got.Topics) != 1 || len(got.Subscriptions) != 1 ||
		got.Subscriptions[0].Subscription.Name != "projects/p/subscriptions/sub" || got.Subscriptions[0].Backlog != 3 {
		t.Errorf("capture state: %s", raw)
	}
}
