package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
)

type pubsubListIn struct{}

type pubsubPublishIn struct {
	Topic       string            `json:"topic" jsonschema:"the topic, projects/P/topics/T"`
	Data        string            `json:"data,omitempty" jsonschema:"the message body as text (UTF-8)"`
	Attributes  map[string]string `json:"attributes,omitempty" jsonschema:"message attributes"`
	OrderingKey string            `json:"orderingKey,omitempty" jsonschema:"ordering key"`
}

type pubsubPullIn struct {
	Subscription string `json:"subscription" jsonschema:"the subscription, projects/P/subscriptions/S"`
	MaxMessages  int    `json:"maxMessages,omitempty" jsonschema:"most messages returned (default 10, at most 1000)"`
	Ack          bool   `json:"ack,omitempty" jsonschema:"true pulls and acknowledges what is returned (it is consumed); false (the default) peeks: the messages stay, unleased, for the app"`
}

type pubsubMessage struct {
	ID              string            `json:"messageId"`
	Data            string            `json:"data"`
	Attributes      map[string]string `json:"attributes,omitempty"`
	OrderingKey     string            `json:"orderingKey,omitempty"`
	PublishTime     string            `json:"publishTime"`
	DeliveryAttempt int               `json:"deliveryAttempt,omitempty"`
}

func (s *Server) addPubSubTools() {
	addTool(s, "pubsub_list", "List Pub/Sub topics with their subscriptions: configuration (push endpoint, filter, dead-letter policy, ordering) and backlog (unacknowledged messages, outstanding leases, oldest unacknowledged publish time).",
		func(ctx context.Context, in *pubsubListIn, _ []byte) *result { return s.pubsubList() })
	addTool(s, "pubsub_publish", "Publish one message to a Pub/Sub topic (as the app's publisher would); returns its message id. The topic must exist.",
		func(ctx context.Context, in *pubsubPublishIn, _ []byte) *result { return s.pubsubPublish(in) })
	addTool(s, "pubsub_pull", "Read messages of a Pub/Sub subscription. By default a peek: the oldest unacknowledged messages are returned and stay for the app. With ack: true they are pulled and acknowledged (consumed).",
		func(ctx context.Context, in *pubsubPullIn, _ []byte) *result { return s.pubsubPull(ctx, in) })
}

func (s *Server) pubsubEngine() (*pubsub.Engine, *result) {
	e, ok := sandbox.Lookup[*pubsub.Engine](s.sb)
	if !ok {
		return nil, failure("SERVICE_UNAVAILABLE", "the Pub/Sub service is not running in this sandbox", false, "start pyric with the pubsub service")
	}
	return e, nil
}

func pubsubFailure(err error) *result {
	var pe *pubsub.Error
	if errors.As(err, &pe) {
		code := pubsub.Code(err)
		recoverable := code.String() == "InvalidArgument" || code.String() == "NotFound" || code.String() == "AlreadyExists"
		return failure(codeName(code.String()), pe.Msg, recoverable, "check the names with pubsub_list")
	}
	return failure("INTERNAL", err.Error(), false, "")
}

// codeName turns a gRPC code's Go name (NotFound) into its google.rpc
// name (NOT_FOUND).
func codeName(c string) string {
	var b []byte
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if ch >= 'A' && ch <= 'Z' && i > 0 {
			b = append(b, '_')
		}
		if ch >= 'a' && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		b = append(b, ch)
	}
	return string(b)
}

func (s *Server) pubsubList() *result {
	e, fail := s.pubsubEngine()
	if fail != nil {
		return fail
	}
	v := e.Overview()
	subs := 0
	for _, t := range v {
		subs += len(t.Subscriptions)
	}
	return okResult(fmt.Sprintf("%d topics, %d subscriptions", len(v), subs), map[string]any{"topics": v})
}

func (s *Server) pubsubPublish(in *pubsubPublishIn) *result {
	e, fail := s.pubsubEngine()
	if fail != nil {
		return fail
	}
	ids, err := e.Publish(in.Topic, []*pubsub.Message{{Data: []byte(in.Data), Attributes: in.Attributes, OrderingKey: in.OrderingKey}})
	if err != nil {
		return pubsubFailure(err)
	}
	return okResult("published message "+ids[0]+" to "+in.Topic, map[string]any{"messageId": ids[0]})
}

func (s *Server) pubsubPull(ctx context.Context, in *pubsubPullIn) *result {
	e, fail := s.pubsubEngine()
	if fail != nil {
		return fail
	}
	n := in.MaxMessages
	if n == 0 {
		n = 10
	}
	if n < 1 || n > pubsub.MaxPullMessages {
		return invalid("maxMessages: want 1 to %d, got %d", pubsub.MaxPullMessages, n)
	}
	var out []pubsubMessage
	conv := func(m *pubsub.Message, attempt int) pubsubMessage {
		return pubsubMessage{ID: m.ID, Data: string(m.Data), Attributes: m.Attributes, OrderingKey: m.OrderingKey,
			PublishTime: m.PublishTime.UTC().Format("2006-01-02T15:04:05.000000Z"), DeliveryAttempt: attempt}
	}
	if !in.Ack {
		msgs, err := e.Peek(in.Subscription, n)
		if err != nil {
			return pubsubFailure(err)
		}
		for _, m := range msgs {
			out = append(out, conv(m, 0))
		}
		return okResult(fmt.Sprintf("%d messages (peeked, left unacknowledged)", len(out)), map[string]any{"messages": out})
	}
	got, err := e.Pull(ctx, in.Subscription, n, true)
	if err != nil {
		return pubsubFailure(err)
	}
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.AckID
		out = append(out, conv(r.Message, r.DeliveryAttempt))
	}
	if len(ids) > 0 {
		if err := e.Acknowledge(in.Subscription, ids); err != nil {
			return pubsubFailure(err)
		}
	}
	return okResult(fmt.Sprintf("%d messages pulled and acknowledged", len(out)), map[string]any{"messages": out})
}
