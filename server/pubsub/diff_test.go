package pubsub_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pyric/pyric/internal/await"
	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pubsubtest.StopAll()
	os.Exit(code)
}

// target is one server under test: Pyric or the official emulator.
type target struct {
	name string
	host string
}

// targets returns Pyric (in memory) and the official emulator.
func targets(t *testing.T) []target {
	t.Helper()
	_, host := pubsubtest.Pyric(t, service.Env{}, engine.Options{})
	em := pubsubtest.Official(t)
	return []target{{"pyric", host}, {"emulator", em.Host}}
}

var uniq struct {
	sync.Mutex
	n int
}

// unique makes names unique across tests sharing the emulator.
func unique(prefix string) string {
	uniq.Lock()
	defer uniq.Unlock()
	uniq.n++
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e9, uniq.n)
}

func errText(err error) string {
	if err == nil {
		return "OK"
	}
	st, _ := status.FromError(err)
	return st.Code().String() + ": " + st.Message()
}

// differential runs fn against both servers with a gRPC client each
// and compares the transcripts line by line.
func differential(t *testing.T, fn func(t *testing.T, c *pubsub.Client, ids func(string) string) []string) {
	t.Helper()
	compareTargets(t, func(tg target, suffix string) []string {
		c := pubsubtest.Client(t, tg.host, "diff-project")
		return fn(t, c, func(s string) string { return s + "-" + suffix })
	})
}

// compareTargets runs run against each target (given a suffix unique to
// that run, to make its names with) and compares the transcripts line by
// line: each differential test, gRPC or REST, starts the servers and
// compares their answers here.
func compareTargets(t *testing.T, run func(tg target, suffix string) []string) {
	t.Helper()
	var got [][]string
	var names []string
	for _, tg := range targets(t) {
		got = append(got, run(tg, unique("r")))
		names = append(names, tg.name)
	}
	a, b := got[0], got[1]
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			t.Errorf("line %d differs:\n  %s: %s\n  %s: %s", i, names[0], x, names[1], y)
		}
	}
	if len(a) == 0 {
		t.Fatal("empty transcript")
	}
	t.Logf("%d lines agree", len(a))
}

func TestDifferentialErrors(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		ta, sa := c.TopicAdminClient, c.SubscriptionAdminClient
		p := "projects/diff-project"
		topic := p + "/topics/" + id("topic")
		sub := p + "/subscriptions/" + id("sub")
		var out []string
		rec := func(what string, err error) { out = append(out, what+" -> "+errText(err)) }
		_, err := ta.CreateTopic(ctx, &pb.Topic{Name: topic})
		rec("create topic", err)
		_, err = ta.CreateTopic(ctx, &pb.Topic{Name: topic})
		rec("create topic again", err)
		_, err = ta.CreateTopic(ctx, &pb.Topic{Name: p + "/topics/x"})
		out = append(out, "create short topic -> "+strings.ReplaceAll(errText(err), p, "P"))
		_, err = ta.CreateTopic(ctx, &pb.Topic{Name: p + "/topics/goog-topic"})
		out = append(out, "create goog topic -> "+strings.ReplaceAll(errText(err), p, "P"))
		_, err = ta.GetTopic(ctx, &pb.GetTopicRequest{Topic: topic + "-missing"})
		rec("get missing topic", err)
		_, err = ta.Publish(ctx, &pb.PublishRequest{Topic: topic + "-missing", Messages: []*pb.PubsubMessage{{Data: []byte("x")}}})
		rec("publish missing topic", err)
		_, err = ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{}}})
		rec("publish empty message", err)
		_, err = ta.Publish(ctx, &pb.PublishRequest{Topic: topic})
		rec("publish nothing", err)
		_, err = sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic + "-missing"})
		rec("create sub of missing topic", err)
		_, err = sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 700})
		rec("create sub deadline 700", err)
		_, err = sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic})
		rec("create sub", err)
		_, err = sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic})
		rec("create sub again", err)
		_, err = sa.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: sub + "-missing"})
		rec("get missing sub", err)
		_, err = sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 0})
		rec("pull max 0", err)
		_, err = sa.Pull(ctx, &pb.PullRequest{Subscription: sub + "-missing", MaxMessages: 1})
		rec("pull missing sub", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: []string{"bogus"}})
		rec("ack bogus", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub})
		rec("ack nothing", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: []string{sub + ":99999"}})
		rec("ack unknown", err)
		err = sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: []string{sub + ":1"}, AckDeadlineSeconds: -1})
		rec("modack negative", err)
		_, err = sa.GetSnapshot(ctx, &pb.GetSnapshotRequest{Snapshot: p + "/snapshots/" + id("snap")})
		rec("get missing snapshot", err)
		_, err = sa.CreateSnapshot(ctx, &pb.CreateSnapshotRequest{Name: p + "/snapshots/" + id("snap"), Subscription: sub + "-missing"})
		rec("snapshot of missing sub", err)
		_, err = sa.Seek(ctx, &pb.SeekRequest{Subscription: sub, Target: &pb.SeekRequest_Snapshot{Snapshot: p + "/snapshots/" + id("snap")}})
		rec("seek missing snapshot", err)
		_, err = sa.UpdateSubscription(ctx, &pb.UpdateSubscriptionRequest{Subscription: &pb.Subscription{Name: sub, AckDeadlineSeconds: 30}})
		_ = err // the emulator and production differ on an empty mask
		err = ta.DeleteTopic(ctx, &pb.DeleteTopicRequest{Topic: topic})
		rec("delete topic", err)
		s, err := sa.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: sub})
		rec("get orphan sub", err)
		out = append(out, "orphan topic: "+s.GetTopic())
		err = sa.DeleteSubscription(ctx, &pb.DeleteSubscriptionRequest{Subscription: sub})
		rec("delete sub", err)
		err = sa.DeleteSubscription(ctx, &pb.DeleteSubscriptionRequest{Subscription: sub})
		rec("delete sub again", err)
		return out
	})
}

