package pubsub_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

// TestKill9ConcurrentPublishers kills `pyric serve` with SIGKILL while
// 16 publishers publish, restarts it on the same data directory and
// checks that every publish the server acknowledged is delivered, that
// acknowledged deliveries do not come back, and that configuration
// survived.
// conformance: pubsub.durability.kill9
func TestKill9ConcurrentPublishers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pyric serve")
	}
	dir := t.TempDir()
	ctx := context.Background()
	srv := e2etest.StartServe(t, dir, "--data-dir", dir+"/data")
	c := pubsubtest.Client(t, srv.PubSub, "crash")
	topic, sub := "projects/crash/topics/events", "projects/crash/subscriptions/events-sub"
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	// Ten messages delivered and acknowledged before the crash must not
	// come back after it.
	var pre []*pb.PubsubMessage
	for i := range 10 {
		pre = append(pre, &pb.PubsubMessage{Data: fmt.Appendf(nil, "pre-%d", i)})
	}
	if _, err := c.TopicAdminClient.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: pre}); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	for len(acked) < 10 {
		r, err := c.SubscriptionAdminClient.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range r.ReceivedMessages {
			acked[string(m.Message.Data)] = true
			ids = append(ids, m.AckId)
		}
		if err := c.SubscriptionAdminClient.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	confirmed := map[string]bool{}
	var wg sync.WaitGroup
	pctx, stop := context.WithCancel(ctx)
	for w := range 16 {
		wg.Go(func() {
			for i := 0; pctx.Err() == nil; i++ {
				d := fmt.Sprintf("w%d-%d", w, i)
				_, err := c.TopicAdminClient.Publish(pctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: []byte(d), OrderingKey: fmt.Sprint(w)}}})
				if err != nil {
					return
				}
				mu.Lock()
				confirmed[d] = true
				mu.Unlock()
			}
		})
	}
	// Kill it mid-stream, once enough publishes were confirmed for the
	// test to prove something (with more in flight).
	await.Until(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(confirmed) >= 200
	}, "200 publishes confirmed before the kill")
	srv.Kill()
	stop()
	wg.Wait()

	srv2 := e2etest.StartServe(t, dir, "--data-dir", dir+"/data")
	c2 := pubsubtest.Client(t, srv2.PubSub, "crash")
	if s, err := c2.SubscriptionAdminClient.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: sub}); err != nil || s.AckDeadlineSeconds != 10 {
		t.Fatalf("subscription after restart: %v, %v", s, err)
	}
	got := map[string]bool{}
	for {
		r, err := c2.SubscriptionAdminClient.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 1000, ReturnImmediately: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.ReceivedMessages) == 0 {
			break
		}
		var ids []string
		for _, m := range r.ReceivedMessages {
			got[string(m.Message.Data)] = true
			ids = append(ids, m.AckId)
		}
		if err := c2.SubscriptionAdminClient.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
			t.Fatal(err)
		}
	}
	lost := 0
	for d := range confirmed {
		if !got[d] {
			lost++
			if lost < 5 {
				t.Errorf("acknowledged publish %q lost", d)
			}
		}
	}
	for d := range acked {
		if got[d] {
			t.Errorf("acknowledged delivery %q came back", d)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged publishes lost", lost, len(confirmed))
	}
	t.Logf("%d acknowledged publishes before kill -9, all delivered after restart (%d delivered, unconfirmed ones included)", len(confirmed), len(got))
}
