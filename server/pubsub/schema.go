package pubsub

import (
	"context"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// schemas serves google.pubsub.v1.SchemaService as the official emulator
// does: create, get (a revision with "name@revision"), list, delete,
// validate schema and message, and the revision history (commit, list
// revisions, rollback, delete a revision).
type schemas struct {
	pb.UnimplementedSchemaServiceServer
	s *Server
}

func (x schemas) CreateSchema(_ context.Context, r *pb.CreateSchemaRequest) (*pb.Schema, error) {
	out, err := x.s.e.CreateSchema(r.GetParent(), r.GetSchemaId(), schemaIn(r.GetSchema()))
	if err != nil {
		return nil, grpcErr(err)
	}
	return schemaOut(out), nil
}

func (x schemas) GetSchema(_ context.Context, r *pb.GetSchemaRequest) (*pb.Schema, error) {
	out, err := x.s.e.GetSchema(r.GetName(), r.GetView() != pb.SchemaView_BASIC)
	if err != nil {
		return nil, grpcErr(err)
	}
	return schemaOut(out), nil
}

// ListSchemas lists full schemas whatever the view, as the official
// emulator does.
func (x schemas) ListSchemas(_ context.Context, r *pb.ListSchemasRequest) (*pb.ListSchemasResponse, error) {
	list, next, err := x.s.e.ListSchemas(r.GetParent(), int(r.GetPageSize()), r.GetPageToken())
	if err != nil {
		return nil, grpcErr(err)
	}
	out := &pb.ListSchemasResponse{NextPageToken: next}
	for _, s := range list {
		out.Schemas = append(out.Schemas, schemaOut(s))
	}
	return out, nil
}

func (x schemas) CommitSchema(_ context.Context, r *pb.CommitSchemaRequest) (*pb.Schema, error) {
	out, err := x.s.e.CommitSchema(r.GetName(), schemaIn(r.GetSchema()))
	if err != nil {
		return nil, grpcErr(err)
	}
	return schemaOut(out), nil
}

// ListSchemaRevisions lists a schema's revisions, oldest first, as the
// official emulator does.
func (x schemas) ListSchemaRevisions(_ context.Context, r *pb.ListSchemaRevisionsRequest) (*pb.ListSchemaRevisionsResponse, error) {
	list, next, err := x.s.e.ListSchemaRevisions(r.GetName(), r.GetView() != pb.SchemaView_BASIC, int(r.GetPageSize()), r.GetPageToken())
	if err != nil {
		return nil, grpcErr(err)
	}
	out := &pb.ListSchemaRevisionsResponse{NextPageToken: next}
	for _, s := range list {
		out.Schemas = append(out.Schemas, schemaOut(s))
	}
	return out, nil
}

func (x schemas) RollbackSchema(_ context.Context, r *pb.RollbackSchemaRequest) (*pb.Schema, error) {
	out, err := x.s.e.RollbackSchema(r.GetName(), r.GetRevisionId())
	if err != nil {
		return nil, grpcErr(err)
	}
	return schemaOut(out), nil
}

// DeleteSchemaRevision deletes the revision its name ("…@revision")
// names; the deprecated revision_id field is ignored, as the official
// emulator ignores it.
func (x schemas) DeleteSchemaRevision(_ context.Context, r *pb.DeleteSchemaRevisionRequest) (*pb.Schema, error) {
	out, err := x.s.e.DeleteSchemaRevision(r.GetName())
	if err != nil {
		return nil, grpcErr(err)
	}
	return schemaOut(out), nil
}

func (x schemas) DeleteSchema(_ context.Context, r *pb.DeleteSchemaRequest) (*emptypb.Empty, error) {
	if err := x.s.e.DeleteSchema(r.GetName()); err != nil {
		return nil, grpcErr(err)
	}
	return &emptypb.Empty{}, nil
}

func (x schemas) ValidateSchema(_ context.Context, r *pb.ValidateSchemaRequest) (*pb.ValidateSchemaResponse, error) {
	if err := x.s.e.ValidateSchema(r.GetParent(), schemaIn(r.GetSchema())); err != nil {
		return nil, grpcErr(err)
	}
	return &pb.ValidateSchemaResponse{}, nil
}

func (x schemas) ValidateMessage(_ context.Context, r *pb.ValidateMessageRequest) (*pb.ValidateMessageResponse, error) {
	var inline *pb.Schema
	if s, ok := r.GetSchemaSpec().(*pb.ValidateMessageRequest_Schema); ok {
		inline = s.Schema
	}
	var in = schemaIn(inline)
	if inline == nil {
		in = nil
	}
	if err := x.s.e.ValidateMessage(r.GetName(), in, r.GetMessage(), encodingIn(r.GetEncoding())); err != nil {
		return nil, grpcErr(err)
	}
	return &pb.ValidateMessageResponse{}, nil
}