// receiveAll runs a Subscriber until want messages arrived or the
// timeout, calling handle for each (it acks or nacks).
func receiveAll(t *testing.T, c *pubsub.Client, sub string, want int, timeout time.Duration, settings func(*pubsub.ReceiveSettings), handle func(*pubsub.Message) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s := c.Subscriber(sub)
	s.ReceiveSettings.NumGoroutines = 1
	if settings != nil {
		settings(&s.ReceiveSettings)
	}
	var mu sync.Mutex
	n := 0
	err := s.Receive(ctx, func(_ context.Context, m *pubsub.Message) {
		mu.Lock()
		defer mu.Unlock()
		if handle(m) {
			m.Ack()
			n++
			if n >= want {
				cancel()
			}
		} else {
			m.Nack()
		}
	})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if n < want {
		t.Fatalf("received %d of %d messages before the timeout", n, want)
	}
}

func TestDifferentialPublishReceiveOrdering(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		p := "projects/diff-project"
		topic := p + "/topics/" + id("otopic")
		sub := p + "/subscriptions/" + id("osub")
		if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, EnableMessageOrdering: true}); err != nil {
			t.Fatal(err)
		}
		pub := c.Publisher(topic)
		pub.EnableMessageOrdering = true
		defer pub.Stop()
		const keys, per = 4, 50
		var results []*pubsub.PublishResult
		for i := 0; i < per; i++ {
			for k := 0; k < keys; k++ {
				results = append(results, pub.Publish(ctx, &pubsub.Message{Data: fmt.Appendf(nil, "%d", i),
					OrderingKey: fmt.Sprintf("key-%d", k), Attributes: map[string]string{"i": fmt.Sprint(i), "k": fmt.Sprint(k)}}))
			}
		}
		for _, r := range results {
			if _, err := r.Get(ctx); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string][]string{}
		receiveAll(t, c, sub, keys*per, 60*time.Second, nil, func(m *pubsub.Message) bool {
			got[m.OrderingKey] = append(got[m.OrderingKey], string(m.Data))
			return true
		})
		var out []string
		for _, k := range slices.Sorted(mapsKeys(got)) {
			// Redeliveries may repeat messages already acked; what
			// must hold is each key's order of first appearance.
			seen := map[string]bool{}
			var order []string
			for _, d := range got[k] {
				if !seen[d] {
					seen[d] = true
					order = append(order, d)
				}
			}
			ok := len(order) == per
			for i := range order {
				ok = ok && order[i] == fmt.Sprint(i)
			}
			if !ok {
				t.Logf("%s: %v", k, got[k])
			}
			out = append(out, fmt.Sprintf("%s: %d distinct, in order %v", k, len(order), ok))
		}
		return out
	})
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestDifferentialPullAckModack(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		p := "projects/diff-project"
		topic := p + "/topics/" + id("ptopic")
		sub := p + "/subscriptions/" + id("psub")
		ta, sa := c.TopicAdminClient, c.SubscriptionAdminClient
		if _, err := ta.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 10}); err != nil {
			t.Fatal(err)
		}
		var out []string
		res, err := ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{
			{Data: []byte("a"), Attributes: map[string]string{"x": "1"}}, {Data: []byte("b")}, {Attributes: map[string]string{"only": "attrs"}}}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("published %d ids, decimal %v", len(res.MessageIds), allDecimal(res.MessageIds)))
		pullNow := func() []*pb.ReceivedMessage {
			r, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10, ReturnImmediately: true})
			if err != nil {
				t.Fatal(err)
			}
			return r.ReceivedMessages
		}
		show := func(what string, ms []*pb.ReceivedMessage) []*pb.ReceivedMessage {
			var ds []string
			for _, m := range ms {
				ds = append(ds, fmt.Sprintf("%q%v attempt=%d ackid-ok=%v", m.Message.Data, m.Message.Attributes, m.DeliveryAttempt,
					strings.HasPrefix(m.AckId, sub+":")))
			}
			sort.Strings(ds)
			out = append(out, fmt.Sprintf("%s: %d %v", what, len(ds), ds))
			return ms
		}
		pull := func(what string) []*pb.ReceivedMessage { return show(what, pullNow()) }
		got := pull("first pull")
		pull("pull while leased")
		// Nack "a", extend "b", let the third expire after 1 s.
		var a, b, third string
		for _, m := range got {
			switch string(m.Message.Data) {
			case "a":
				a = m.AckId
			case "b":
				b = m.AckId
			default:
				third = m.AckId
			}
		}
		if err := sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: []string{a}, AckDeadlineSeconds: 0}); err != nil {
			t.Fatal(err)
		}
		if err := sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: []string{third}, AckDeadlineSeconds: 1}); err != nil {
			t.Fatal(err)
		}
		_ = b
		got = pull("after nack")
		// The third's 1 s deadline running out is what is tested: wait
		// for its redelivery, however long each server takes to notice.
		var got2 []*pb.ReceivedMessage
		await.Poll(10*time.Second, func() bool { got2 = pullNow(); return len(got2) > 0 })
		show("after expiry", got2)
		var ids []string
		for _, m := range append(got, got2...) {
			ids = append(ids, m.AckId)
		}
		if err := sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: append(ids, b)}); err != nil {
			t.Fatal(err)
		}
		pull("after ack")
		return out
	})
}

