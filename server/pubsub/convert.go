package pubsub

import (
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/pubsub"
)

func topicIn(t *pb.Topic) *pubsub.Topic {
	out := &pubsub.Topic{Name: t.GetName(), Labels: t.GetLabels(), KMSKeyName: t.GetKmsKeyName(),
		MessageRetentionDuration: dur(t.GetMessageRetentionDuration())}
	if ss := t.GetSchemaSettings(); ss != nil {
		out.SchemaSettings = &pubsub.SchemaSettings{Schema: ss.GetSchema(), Encoding: encodingIn(ss.GetEncoding()),
			FirstRevisionID: ss.GetFirstRevisionId(), LastRevisionID: ss.GetLastRevisionId()}
	}
	return out
}

func topicOut(t *pubsub.Topic) *pb.Topic {
	out := &pb.Topic{Name: t.Name, Labels: t.Labels, KmsKeyName: t.KMSKeyName}
	if ss := t.SchemaSettings; ss != nil {
		out.SchemaSettings = &pb.SchemaSettings{Schema: ss.Schema, Encoding: pb.Encoding(pb.Encoding_value[ss.Encoding]),
			FirstRevisionId: ss.FirstRevisionID, LastRevisionId: ss.LastRevisionID}
	}
	if t.MessageRetentionDuration > 0 {
		out.MessageRetentionDuration = durationpb.New(t.MessageRetentionDuration)
	}
	return out
}

func dur(d *durationpb.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.AsDuration()
}

func subIn(s *pb.Subscription) *pubsub.Subscription {
	out := &pubsub.Subscription{
		Name: s.GetName(), Topic: s.GetTopic(), AckDeadlineSeconds: int(s.GetAckDeadlineSeconds()),
		RetainAckedMessages: s.GetRetainAckedMessages(), MessageRetentionDuration: dur(s.GetMessageRetentionDuration()),
		Labels: s.GetLabels(), EnableMessageOrdering: s.GetEnableMessageOrdering(), Filter: s.GetFilter(),
		Detached: s.GetDetached(), EnableExactlyOnceDelivery: s.GetEnableExactlyOnceDelivery(),
	}
	if p := s.GetPushConfig(); p != nil && p.GetPushEndpoint() != "" {
		out.Push = pushIn(p)
	}
	if x := s.GetExpirationPolicy(); x != nil {
		d := dur(x.GetTtl())
		out.Expiration = &d
	}
	if d := s.GetDeadLetterPolicy(); d != nil {
		out.DeadLetter = &pubsub.DeadLetterPolicy{Topic: d.GetDeadLetterTopic(), MaxDeliveryAttempts: int(d.GetMaxDeliveryAttempts())}
	}
	if r := s.GetRetryPolicy(); r != nil {
		out.Retry = &pubsub.RetryPolicy{MinimumBackoff: dur(r.GetMinimumBackoff()), MaximumBackoff: dur(r.GetMaximumBackoff())}
	}
	return out
}

func pushIn(p *pb.PushConfig) *pubsub.PushConfig {
	out := &pubsub.PushConfig{Endpoint: p.GetPushEndpoint(), Attributes: p.GetAttributes()}
	if nw := p.GetNoWrapper(); nw != nil {
		out.NoWrapper, out.WriteMetadata = true, nw.GetWriteMetadata()
	}
	if o := p.GetOidcToken(); o != nil {
		out.OIDCServiceAccount, out.OIDCAudience = o.GetServiceAccountEmail(), o.GetAudience()
	}
	return out
}

