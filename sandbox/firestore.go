package sandbox

// Firestore's conveniences on the sandbox: the engine, the default
// database, the admin plane and snapshot parsing. They are the last of the
// sandbox that names a service engine: the Firestore service itself is an
// ordinary registration (firestore.Registration), which Open adds when
// Options.Services lacks one, so that callers written when the sandbox
// built Firestore by hand keep working. New code finds the engine with
// Lookup[*firestore.Engine].

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// defaultRegistrations are the registrations Open adds to opts.Services:
// Firestore's, first, when they lack one.
func defaultRegistrations(opts Options) []service.Registration {
	for _, r := range opts.Services {
		if r.Name == firestore.ServiceName {
			return opts.Services
		}
	}
	return append([]service.Registration{firestore.Registration(firestore.Options{Rules: opts.Rules})}, opts.Services...)
}

// found notes the Firestore engine once its service is created.
func (sb *Sandbox) found(svc service.Service) {
	if w, ok := svc.(service.Wrapper); ok {
		if e, ok := w.Unwrap().(*firestore.Engine); ok {
			sb.fs = e
		}
	}
}

// Firestore returns the Firestore engine (the wire adapters' entry point).
func (sb *Sandbox) Firestore() *firestore.Engine { return sb.fs }

// Database returns the default Firestore database name.
func (sb *Sandbox) Database() firestore.DatabaseName {
	return firestore.DatabaseName{Project: sb.opts.Project, Database: firestore.DefaultDatabase}
}

// Admin is the rules-bypassing plane.
type Admin struct{ sb *Sandbox }

// Admin returns the admin plane.
func (sb *Sandbox) Admin() Admin { return Admin{sb} }

// FirestoreAdmin is the admin plane of Firestore, on the default database.
type FirestoreAdmin struct{ sb *Sandbox }

// Firestore returns the Firestore admin plane.
func (a Admin) Firestore() FirestoreAdmin { return FirestoreAdmin{a.sb} }

// AdminDoc is a listed document; Phantom marks a path with descendants but
// no document.
type AdminDoc struct {
	Path    string         `json:"path"`
	Data    map[string]any `json:"data"`
	Phantom bool           `json:"phantom,omitempty"`
}

func (f FirestoreAdmin) def() firestore.DatabaseName { return f.sb.Database() }

// GetDocument reads a document's fields in the JSON form; nil when missing.
func (f FirestoreAdmin) GetDocument(ctx context.Context, path string) (map[string]any, error) {
	r, err := f.sb.fs.BatchGetDocuments(ctx, identity.AdminIdentity(), &pb.BatchGetDocumentsRequest{
		Database: f.def().String(), Documents: []string{f.def().DocName(path)}})
	if err != nil {
		return nil, err
	}
	if d := r[0].GetFound(); d != nil {
		return firestore.EncodeFields(d.Fields, f.def()), nil
	}
	return nil, nil
}

// SetDocument replaces a document with data (JSON form or Go natives).
func (f FirestoreAdmin) SetDocument(ctx context.Context, path string, data map[string]any) error {
	fields, err := firestore.DecodeFields(data, f.def())
	if err != nil {
		return err
	}
	_, err = f.sb.fs.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: f.def().String(),
		Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: f.def().DocName(path), Fields: fields}}}}})
	return err
}

// DeleteDocument deletes a document and reports whether it existed.
func (f FirestoreAdmin) DeleteDocument(ctx context.Context, path string) (bool, error) {
	cur, err := f.GetDocument(ctx, path)
	if err != nil {
		return false, err
	}
	_, err = f.sb.fs.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: f.def().String(),
		Writes: []*pb.Write{{Operation: &pb.Write_Delete{Delete: f.def().DocName(path)}}}})
	return cur != nil && err == nil, err
}

// ListDocuments lists the documents of a collection path, with phantoms.
func (f FirestoreAdmin) ListDocuments(ctx context.Context, collection string) ([]AdminDoc, error) {
	if err := firestore.ValidateCollectionPath(collection); err != nil {
		return nil, err
	}
	parent, id := "", collection
	if i := strings.LastIndexByte(collection, '/'); i >= 0 {
		parent, id = collection[:i], collection[i+1:]
	}
	r, err := f.sb.fs.ListDocuments(ctx, identity.AdminIdentity(), &pb.ListDocumentsRequest{
		Parent: f.def().DocName(parent), CollectionId: id, ShowMissing: true})
	if err != nil {
		return nil, err
	}
	out := make([]AdminDoc, 0, len(r.Documents))
	for _, d := range r.Documents {
		rel := strings.TrimPrefix(d.Name, f.def().Documents()+"/")
		if d.UpdateTime == nil {
			out = append(out, AdminDoc{Path: rel, Phantom: true})
			continue
		}
		out = append(out, AdminDoc{Path: rel, Data: firestore.EncodeFields(d.Fields, f.def())})
	}
	return out, nil
}

// ParseSnapshot decodes a snapshot's Firestore documents per database
// without touching any sandbox; project names the default database's
// project.
func ParseSnapshot(data []byte, project string) (map[firestore.DatabaseName][]*pb.Document, error) {
	states, err := decodeSnapshot(data)
	if err != nil {
		return nil, err
	}
	st, ok := states[firestore.ServiceName]
	if !ok {
		return map[firestore.DatabaseName][]*pb.Document{}, nil
	}
	var s firestore.State
	dec := json.NewDecoder(bytes.NewReader(st))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	docs, err := firestore.StateDocuments(project, &s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	return docs, nil
}
