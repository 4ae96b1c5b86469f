package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/server/httpjson"
)

// maxBody bounds a REST request body: a 10 MB publish in base64 plus
// its JSON.
const maxBody = 16 << 20

// NewPort serves s on l: gRPC for HTTP/2 connections, REST for the rest.
func NewPort(l net.Listener, s *Server) *server.Port {
	g := grpc.NewServer(grpc.MaxRecvMsgSize(maxBody), grpc.MaxSendMsgSize(64<<20))
	s.Register(g)
	return server.NewPort(l, g, s.Handler())
}

// Handler is the REST/JSON API plus the emulator's own endpoints
// (GET / answers "Ok", POST /reset wipes everything).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

var unmarshal = protojson.UnmarshalOptions{DiscardUnknown: false}
var marshal = protojson.MarshalOptions{}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" && r.Method == http.MethodGet {
		io.WriteString(w, "Ok\n")
		return
	}
	if r.URL.Path == "/reset" && r.Method == http.MethodPost {
		if err := s.e.Reset(); err != nil {
			writeErr(w, err)
			return
		}
		io.WriteString(w, "Reset\n")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeErr(w, status.Errorf(codes.InvalidArgument, "Request body too large or unreadable: %v", err))
		return
	}
	res, err := s.route(r.Context(), r.Method, rest, r.URL.Query(), body)
	if err != nil {
		if errors.Is(err, errNoRoute) {
			http.NotFound(w, r)
			return
		}
		writeErr(w, err)
		return
	}
	b, err := marshal.Marshal(res)
	if err != nil {
		writeErr(w, err)
		return
	}
	api.Body(w, http.StatusOK, b)
}

var errNoRoute = errors.New("no route")

// errPayload is how the official emulator refuses a body that is not
// JSON of the request's message (malformed, a wrong type, an unknown
// field).
const errPayload = "Payload isn't valid for request."

// decode reads a JSON body into m; an empty body is an empty message.
func decode(body []byte, m proto.Message) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := unmarshal.Unmarshal(body, m); err != nil {
		// The official emulator's words, then what is wrong.
		return status.Errorf(codes.InvalidArgument, "%s (%v)", errPayload, err)
	}
	return nil
}

// mask parses the REST updateMask ("ackDeadlineSeconds,labels" or
// snake_case) into proto paths: the JSON API takes camelCase, as
// production's does.
func mask(body []byte) *fieldmaskpb.FieldMask {
	var raw struct {
		UpdateMask string `json:"updateMask"`
	}
	_ = json.Unmarshal(body, &raw)
	if raw.UpdateMask == "" {
		return nil
	}
	fm := &fieldmaskpb.FieldMask{}
	for _, p := range strings.Split(raw.UpdateMask, ",") {
		fm.Paths = append(fm.Paths, camelToSnake(strings.TrimSpace(p)))
	}
	return fm
}