func subOut(s *pubsub.Subscription) *pb.Subscription {
	out := &pb.Subscription{
		Name: s.Name, Topic: s.Topic, AckDeadlineSeconds: int32(s.AckDeadlineSeconds), RetainAckedMessages: s.RetainAckedMessages,
		MessageRetentionDuration: durationpb.New(s.MessageRetentionDuration), Labels: s.Labels,
		EnableMessageOrdering: s.EnableMessageOrdering, Filter: s.Filter, Detached: s.Detached,
		EnableExactlyOnceDelivery: s.EnableExactlyOnceDelivery, PushConfig: &pb.PushConfig{},
	}
	if p := s.Push; p != nil {
		out.PushConfig = &pb.PushConfig{PushEndpoint: p.Endpoint, Attributes: p.Attributes}
		if p.NoWrapper {
			out.PushConfig.Wrapper = &pb.PushConfig_NoWrapper_{NoWrapper: &pb.PushConfig_NoWrapper{WriteMetadata: p.WriteMetadata}}
		}
		if p.OIDCServiceAccount != "" || p.OIDCAudience != "" {
			out.PushConfig.AuthenticationMethod = &pb.PushConfig_OidcToken_{OidcToken: &pb.PushConfig_OidcToken{ServiceAccountEmail: p.OIDCServiceAccount, Audience: p.OIDCAudience}}
		}
	}
	if s.Expiration != nil {
		out.ExpirationPolicy = &pb.ExpirationPolicy{}
		if *s.Expiration > 0 {
			out.ExpirationPolicy.Ttl = durationpb.New(*s.Expiration)
		}
	}
	if d := s.DeadLetter; d != nil {
		out.DeadLetterPolicy = &pb.DeadLetterPolicy{DeadLetterTopic: d.Topic, MaxDeliveryAttempts: int32(d.MaxDeliveryAttempts)}
	}
	if r := s.Retry; r != nil {
		out.RetryPolicy = &pb.RetryPolicy{MinimumBackoff: durationpb.New(r.MinimumBackoff), MaximumBackoff: durationpb.New(r.MaximumBackoff)}
	}
	return out
}

func snapOut(s *pubsub.Snapshot) *pb.Snapshot {
	return &pb.Snapshot{Name: s.Name, Topic: s.Topic, ExpireTime: timestamppb.New(s.Expire), Labels: s.Labels}
}

// messagesIn converts a publish's messages, allocated at once.
func messagesIn(ms []*pb.PubsubMessage) []*pubsub.Message {
	out := make([]*pubsub.Message, len(ms))
	in := make([]pubsub.Message, len(ms))
	for i, m := range ms {
		in[i] = pubsub.Message{Data: m.GetData(), Attributes: m.GetAttributes(), OrderingKey: m.GetOrderingKey()}
		out[i] = &in[i]
	}
	return out
}

func messageOut(m *pubsub.Message) *pb.PubsubMessage {
	return &pb.PubsubMessage{MessageId: m.ID, Data: m.Data, Attributes: m.Attributes, OrderingKey: m.OrderingKey,
		PublishTime: timestamppb.New(m.PublishTime)}
}

// receivedOut converts a batch of deliveries; a stream sends up to a
// thousand at once, so each kind of message is allocated once per batch.
func receivedOut(rs []pubsub.Received) []*pb.ReceivedMessage {
	out := make([]*pb.ReceivedMessage, len(rs))
	recv := make([]pb.ReceivedMessage, len(rs))
	msgs := make([]pb.PubsubMessage, len(rs))
	times := make([]timestamppb.Timestamp, len(rs))
	for i, r := range rs {
		m, t := &msgs[i], &times[i]
		t.Seconds, t.Nanos = r.Message.PublishTime.Unix(), int32(r.Message.PublishTime.Nanosecond())
		m.MessageId, m.Data, m.Attributes, m.OrderingKey, m.PublishTime = r.Message.ID, r.Message.Data, r.Message.Attributes, r.Message.OrderingKey, t
		x := &recv[i]
		x.AckId, x.Message, x.DeliveryAttempt = r.AckID, m, int32(r.DeliveryAttempt)
		out[i] = x
	}
	return out
}

// encodingIn is an encoding's engine name; "" when unspecified.
func encodingIn(e pb.Encoding) string {
	if e == pb.Encoding_ENCODING_UNSPECIFIED {
		return ""
	}
	return e.String()
}

// schemaTypeIn is a schema type's engine name; "" when unspecified.
func schemaTypeIn(t pb.Schema_Type) string {
	if t == pb.Schema_TYPE_UNSPECIFIED {
		return ""
	}
	return t.String()
}

func schemaIn(s *pb.Schema) *pubsub.Schema {
	return &pubsub.Schema{Name: s.GetName(), Type: schemaTypeIn(s.GetType()), Definition: s.GetDefinition()}
}

func schemaOut(s *pubsub.Schema) *pb.Schema {
	return &pb.Schema{Name: s.Name, Type: pb.Schema_Type(pb.Schema_Type_value[s.Type]), Definition: s.Definition,
		RevisionId: s.RevisionID, RevisionCreateTime: timestamppb.New(s.RevisionCreateTime)}
}
