package firestore_test

import (
	"context"
	"fmt"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// A client write is judged by the rules gate; with no rules loaded only
// admin gets through, and the denial says why.
func Example() {
	ctx := context.Background()
	e := firestore.New(firestore.Options{}) // no rules loaded
	db := firestore.DatabaseName{Project: "demo", Database: firestore.DefaultDatabase}
	write := &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
		Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("users/alice"),
			Fields: map[string]*pb.Value{"age": firestore.Int(30)}}}}}}

	_, err := e.Commit(ctx, identity.NewUser("alice", nil), write)
	fmt.Println(firestore.Code(err), err)
	if d, ok := firestore.DenialOf(err); ok {
		fmt.Println(d.Method, d.Path)
	}

	_, err = e.Commit(ctx, identity.AdminIdentity(), write)
	fmt.Println(err)

	res, _ := e.RunQuery(ctx, identity.AdminIdentity(), &pb.RunQueryRequest{Parent: db.Documents(),
		QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
			From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "users"}},
			Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
				Field: &pb.StructuredQuery_FieldReference{FieldPath: "age"}, Op: pb.StructuredQuery_FieldFilter_GREATER_THAN, Value: firestore.Double(29.5)}}}}}})
	fmt.Println(len(res), res[0].Document.Fields["age"].GetIntegerValue())
	// Output:
	// PermissionDenied Missing or insufficient permissions.
	// create users/alice
	// <nil>
	// 1 30
}

// Declared indexes (firestore.indexes.json) are built when declared and
// kept up to date by every commit; a bad file is an error naming it.
func ExampleEngine_DeclareIndexes() {
	ctx := context.Background()
	e := firestore.New(firestore.Options{})
	db := firestore.DatabaseName{Project: "demo", Database: firestore.DefaultDatabase}
	for i, tags := range [][]string{{"go", "db"}, {"go"}} {
		var vs []*pb.Value
		for _, t := range tags {
			vs = append(vs, firestore.String(t))
		}
		_, err := e.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
			Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(fmt.Sprintf("posts/p%d", i)),
				Fields: map[string]*pb.Value{"tags": firestore.Array(vs...), "likes": firestore.Int(int64(i))}}}}}})
		if err != nil {
			fmt.Println(err)
		}
	}
	cfg, err := firestore.ParseIndexFile("firestore.indexes.json", []byte(`{"indexes": [{"collectionGroup": "posts", "queryScope": "COLLECTION",
	  "fields": [{"fieldPath": "tags", "arrayConfig": "CONTAINS"}, {"fieldPath": "likes", "order": "DESCENDING"}]}]}`))
	if err != nil {
		fmt.Println(err)
	}
	e.DeclareIndexes(cfg)
	e.WaitIndexes()
	for _, ix := range e.MaintainedIndexes(db) {
		fmt.Println(ix.Scope.Path, ix.Fields, ix.Declared, ix.Docs, ix.Entries)
	}

	_, err = firestore.ParseIndexFile("firestore.indexes.json", []byte(`{"indexes": [{"collectionGroup": "posts",
	  "fields": [{"fieldPath": "likes", "order": "DESC"}]}]}`))
	fmt.Println(err)
	// Output:
	// posts [tags CONTAINS likes] true 2 3
	// firestore.indexes.json: indexes[0].fields[0] (likes): unknown order "DESC" (want ASCENDING or DESCENDING)
}
