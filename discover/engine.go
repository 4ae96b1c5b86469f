package discover

import (
	"context"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	fs "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// EngineSource reads an in-process Firestore engine as admin (discovery
// is an operator's tool: production only lets service accounts list
// collection ids).
type EngineSource struct {
	Engine   *fs.Engine
	Database fs.DatabaseName
}

var _ GroupSource = EngineSource{}

// ListCollectionIDs implements Source.
func (s EngineSource) ListCollectionIDs(ctx context.Context, docPath string) ([]string, error) {
	var out []string
	tok := ""
	for {
		r, err := s.Engine.ListCollectionIds(ctx, identity.AdminIdentity(), &pb.ListCollectionIdsRequest{Parent: s.Database.DocName(docPath), PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, err
		}
		out = append(out, r.CollectionIds...)
		if tok = r.NextPageToken; tok == "" {
			return out, nil
		}
	}
}

// ListDocumentIDs implements Source.
func (s EngineSource) ListDocumentIDs(ctx context.Context, collPath string) ([]string, error) {
	parent, id := "", collPath
	if i := strings.LastIndexByte(collPath, '/'); i >= 0 {
		parent, id = collPath[:i], collPath[i+1:]
	}
	var out []string
	tok := ""
	for {
		r, err := s.Engine.ListDocuments(ctx, identity.AdminIdentity(), &pb.ListDocumentsRequest{Parent: s.Database.DocName(parent), CollectionId: id,
			ShowMissing: true, PageSize: 1000, PageToken: tok, Mask: &pb.DocumentMask{FieldPaths: []string{"__name__"}}})
		if err != nil {
			return nil, err
		}
		for _, d := range r.Documents {
			out = append(out, d.Name[strings.LastIndexByte(d.Name, '/')+1:])
		}
		if tok = r.NextPageToken; tok == "" {
			return out, nil
		}
	}
}

// GetDocument implements Source.
func (s EngineSource) GetDocument(ctx context.Context, docPath string) (map[string]*pb.Value, bool, error) {
	r, err := s.Engine.BatchGetDocuments(ctx, identity.AdminIdentity(), &pb.BatchGetDocumentsRequest{Database: s.Database.String(), Documents: []string{s.Database.DocName(docPath)}})
	if err != nil {
		return nil, false, err
	}
	if d := r[0].GetFound(); d != nil {
		return d.Fields, true, nil
	}
	return nil, false, nil
}

// CollectionGroupDocs implements GroupSource with a names-only
// collection-group query.
func (s EngineSource) CollectionGroupDocs(ctx context.Context, collectionID string, limit int) ([]string, error) {
	q := &pb.StructuredQuery{
		From:   []*pb.StructuredQuery_CollectionSelector{{CollectionId: collectionID, AllDescendants: true}},
		Select: &pb.StructuredQuery_Projection{Fields: []*pb.StructuredQuery_FieldReference{{FieldPath: "__name__"}}},
	}
	if limit > 0 {
		q.Limit = wrapInt(limit)
	}
	rs, err := s.Engine.RunQuery(ctx, identity.AdminIdentity(), &pb.RunQueryRequest{Parent: s.Database.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}})
	if err != nil {
		return nil, err
	}
	var out []string
	prefix := s.Database.Documents() + "/"
	for _, r := range rs {
		if d := r.GetDocument(); d != nil {
			out = append(out, strings.TrimPrefix(d.Name, prefix))
		}
	}
	return out, nil
}