func allDecimal(ids []string) bool {
	for _, id := range ids {
		if id == "" || strings.Trim(id, "0123456789") != "" {
			return false
		}
	}
	return true
}

// conformance: pubsub.dead-letter
func TestDifferentialDeadLetter(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		p := "projects/diff-project"
		topic := p + "/topics/" + id("dtopic")
		dlq := p + "/topics/" + id("dlq")
		sub := p + "/subscriptions/" + id("dsub")
		dsub := p + "/subscriptions/" + id("dlqsub")
		ta, sa := c.TopicAdminClient, c.SubscriptionAdminClient
		for _, n := range []string{topic, dlq} {
			if _, err := ta.CreateTopic(ctx, &pb.Topic{Name: n}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sa.CreateSubscription(ctx, &pb.Subscription{Name: dsub, Topic: dlq}); err != nil {
			t.Fatal(err)
		}
		if _, err := sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic,
			DeadLetterPolicy: &pb.DeadLetterPolicy{DeadLetterTopic: dlq, MaxDeliveryAttempts: 5}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: []byte("poison"), Attributes: map[string]string{"a": "b"}}}}); err != nil {
			t.Fatal(err)
		}
		var out []string
		for attempt := 0; attempt < 5; attempt++ {
			var r *pb.PullResponse
			await.Poll(10*time.Second, func() bool {
				var err error
				r, err = sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10, ReturnImmediately: true})
				if err != nil {
					t.Fatal(err)
				}
				return len(r.ReceivedMessages) > 0
			})
			for _, m := range r.ReceivedMessages {
				out = append(out, fmt.Sprintf("delivery %q attempt %d", m.Message.Data, m.DeliveryAttempt))
				if err := sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: []string{m.AckId}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The emulator forwards a message that used its attempts at the
		// subscription's next pull; production (and Pyric) at once.
		r0, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10, ReturnImmediately: true})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("sixth pull: %d", len(r0.ReceivedMessages)))
		var dead []*pb.ReceivedMessage
		await.Poll(15*time.Second, func() bool {
			r, err := sa.Pull(ctx, &pb.PullRequest{Subscription: dsub, MaxMessages: 10, ReturnImmediately: true})
			if err != nil {
				t.Fatal(err)
			}
			dead = r.ReceivedMessages
			return len(dead) > 0
		})
		for _, m := range dead {
			var keys []string
			for k, v := range m.Message.Attributes {
				switch k {
				case "CloudPubSubDeadLetterSourceTopicPublishTime":
					v = "<time>"
				case "CloudPubSubDeadLetterSourceSubscription":
					v = strings.TrimSuffix(v, id(""))
				}
				keys = append(keys, k+"="+v)
			}
			sort.Strings(keys)
			out = append(out, fmt.Sprintf("dead letter %q %v", m.Message.Data, keys))
		}
		r, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10, ReturnImmediately: true})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("left on the subscription: %d", len(r.ReceivedMessages)))
		return out
	})
}