func camelToSnake(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// withoutMask strips updateMask (a string in JSON, a FieldMask in the
// proto) so protojson can decode the rest.
func withoutMask(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	delete(m, "updateMask")
	b, _ := json.Marshal(m)
	return b
}

func listArgs(q map[string][]string) (int32, string) {
	n, _ := strconv.Atoi(first(q["pageSize"]))
	return int32(n), first(q["pageToken"])
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// route maps a REST call to the RPC it stands for.
func (s *Server) route(ctx context.Context, method, path string, q map[string][]string, body []byte) (proto.Message, error) {
	pub, sub := publisher{s}, subscriber{s}
	path, verb, _ := strings.Cut(path, ":")
	parts := strings.Split(path, "/")
	if len(parts) < 3 || parts[0] != "projects" {
		return nil, errNoRoute
	}
	project := "projects/" + parts[1]
	kind := parts[2]
	if kind == "schemas" {
		return s.routeSchema(ctx, method, verb, project, parts, q, body)
	}
	if len(parts) == 3 && verb == "" && method == http.MethodGet {
		size, token := listArgs(q)
		switch kind {
		case "topics":
			return pub.ListTopics(ctx, &pb.ListTopicsRequest{Project: project, PageSize: size, PageToken: token})
		case "subscriptions":
			return sub.ListSubscriptions(ctx, &pb.ListSubscriptionsRequest{Project: project, PageSize: size, PageToken: token})
		case "snapshots":
			return sub.ListSnapshots(ctx, &pb.ListSnapshotsRequest{Project: project, PageSize: size, PageToken: token})
		}
		return nil, errNoRoute
	}
	if len(parts) < 4 {
		return nil, errNoRoute
	}
	name := strings.Join(parts[:4], "/")
	if len(parts) == 5 && kind == "topics" && method == http.MethodGet && verb == "" {
		size, token := listArgs(q)
		switch parts[4] {
		case "subscriptions":
			return pub.ListTopicSubscriptions(ctx, &pb.ListTopicSubscriptionsRequest{Topic: name, PageSize: size, PageToken: token})
		case "snapshots":
			return pub.ListTopicSnapshots(ctx, &pb.ListTopicSnapshotsRequest{Topic: name, PageSize: size, PageToken: token})
		}
		return nil, errNoRoute
	}
	if len(parts) != 4 {
		return nil, errNoRoute
	}
	switch kind + " " + method + " " + verb {
	case "topics PUT ":
		t := &pb.Topic{}
		if err := decode(body, t); err != nil {
			return nil, err
		}
		t.Name = name
		return pub.CreateTopic(ctx, t)
	case "topics GET ":
		return pub.GetTopic(ctx, &pb.GetTopicRequest{Topic: name})
	case "topics PATCH ":
		r := &pb.UpdateTopicRequest{}
		if err := decode(withoutMask(body), r); err != nil {
			return nil, err
		}
		r.UpdateMask = mask(body)
		if r.Topic == nil {
			r.Topic = &pb.Topic{}
		}
		r.Topic.Name = name
		return pub.UpdateTopic(ctx, r)
	case "topics DELETE ":
		return pub.DeleteTopic(ctx, &pb.DeleteTopicRequest{Topic: name})
	case "topics POST publish":
		r := &pb.PublishRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Topic = name
		return pub.Publish(ctx, r)
	case "subscriptions PUT ":
		r := &pb.Subscription{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Name = name
		return sub.CreateSubscription(ctx, r)
	case "subscriptions GET ":
		return sub.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: name})
	case "subscriptions PATCH ":
		r := &pb.UpdateSubscriptionRequest{}
		if err := decode(withoutMask(body), r); err != nil {
			return nil, err
		}
		r.UpdateMask = mask(body)
		if r.Subscription == nil {
			r.Subscription = &pb.Subscription{}
		}
		r.Subscription.Name = name
		return sub.UpdateSubscription(ctx, r)
	case "subscriptions DELETE ":
		return sub.DeleteSubscription(ctx, &pb.DeleteSubscriptionRequest{Subscription: name})
	case "subscriptions POST pull":
		r := &pb.PullRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Subscription = name
		return sub.Pull(ctx, r)
	case "subscriptions POST acknowledge":
		r := &pb.AcknowledgeRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Subscription = name
		return sub.Acknowledge(ctx, r)
	case "subscriptions POST modifyAckDeadline":
		r := &pb.ModifyAckDeadlineRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Subscription = name
		return sub.ModifyAckDeadline(ctx, r)
	case "subscriptions POST modifyPushConfig":
		r := &pb.ModifyPushConfigRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Subscription = name
		return sub.ModifyPushConfig(ctx, r)
	case "subscriptions POST seek":
		r := &pb.SeekRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Subscription = name
		return sub.Seek(ctx, r)
	case "subscriptions POST detach":
		return pub.DetachSubscription(ctx, &pb.DetachSubscriptionRequest{Subscription: name})
	case "snapshots PUT ":
		r := &pb.CreateSnapshotRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Name = name
		return sub.CreateSnapshot(ctx, r)
	case "snapshots GET ":
		return sub.GetSnapshot(ctx, &pb.GetSnapshotRequest{Snapshot: name})
	case "snapshots PATCH ":
		r := &pb.UpdateSnapshotRequest{}
		if err := decode(withoutMask(body), r); err != nil {
			return nil, err
		}
		r.UpdateMask = mask(body)
		if r.Snapshot == nil {
			r.Snapshot = &pb.Snapshot{}
		}
		r.Snapshot.Name = name
		return sub.UpdateSnapshot(ctx, r)
	case "snapshots DELETE ":
		return sub.DeleteSnapshot(ctx, &pb.DeleteSnapshotRequest{Snapshot: name})
	}
	return nil, errNoRoute
}

// routeSchema maps a REST call under projects/P/schemas to the
// SchemaService RPC it stands for (production's HTTP bindings).
func (s *Server) routeSchema(ctx context.Context, method, verb, project string, parts []string, q map[string][]string, body []byte) (proto.Message, error) {
	x := schemas{s: s}
	view := pb.SchemaView(pb.SchemaView_value[first(q["view"])])
	size, token := listArgs(q)
	if len(parts) == 3 {
		switch method + " " + verb {
		case "GET ":
			return x.ListSchemas(ctx, &pb.ListSchemasRequest{Parent: project, View: view, PageSize: size, PageToken: token})
		case "POST ":
			r := &pb.Schema{}
			if err := decode(body, r); err != nil {
				return nil, err
			}
			return x.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: project, SchemaId: first(q["schemaId"]), Schema: r})
		case "POST validate":
			r := &pb.ValidateSchemaRequest{}
			if err := decode(body, r); err != nil {
				return nil, err
			}
			r.Parent = project
			return x.ValidateSchema(ctx, r)
		case "POST validateMessage":
			r := &pb.ValidateMessageRequest{}
			if err := decode(body, r); err != nil {
				return nil, err
			}
			r.Parent = project
			return x.ValidateMessage(ctx, r)
		}
		return nil, errNoRoute
	}
	if len(parts) != 4 {
		return nil, errNoRoute
	}
	name := strings.Join(parts, "/")
	switch method + " " + verb {
	case "GET ":
		return x.GetSchema(ctx, &pb.GetSchemaRequest{Name: name, View: view})
	case "DELETE ":
		return x.DeleteSchema(ctx, &pb.DeleteSchemaRequest{Name: name})
	case "POST commit":
		r := &pb.CommitSchemaRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Name = name
		return x.CommitSchema(ctx, r)
	case "POST rollback":
		r := &pb.RollbackSchemaRequest{}
		if err := decode(body, r); err != nil {
			return nil, err
		}
		r.Name = name
		return x.RollbackSchema(ctx, r)
	case "GET listRevisions":
		return x.ListSchemaRevisions(ctx, &pb.ListSchemaRevisionsRequest{Name: name, View: view, PageSize: size, PageToken: token})
	case "DELETE deleteRevision":
		return x.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name, RevisionId: first(q["revisionId"])})
	}
	return nil, errNoRoute
}

// api is how the Pub/Sub REST API writes JSON (compact, no newline).
var api = httpjson.Style{Charset: "UTF-8"}

// writeErr writes Google's JSON error envelope.
func writeErr(w http.ResponseWriter, err error) {
	st, _ := status.FromError(grpcErr(err))
	api.Fail(w, errcode.FromGRPC(st.Code()), st.Message())
}
