package pubsub

import (
	"context"
	"errors"
	"io"
	"sync"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pyric/pyric/pubsub"
)

// Server serves the google.pubsub.v1 API over an Engine.
type Server struct {
	e *pubsub.Engine

	mu      sync.Mutex
	streams map[*pubsub.Stream]context.CancelFunc
	closed  bool
}

// New returns a Server for e.
func New(e *pubsub.Engine) *Server {
	return &Server{e: e, streams: map[*pubsub.Stream]context.CancelFunc{}}
}

// Engine is the server's engine.
func (s *Server) Engine() *pubsub.Engine { return s.e }

// Register adds the Publisher, Subscriber and SchemaService services to g.
func (s *Server) Register(g *grpc.Server) {
	pb.RegisterPublisherServer(g, publisher{s})
	pb.RegisterSubscriberServer(g, subscriber{s})
	pb.RegisterSchemaServiceServer(g, schemas{s: s})
}

// Drain ends every open StreamingPull (clients reconnect), so a graceful
// shutdown is not held by them.
func (s *Server) Drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, cancel := range s.streams {
		cancel()
	}
}

// grpcErr is the one mapping from engine errors to gRPC statuses.
func grpcErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	var ackErr *pubsub.AckIDsError
	if errors.As(err, &ackErr) {
		return ackIDsStatus(ackErr.Invalid)
	}
	if _, ok := status.FromError(err); ok && !isEngineErr(err) {
		return err
	}
	return status.Error(pubsub.Code(err), err.Error())
}

// ackIDsStatus is the exactly-once failure of ack ids: INVALID_ARGUMENT
// with an ErrorInfo naming each (the official emulator's and
// production's shape; the client libraries read the metadata to settle
// each ack's result).
func ackIDsStatus(invalid []string) error {
	md := make(map[string]string, len(invalid))
	for _, id := range invalid {
		md[id] = "PERMANENT_FAILURE_INVALID_ACK_ID"
	}
	st, err := status.New(codes.InvalidArgument, "").WithDetails(&errdetails.ErrorInfo{
		Reason: "EXACTLY_ONCE_ACKID_FAILURE", Domain: "pubsub.googleapis.com", Metadata: md})
	if err != nil {
		return status.Error(codes.InvalidArgument, "")
	}
	return st.Err()
}

func isEngineErr(err error) bool {
	var e *pubsub.Error
	return errors.As(err, &e)
}

func projectOf(name string) (string, error) {
	const pfx = "projects/"
	if len(name) <= len(pfx) || name[:len(pfx)] != pfx {
		return "", status.Errorf(codes.InvalidArgument, "Invalid [projects] name: (name=%s)", name)
	}
	p := name[len(pfx):]
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			return "", status.Errorf(codes.InvalidArgument, "Invalid [projects] name: (name=%s)", name)
		}
	}
	return p, nil
}

type publisher struct{ s *Server }

func (p publisher) CreateTopic(_ context.Context, t *pb.Topic) (*pb.Topic, error) {
	out, err := p.s.e.CreateTopic(topicIn(t))
	if err != nil {
		return nil, grpcErr(err)
	}
	return topicOut(out), nil
}

func (p publisher) UpdateTopic(_ context.Context, r *pb.UpdateTopicRequest) (*pb.Topic, error) {
	if r.GetTopic() == nil {
		return nil, status.Error(codes.InvalidArgument, "No topic provided in the UpdateTopicRequest.")
	}
	out, err := p.s.e.UpdateTopic(topicIn(r.GetTopic()), r.GetUpdateMask().GetPaths())
	if err != nil {
		return nil, grpcErr(err)
	}
	return topicOut(out), nil
}

func (p publisher) Publish(_ context.Context, r *pb.PublishRequest) (*pb.PublishResponse, error) {
	ids, err := p.s.e.Publish(r.GetTopic(), messagesIn(r.GetMessages()))
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.PublishResponse{MessageIds: ids}, nil
}

func (p publisher) GetTopic(_ context.Context, r *pb.GetTopicRequest) (*pb.Topic, error) {
	out, err := p.s.e.GetTopic(r.GetTopic())
	if err != nil {
		return nil, grpcErr(err)
	}
	return topicOut(out), nil
}

func (p publisher) ListTopics(_ context.Context, r *pb.ListTopicsRequest) (*pb.ListTopicsResponse, error) {
	project, err := projectOf(r.GetProject())
	if err != nil {
		return nil, err
	}
	ts, next := p.s.e.ListTopics(project, int(r.GetPageSize()), r.GetPageToken())
	out := &pb.ListTopicsResponse{NextPageToken: next}
	for _, t := range ts {
		out.Topics = append(out.Topics, topicOut(t))
	}
	return out, nil
}