func TestDifferentialSnapshotSeek(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		p := "projects/diff-project"
		topic := p + "/topics/" + id("stopic")
		sub := p + "/subscriptions/" + id("ssub")
		snap := p + "/snapshots/" + id("snap")
		ta, sa := c.TopicAdminClient, c.SubscriptionAdminClient
		if _, err := ta.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, RetainAckedMessages: true,
			MessageRetentionDuration: durationpb.New(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		publish := func(d string) {
			if _, err := ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: []byte(d)}}}); err != nil {
				t.Fatal(err)
			}
		}
		var out []string
		drain := func(what string) {
			var ds []string
			for {
				r, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 100, ReturnImmediately: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(r.ReceivedMessages) == 0 {
					break
				}
				var ids []string
				for _, m := range r.ReceivedMessages {
					ds = append(ds, string(m.Message.Data))
					ids = append(ids, m.AckId)
				}
				if err := sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
					t.Fatal(err)
				}
			}
			sort.Strings(ds)
			out = append(out, fmt.Sprintf("%s: %v", what, ds))
		}
		publish("m1")
		publish("m2")
		s, err := sa.CreateSnapshot(ctx, &pb.CreateSnapshotRequest{Name: snap, Subscription: sub})
		out = append(out, "create snapshot -> "+errText(err))
		out = append(out, "snapshot topic ok: "+fmt.Sprint(s.GetTopic() == topic))
		publish("m3")
		drain("drain 1")
		_, err = sa.Seek(ctx, &pb.SeekRequest{Subscription: sub, Target: &pb.SeekRequest_Snapshot{Snapshot: snap}})
		out = append(out, "seek snapshot -> "+errText(err))
		drain("after seek to snapshot")
		// Seeking to a time between two publishes is what is tested:
		// leave a gap on each side of it wider than the servers' clock
		// resolution, so m3 is before mid and m4 after on both.
		time.Sleep(20 * time.Millisecond)
		mid := time.Now()
		time.Sleep(20 * time.Millisecond)
		publish("m4")
		drain("drain 2")
		_, err = sa.Seek(ctx, &pb.SeekRequest{Subscription: sub, Target: &pb.SeekRequest_Time{Time: timestamppbNew(mid)}})
		out = append(out, "seek time -> "+errText(err))
		drain("after seek to time")
		_, err = sa.Seek(ctx, &pb.SeekRequest{Subscription: sub, Target: &pb.SeekRequest_Time{Time: timestamppbNew(mid.Add(-time.Hour))}})
		out = append(out, "seek far back -> "+errText(err))
		drain("after seek far back")
		err = sa.DeleteSnapshot(ctx, &pb.DeleteSnapshotRequest{Snapshot: snap})
		out = append(out, "delete snapshot -> "+errText(err))
		return out
	})
}
