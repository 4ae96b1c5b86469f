package pubsub_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/internal/await"
	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

// ackErrText is an ack's error with the ErrorInfo the client libraries
// read on exactly-once subscriptions (reason and each ack id's verdict).
func ackErrText(err error, name func(string) string) string {
	s := errText(err)
	if ae, ok := apierror.FromError(err); ok && ae.Reason() != "" {
		var md []string
		for k, v := range ae.Metadata() {
			md = append(md, name(k)+"="+v)
		}
		sort.Strings(md)
		s += fmt.Sprintf(" [%s %s %s]", ae.Reason(), ae.Domain(), strings.Join(md, ","))
	}
	return s
}

// TestDifferentialExactlyOnce: on a subscription with exactly-once
// delivery, the client's AckWithResult succeeds for a live delivery, an
// acknowledged message is not delivered again, and acks or deadline
// changes of ack ids that are no longer outstanding (acknowledged,
// nacked, unknown) fail per ack id while the valid ones in the same
// request take effect.
func TestDifferentialExactlyOnce(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		ta, sa := c.TopicAdminClient, c.SubscriptionAdminClient
		p := "projects/diff-project"
		topic := p + "/topics/" + id("eod")
		sub := p + "/subscriptions/" + id("eod")
		var out []string
		// Ack ids differ between the servers: name them by the order
		// they were handed out.
		known := map[string]string{}
		name := func(id string) string {
			if n, ok := known[id]; ok {
				return n
			}
			return strings.ReplaceAll(id, sub, "SUB")
		}
		rec := func(what string, err error) { out = append(out, what+" -> "+ackErrText(err, name)) }
		_, err := ta.CreateTopic(ctx, &pb.Topic{Name: topic})
		rec("create topic", err)
		s, err := sa.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, EnableExactlyOnceDelivery: true, AckDeadlineSeconds: 30})
		rec("create sub", err)
		out = append(out, fmt.Sprintf("exactly once: %v", s.GetEnableExactlyOnceDelivery()))

		pub := c.Publisher(topic)
		for i := 0; i < 3; i++ {
			if _, err := pub.Publish(ctx, &pubsub.Message{Data: []byte(fmt.Sprint("m", i))}).Get(ctx); err != nil {
				t.Fatal(err)
			}
		}
		pub.Stop()
		var mu sync.Mutex
		var results []string
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		sr := c.Subscriber(sub)
		sr.ReceiveSettings.NumGoroutines = 1
		err = sr.Receive(rctx, func(ctx context.Context, m *pubsub.Message) {
			st, err := m.AckWithResult().Get(ctx)
			mu.Lock()
			defer mu.Unlock()
			results = append(results, fmt.Sprintf("%s ack status %v err %v", m.Data, st, err))
			if len(results) == 3 {
				cancel()
			}
		})
		cancel()
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		sort.Strings(results)
		out = append(out, results...)
		got, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10, ReturnImmediately: true})
		rec("pull after acks", err)
		out = append(out, fmt.Sprintf("redelivered: %d", len(got.GetReceivedMessages())))

		// Unary: a live ack id, then the same again, a nacked one and a
		// mixed request.
		if _, err := ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: []byte("a")}, {Data: []byte("b")}}}); err != nil {
			t.Fatal(err)
		}
		var ids []string
		// Pulls that return at once, for longer than the ack deadline: a
		// server that has not yet seen the cancelled stream above go may
		// lease the new messages to it, and they come back only when
		// that lease ends (a blocking Pull would wait past the test). The
		// lease is the subscription's 30 s, or what the client extended
		// it to before it saw its stream end: with exactly-once delivery
		// the Go client extends by at least a minute (a loaded CI run
		// waited past 45 s), so the pulls go on past that.
		await.Poll(100*time.Second, func() bool {
			r, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: int32(2 - len(ids)), ReturnImmediately: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range r.GetReceivedMessages() {
				known[m.GetAckId()] = fmt.Sprint("ack-", len(known))
				ids = append(ids, m.GetAckId())
			}
			return len(ids) >= 2
		})
		if len(ids) != 2 {
			t.Fatalf("pulled %d of 2 messages", len(ids))
		}
		err = sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: ids[:1], AckDeadlineSeconds: 60})
		rec("extend live", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: ids[:1]})
		rec("ack live", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: ids[:1]})
		rec("ack acked", err)
		err = sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: ids[:1], AckDeadlineSeconds: 60})
		rec("extend acked", err)
		err = sa.ModifyAckDeadline(ctx, &pb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: ids[1:], AckDeadlineSeconds: 0})
		rec("nack live", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: ids[1:]})
		rec("ack nacked", err)
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: []string{"bogus"}})
		rec("ack malformed", err)
		var again []string
		for deadline := time.Now().Add(10 * time.Second); len(again) < 1 && time.Now().Before(deadline); {
			r, err := sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range r.GetReceivedMessages() {
				known[m.GetAckId()] = fmt.Sprint("ack-", len(known))
				again = append(again, m.GetAckId())
				out = append(out, "redelivered after nack: "+string(m.GetMessage().GetData()))
			}
		}
		if len(again) == 0 {
			t.Fatal("the nacked message never came back")
		}
		err = sa.Acknowledge(ctx, &pb.AcknowledgeRequest{Subscription: sub, AckIds: []string{ids[0], again[0]}})
		rec("ack mixed", err)
		got, err = sa.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 10, ReturnImmediately: true})
		rec("pull after mixed", err)
		out = append(out, fmt.Sprintf("left: %d", len(got.GetReceivedMessages())))
		return out
	})
}

