package pubsub

import (
	"testing"

	"github.com/pyric/pyric/sandbox/service/servicetest"

	"github.com/pyric/pyric/sandbox/service"
)

// BenchmarkPublish publishes batches of 100 messages of 100 bytes to a
// topic with one subscription.
func BenchmarkPublish(b *testing.B) {
	e, err := NewEngine(service.Env{Bucket: servicetest.NewBucket()}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateTopic(&Topic{Name: tp}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateSubscription(&Subscription{Name: sb, Topic: tp}); err != nil {
		b.Fatal(err)
	}
	msgs := make([]*Message, 100)
	for i := range msgs {
		msgs[i] = &Message{Data: make([]byte, 100), Attributes: map[string]string{"k": "v"}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Publish(tp, msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(100 * 100)
}