func (p publisher) ListTopicSubscriptions(_ context.Context, r *pb.ListTopicSubscriptionsRequest) (*pb.ListTopicSubscriptionsResponse, error) {
	names, next, err := p.s.e.ListTopicSubscriptions(r.GetTopic(), int(r.GetPageSize()), r.GetPageToken())
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.ListTopicSubscriptionsResponse{Subscriptions: names, NextPageToken: next}, nil
}

func (p publisher) ListTopicSnapshots(_ context.Context, r *pb.ListTopicSnapshotsRequest) (*pb.ListTopicSnapshotsResponse, error) {
	names, next, err := p.s.e.ListTopicSnapshots(r.GetTopic(), int(r.GetPageSize()), r.GetPageToken())
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.ListTopicSnapshotsResponse{Snapshots: names, NextPageToken: next}, nil
}

func (p publisher) DeleteTopic(_ context.Context, r *pb.DeleteTopicRequest) (*emptypb.Empty, error) {
	if err := p.s.e.DeleteTopic(r.GetTopic()); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (p publisher) DetachSubscription(_ context.Context, r *pb.DetachSubscriptionRequest) (*pb.DetachSubscriptionResponse, error) {
	if err := p.s.e.DetachSubscription(r.GetSubscription()); err != nil {
		return nil, grpcErr(err)
	}
	return &pb.DetachSubscriptionResponse{}, nil
}

type subscriber struct{ s *Server }

func (u subscriber) CreateSubscription(_ context.Context, r *pb.Subscription) (*pb.Subscription, error) {
	out, err := u.s.e.CreateSubscription(subIn(r))
	if err != nil {
		return nil, grpcErr(err)
	}
	return subOut(out), nil
}

func (u subscriber) GetSubscription(_ context.Context, r *pb.GetSubscriptionRequest) (*pb.Subscription, error) {
	out, err := u.s.e.GetSubscription(r.GetSubscription())
	if err != nil {
		return nil, grpcErr(err)
	}
	return subOut(out), nil
}

func (u subscriber) UpdateSubscription(_ context.Context, r *pb.UpdateSubscriptionRequest) (*pb.Subscription, error) {
	if r.GetSubscription() == nil {
		return nil, status.Error(codes.InvalidArgument, "No subscription provided in the UpdateSubscriptionRequest.")
	}
	out, err := u.s.e.UpdateSubscription(subIn(r.GetSubscription()), r.GetUpdateMask().GetPaths())
	if err != nil {
		return nil, grpcErr(err)
	}
	return subOut(out), nil
}

func (u subscriber) ListSubscriptions(_ context.Context, r *pb.ListSubscriptionsRequest) (*pb.ListSubscriptionsResponse, error) {
	project, err := projectOf(r.GetProject())
	if err != nil {
		return nil, err
	}
	ss, next := u.s.e.ListSubscriptions(project, int(r.GetPageSize()), r.GetPageToken())
	out := &pb.ListSubscriptionsResponse{NextPageToken: next}
	for _, s := range ss {
		out.Subscriptions = append(out.Subscriptions, subOut(s))
	}
	return out, nil
}

func (u subscriber) DeleteSubscription(_ context.Context, r *pb.DeleteSubscriptionRequest) (*emptypb.Empty, error) {
	if err := u.s.e.DeleteSubscription(r.GetSubscription()); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (u subscriber) ModifyAckDeadline(_ context.Context, r *pb.ModifyAckDeadlineRequest) (*emptypb.Empty, error) {
	if err := u.s.e.ModifyAckDeadline(r.GetSubscription(), r.GetAckIds(), int(r.GetAckDeadlineSeconds())); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (u subscriber) Acknowledge(_ context.Context, r *pb.AcknowledgeRequest) (*emptypb.Empty, error) {
	if err := u.s.e.Acknowledge(r.GetSubscription(), r.GetAckIds()); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (u subscriber) Pull(ctx context.Context, r *pb.PullRequest) (*pb.PullResponse, error) {
	got, err := u.s.e.Pull(ctx, r.GetSubscription(), int(r.GetMaxMessages()), r.GetReturnImmediately())
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.PullResponse{ReceivedMessages: receivedOut(got)}, nil
}

func (u subscriber) ModifyPushConfig(_ context.Context, r *pb.ModifyPushConfigRequest) (*emptypb.Empty, error) {
	patch := &pubsub.Subscription{Name: r.GetSubscription()}
	if p := r.GetPushConfig(); p != nil && p.GetPushEndpoint() != "" {
		patch.Push = pushIn(p)
	}
	if _, err := u.s.e.UpdateSubscription(patch, []string{"push_config"}); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (u subscriber) GetSnapshot(_ context.Context, r *pb.GetSnapshotRequest) (*pb.Snapshot, error) {
	out, err := u.s.e.GetSnapshot(r.GetSnapshot())
	if err != nil {
		return nil, grpcErr(err)
	}
	return snapOut(out), nil
}

func (u subscriber) ListSnapshots(_ context.Context, r *pb.ListSnapshotsRequest) (*pb.ListSnapshotsResponse, error) {
	project, err := projectOf(r.GetProject())
	if err != nil {
		return nil, err
	}
	ss, next := u.s.e.ListSnapshots(project, int(r.GetPageSize()), r.GetPageToken())
	out := &pb.ListSnapshotsResponse{NextPageToken: next}
	for _, s := range ss {
		out.Snapshots = append(out.Snapshots, snapOut(s))
	}
	return out, nil
}

func (u subscriber) CreateSnapshot(_ context.Context, r *pb.CreateSnapshotRequest) (*pb.Snapshot, error) {
	out, err := u.s.e.CreateSnapshot(r.GetName(), r.GetSubscription(), r.GetLabels())
	if err != nil {
		return nil, grpcErr(err)
	}
	return snapOut(out), nil
}

func (u subscriber) UpdateSnapshot(_ context.Context, r *pb.UpdateSnapshotRequest) (*pb.Snapshot, error) {
	if r.GetSnapshot() == nil {
		return nil, status.Error(codes.InvalidArgument, "No snapshot provided in the UpdateSnapshotRequest.")
	}
	out, err := u.s.e.UpdateSnapshot(r.GetSnapshot().GetName(), r.GetSnapshot().GetLabels(), r.GetUpdateMask().GetPaths())
	if err != nil {
		return nil, grpcErr(err)
	}
	return snapOut(out), nil
}

func (u subscriber) DeleteSnapshot(_ context.Context, r *pb.DeleteSnapshotRequest) (*emptypb.Empty, error) {
	if err := u.s.e.DeleteSnapshot(r.GetSnapshot()); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (u subscriber) Seek(_ context.Context, r *pb.SeekRequest) (*pb.SeekResponse, error) {
	var err error
	switch t := r.GetTarget().(type) {
	case *pb.SeekRequest_Snapshot:
		err = u.s.e.SeekToSnapshot(r.GetSubscription(), t.Snapshot)
	case *pb.SeekRequest_Time:
		err = u.s.e.SeekToTime(r.GetSubscription(), t.Time.AsTime())
	default:
		return nil, status.Error(codes.InvalidArgument, "No target provided in the SeekRequest: set time or snapshot.")
	}
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.SeekResponse{}, nil
}

// StreamingPull drives an engine Stream: the first request opens it (its
// subscription, ack deadline and flow control), later ones carry acks
// and deadline changes; a sender goroutine forwards what the stream
// receives.
func (u subscriber) StreamingPull(srv pb.Subscriber_StreamingPullServer) error {
	first, err := srv.Recv()
	if err != nil {
		if err == io.EOF {
			return nil
		}
		return err
	}
	if first.GetSubscription() == "" {
		return status.Error(codes.InvalidArgument, "The first StreamingPullRequest must name a subscription.")
	}
	st, err := u.s.e.OpenStream(first.GetSubscription(), int(first.GetStreamAckDeadlineSeconds()),
		int(first.GetMaxOutstandingMessages()), first.GetMaxOutstandingBytes())
	if err != nil {
		return grpcErr(err)
	}
	ctx, cancel := context.WithCancel(srv.Context())
	u.s.mu.Lock()
	if u.s.closed {
		u.s.mu.Unlock()
		cancel()
		st.Close()
		return status.Error(codes.Unavailable, "The Pub/Sub service is shutting down.")
	}
	u.s.streams[st] = cancel
	u.s.mu.Unlock()
	defer func() {
		u.s.mu.Lock()
		delete(u.s.streams, st)
		u.s.mu.Unlock()
		cancel()
		st.Close()
	}()
	// Both the sender goroutine and the request handler (exactly-once
	// confirmations) send on the stream.
	var sendMu sync.Mutex
	send := func(resp *pb.StreamingPullResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return srv.Send(resp)
	}
	sendErr := make(chan error, 1)
	go func() {
		for {
			got, err := st.Receive(ctx)
			if err != nil {
				sendErr <- err
				return
			}
			// The client library processes a key's messages in order
			// only when the response says the subscription orders them.
			ordered, once := st.Properties()
			resp := &pb.StreamingPullResponse{ReceivedMessages: receivedOut(got), SubscriptionProperties: &pb.StreamingPullResponse_SubscriptionProperties{
				MessageOrderingEnabled: ordered, ExactlyOnceDeliveryEnabled: once}}
			if once {
				// The official emulator sets both (empty) confirmations on
				// every response of an exactly-once subscription.
				resp.AcknowledgeConfirmation = &pb.StreamingPullResponse_AcknowledgeConfirmation{}
				resp.ModifyAckDeadlineConfirmation = &pb.StreamingPullResponse_ModifyAckDeadlineConfirmation{}
			}
			if err := send(resp); err != nil {
				sendErr <- err
				return
			}
		}
	}()
	recvErr := make(chan error, 1)
	handle := func(r *pb.StreamingPullRequest) error {
		sub := st.Subscription()
		// On an exactly-once subscription every ack and deadline change
		// is confirmed, ack id by ack id, in a response of its own, as
		// production does (the official emulator only adds them to the
		// next response carrying messages).
		var ackConf *pb.StreamingPullResponse_AcknowledgeConfirmation
		var modConf *pb.StreamingPullResponse_ModifyAckDeadlineConfirmation
		if len(r.GetAckIds()) > 0 {
			invalid, once, err := u.s.e.AcknowledgeEach(sub, r.GetAckIds())
			if err != nil {
				return err
			}
			if once {
				ackConf = &pb.StreamingPullResponse_AcknowledgeConfirmation{AckIds: without(r.GetAckIds(), invalid), InvalidAckIds: invalid}
			}
		}
		if len(r.GetModifyDeadlineAckIds()) != len(r.GetModifyDeadlineSeconds()) {
			return status.Error(codes.InvalidArgument, "modify_deadline_seconds and modify_deadline_ack_ids must be the same length.")
		}
		// Group equal deadlines into one engine call each.
		groups := map[int32][]string{}
		var order []int32
		for i, id := range r.GetModifyDeadlineAckIds() {
			d := r.GetModifyDeadlineSeconds()[i]
			if _, ok := groups[d]; !ok {
				order = append(order, d)
			}
			groups[d] = append(groups[d], id)
		}
		for _, d := range order {
			invalid, once, err := u.s.e.ModifyAckDeadlineEach(sub, groups[d], int(d))
			if err != nil {
				return err
			}
			if once {
				if modConf == nil {
					modConf = &pb.StreamingPullResponse_ModifyAckDeadlineConfirmation{}
				}
				modConf.AckIds = append(modConf.AckIds, without(groups[d], invalid)...)
				modConf.InvalidAckIds = append(modConf.InvalidAckIds, invalid...)
			}
		}
		if d := r.GetStreamAckDeadlineSeconds(); d != 0 {
			if err := st.SetAckDeadline(int(d)); err != nil {
				return err
			}
		}
		if ackConf != nil || modConf != nil {
			ordered, once := st.Properties()
			return send(&pb.StreamingPullResponse{AcknowledgeConfirmation: ackConf, ModifyAckDeadlineConfirmation: modConf,
				SubscriptionProperties: &pb.StreamingPullResponse_SubscriptionProperties{MessageOrderingEnabled: ordered, ExactlyOnceDeliveryEnabled: once}})
		}
		return nil
	}
	if err := handle(first); err != nil {
		return grpcErr(err)
	}
	go func() {
		for {
			r, err := srv.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			if err := handle(r); err != nil {
				recvErr <- err
				return
			}
		}
	}()
	select {
	case err := <-sendErr:
		if errors.Is(err, context.Canceled) && srv.Context().Err() == nil {
			return status.Error(codes.Unavailable, "The Pub/Sub service closed the stream; reconnect.")
		}
		return grpcErr(err)
	case err := <-recvErr:
		if err == io.EOF {
			return nil
		}
		return grpcErr(err)
	}
}

// without returns ids less those in drop, in order.
func without(ids, drop []string) []string {
	if len(drop) == 0 {
		return ids
	}
	gone := make(map[string]bool, len(drop))
	for _, id := range drop {
		gone[id] = true
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !gone[id] {
			out = append(out, id)
		}
	}
	return out
}
