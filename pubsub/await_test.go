package pubsub

import (
	"errors"
	"testing"
	"time"

	"github.com/pyric/pyric/sandbox/service"
)

// TestPublishAwaitsTopics: while the topics functions create are not made
// yet (AwaitTopics), a publish to a missing topic waits for them and then
// reaches the topic; once ready, a missing topic is NOT_FOUND at once.
func TestPublishAwaitsTopics(t *testing.T) {
	e := newEngine(t, service.Env{}, Options{})
	const topic = "projects/p/topics/fn-topic"
	ready := make(chan struct{})
	e.AwaitTopics(ready)
	type result struct {
		ids []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		ids, err := e.Publish(topic, []*Message{{Data: []byte("early")}})
		done <- result{ids, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the publish did not wait for the topics: %v %v", r.ids, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := e.CreateTopic(&Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetTopic(topic); err != nil {
		t.Fatalf("get of the created topic: %v", err)
	}
	close(ready)
	if r := <-done; r.err != nil || len(r.ids) != 1 {
		t.Fatalf("publish during the load: %v %v", r.ids, r.err)
	}
	start := time.Now()
	_, err := e.Publish("projects/p/topics/none", []*Message{{Data: []byte("x")}})
	if !errors.Is(err, errTopicNotFound) {
		t.Fatalf("publish to a missing topic once ready: %v", err)
	}
	if _, err := e.GetTopic("projects/p/topics/none"); !errors.Is(err, errTopicNotFound) {
		t.Fatalf("get of a missing topic once ready: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a missing topic once ready waited %v", d)
	}
}
