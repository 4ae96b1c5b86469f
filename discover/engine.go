package discover

import (
	"context"
	"sort"
	"strings"
	"sync"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// EngineSource reads an in-process Firestore engine as admin (discovery
// is an operator's tool: production only lets service accounts list
// collection ids). The tree structure is indexed from one consistent
// snapshot of the database, taken at first use, so a walk costs O(N)
// instead of one full scan per listed document; use a new EngineSource per
// walk (or per resumed batch) to see later writes.
type EngineSource struct {
	engine *firestore.Engine
	db     firestore.DatabaseName

	once  sync.Once
	colls map[string][]string // parent doc path ("" root) -> collection ids
	docs  map[string][]string // collection path -> document ids (missing ones too)
	data  map[string]map[string]*pb.Value
}

// NewEngineSource returns a source over one database of e.
func NewEngineSource(e *firestore.Engine, db firestore.DatabaseName) *EngineSource {
	return &EngineSource{engine: e, db: db}
}

var _ GroupSource = (*EngineSource)(nil)

func (s *EngineSource) index() {
	s.once.Do(func() {
		collSet := map[string]map[string]bool{}
		docSet := map[string]map[string]bool{}
		add := func(m map[string]map[string]bool, k, v string) {
			if m[k] == nil {
				m[k] = map[string]bool{}
			}
			m[k][v] = true
		}
		s.data = map[string]map[string]*pb.Value{}
		prefix := s.db.Documents() + "/"
		for _, d := range s.engine.Dump(s.db) {
			rel := strings.TrimPrefix(d.Name, prefix)
			s.data[rel] = d.Fields
			segs := strings.Split(rel, "/")
			for i := 0; i+1 < len(segs); i += 2 {
				parent := strings.Join(segs[:i], "/")
				coll := strings.Join(segs[:i+1], "/")
				add(collSet, parent, segs[i])
				add(docSet, coll, segs[i+1])
			}
		}
		flat := func(m map[string]map[string]bool) map[string][]string {
			out := make(map[string][]string, len(m))
			for k, set := range m {
				ids := make([]string, 0, len(set))
				for id := range set {
					ids = append(ids, id)
				}
				sort.Strings(ids)
				out[k] = ids
			}
			return out
		}
		s.colls, s.docs = flat(collSet), flat(docSet)
	})
}

// ListCollectionIDs implements Source.
func (s *EngineSource) ListCollectionIDs(ctx context.Context, docPath string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.index()
	return s.colls[docPath], nil
}

// ListDocumentIDs implements Source.
func (s *EngineSource) ListDocumentIDs(ctx context.Context, collPath string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := firestore.ValidateCollectionPath(collPath); err != nil {
		return nil, err
	}
	s.index()
	return s.docs[collPath], nil
}

// GetDocument implements Source.
func (s *EngineSource) GetDocument(ctx context.Context, docPath string) (map[string]*pb.Value, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.index()
	f, ok := s.data[docPath]
	return f, ok, nil
}

// CollectionGroupDocs implements GroupSource with a names-only
// collection-group query.
func (s *EngineSource) CollectionGroupDocs(ctx context.Context, collectionID string, limit int) ([]string, error) {
	q := &pb.StructuredQuery{
		From:   []*pb.StructuredQuery_CollectionSelector{{CollectionId: collectionID, AllDescendants: true}},
		Select: &pb.StructuredQuery_Projection{Fields: []*pb.StructuredQuery_FieldReference{{FieldPath: "__name__"}}},
	}
	if limit > 0 {
		q.Limit = wrapInt(limit)
	}
	rs, err := s.engine.RunQuery(ctx, identity.AdminIdentity(), &pb.RunQueryRequest{Parent: s.db.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}})
	if err != nil {
		return nil, err
	}
	var out []string
	prefix := s.db.Documents() + "/"
	for _, r := range rs {
		if d := r.GetDocument(); d != nil {
			out = append(out, strings.TrimPrefix(d.Name, prefix))
		}
	}
	return out, nil
}
