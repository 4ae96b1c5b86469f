package firestore

import (
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// RequiredIndex returns the composite index production needs to serve sq
// (run under the relative parent path), and false when its automatic
// single-field indexes serve it. It is the need checkIndex enforces, for
// tools that suggest firestore.indexes.json from real queries.
func RequiredIndex(db DatabaseName, parent string, sq *pb.StructuredQuery) (IndexDef, bool, error) {
	q, err := compileQuery(db, parent, sq)
	if err != nil {
		return IndexDef{}, false, err
	}
	n, ok := q.indexNeed()
	if !ok {
		return IndexDef{}, false, nil
	}
	def := IndexDef{CollectionGroup: q.collID, QueryScope: "COLLECTION", Fields: append(slices.Clone(n.eq), n.orders...)}
	if n.group {
		def.QueryScope = "COLLECTION_GROUP"
	}
	return def, true, nil
}
