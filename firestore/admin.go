package firestore

import (
	"context"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/identity"
)

// Admin is the rules-bypassing plane of one database, in the JSON form of
// fields (EncodeFields): what snapshot import, verify's branches and
// tests read and write without building requests.
type Admin struct {
	e  *Engine
	db DatabaseName
}

// Admin returns the admin plane of the sandbox's default database.
func (s *Service) Admin() Admin { return Admin{e: s.Engine, db: s.def} }

// AdminDoc is a listed document; Phantom marks a path with descendants but
// no document.
type AdminDoc struct {
	Path    string         `json:"path"`
	Data    map[string]any `json:"data"`
	Phantom bool           `json:"phantom,omitempty"`
}

// GetDocument reads a document's fields in the JSON form; nil when missing.
func (a Admin) GetDocument(ctx context.Context, path string) (map[string]any, error) {
	r, err := a.e.BatchGetDocuments(ctx, identity.AdminIdentity(), &pb.BatchGetDocumentsRequest{
		Database: a.db.String(), Documents: []string{a.db.DocName(path)}})
	if err != nil {
		return nil, err
	}
	if d := r[0].GetFound(); d != nil {
		return EncodeFields(d.Fields, a.db), nil
	}
	return nil, nil
}

// SetDocument replaces a document with data (JSON form or Go natives).
func (a Admin) SetDocument(ctx context.Context, path string, data map[string]any) error {
	fields, err := DecodeFields(data, a.db)
	if err != nil {
		return err
	}
	_, err = a.e.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: a.db.String(),
		Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: a.db.DocName(path), Fields: fields}}}}})
	return err
}

// DeleteDocument deletes a document and reports whether it existed.
func (a Admin) DeleteDocument(ctx context.Context, path string) (bool, error) {
	cur, err := a.GetDocument(ctx, path)
	if err != nil {
		return false, err
	}
	_, err = a.e.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: a.db.String(),
		Writes: []*pb.Write{{Operation: &pb.Write_Delete{Delete: a.db.DocName(path)}}}})
	return cur != nil && err == nil, err
}

// ListDocuments lists the documents of a collection path, with phantoms.
func (a Admin) ListDocuments(ctx context.Context, collection string) ([]AdminDoc, error) {
	if err := ValidateCollectionPath(collection); err != nil {
		return nil, err
	}
	parent, id := "", collection
	if i := strings.LastIndexByte(collection, '/'); i >= 0 {
		parent, id = collection[:i], collection[i+1:]
	}
	r, err := a.e.ListDocuments(ctx, identity.AdminIdentity(), &pb.ListDocumentsRequest{
		Parent: a.db.DocName(parent), CollectionId: id, ShowMissing: true})
	if err != nil {
		return nil, err
	}
	out := make([]AdminDoc, 0, len(r.Documents))
	for _, d := range r.Documents {
		rel := strings.TrimPrefix(d.Name, a.db.Documents()+"/")
		if d.UpdateTime == nil {
			out = append(out, AdminDoc{Path: rel, Phantom: true})
			continue
		}
		out = append(out, AdminDoc{Path: rel, Data: EncodeFields(d.Fields, a.db)})
	}
	return out, nil
}