// TestExactlyOnceStreamConfirmations: Pyric confirms every ack and
// deadline change of an exactly-once StreamingPull in a response of its
// own, as production does (the official emulator only adds them to the
// next response with messages, so this is not differential).
func TestExactlyOnceStreamConfirmations(t *testing.T) {
	e, host := pubsubtest.Pyric(t, service.Env{}, engine.Options{})
	ctx := context.Background()
	if _, err := e.CreateTopic(&engine.Topic{Name: "projects/p/topics/topic"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateSubscription(&engine.Subscription{Name: "projects/p/subscriptions/sub", Topic: "projects/p/topics/topic", EnableExactlyOnceDelivery: true, AckDeadlineSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish("projects/p/topics/topic", []*engine.Message{{Data: []byte("a")}, {Data: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	st, err := pb.NewSubscriberClient(cc).StreamingPull(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&pb.StreamingPullRequest{Subscription: "projects/p/subscriptions/sub", StreamAckDeadlineSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for len(ids) < 2 {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if !r.GetSubscriptionProperties().GetExactlyOnceDeliveryEnabled() {
			t.Fatal("response does not say the subscription is exactly-once")
		}
		for _, m := range r.GetReceivedMessages() {
			ids = append(ids, m.GetAckId())
		}
	}
	bogus := "projects/p/subscriptions/sub:424242"
	if err := st.Send(&pb.StreamingPullRequest{AckIds: []string{ids[0], bogus}, ModifyDeadlineAckIds: []string{ids[1], ids[0]}, ModifyDeadlineSeconds: []int32{60, 60}}); err != nil {
		t.Fatal(err)
	}
	r, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	ac, mc := r.GetAcknowledgeConfirmation(), r.GetModifyAckDeadlineConfirmation()
	if fmt.Sprint(ac.GetAckIds(), ac.GetInvalidAckIds()) != fmt.Sprint([]string{ids[0]}, []string{bogus}) {
		t.Errorf("ack confirmation = %v", ac)
	}
	if fmt.Sprint(mc.GetAckIds(), mc.GetInvalidAckIds()) != fmt.Sprint([]string{ids[1]}, []string{ids[0]}) {
		t.Errorf("modack confirmation = %v", mc)
	}
	if len(r.GetReceivedMessages()) != 0 {
		t.Errorf("confirmation carried messages: %v", r.GetReceivedMessages())
	}
}
