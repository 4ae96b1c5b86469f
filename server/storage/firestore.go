package storageserver

import (
	"context"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/rules/value"
)

// FirestoreLookup resolves storage rules' firestore.get()/exists() against
// pyric's own Firestore: the project's default database, read as admin
// (production's cross-service reads do not go through Firestore's rules).
// The storage engine's rules binding caps them at 2 distinct documents per
// request.
func FirestoreLookup(fs *firestore.Engine, project string) srules.FirestoreLookup {
	return srules.FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		name := "projects/" + project + "/databases/(default)/documents/" + strings.TrimPrefix(path, "/")
		doc, err := fs.GetDocument(context.Background(), identity.AdminIdentity(), &pb.GetDocumentRequest{Name: name})
		if status.Code(err) == codes.NotFound {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return firestore.FieldsToRules(doc.Fields), true, nil
	})
}
