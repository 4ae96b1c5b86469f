package goclient

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// The high-level client's calls: Set/Create/Update/Delete (Commit), Get and
// GetAll (BatchGetDocuments), queries (RunQuery), aggregations
// (RunAggregationQuery), Collections (ListCollectionIds), DocumentRefs
// (ListDocuments), BulkWriter (BatchWrite), partitions (PartitionQuery).
func TestClientRPCs(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client(t)
	cities := c.Collection("cities")

	// Commit: set, merge, transforms, create, update, delete.
	if _, err := cities.Doc("SF").Set(bg, map[string]any{"name": "San Francisco", "pop": 870000, "tags": []any{"west"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cities.Doc("SF").Set(bg, map[string]any{"state": "CA", "at": firestore.ServerTimestamp}, firestore.MergeAll); err != nil {
		t.Fatal(err)
	}
	wr, err := cities.Doc("LA").Create(bg, map[string]any{"name": "Los Angeles", "pop": 3900000, "state": "CA"})
	if err != nil || wr.UpdateTime.IsZero() {
		t.Fatalf("create: %v %v", wr, err)
	}
	if _, err := cities.Doc("SF").Update(bg, []firestore.Update{
		{Path: "pop", Value: firestore.Increment(1)},
		{Path: "tags", Value: firestore.ArrayUnion("coast", "west")},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cities.Doc("NY").Set(bg, map[string]any{"name": "New York", "pop": 8400000, "state": "NY"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cities.Doc("TMP").Set(bg, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cities.Doc("TMP").Delete(bg); err != nil {
		t.Fatal(err)
	}

	// BatchGetDocuments.
	sf, err := cities.Doc("SF").Get(bg)
	if err != nil {
		t.Fatal(err)
	}
	if d := sf.Data(); d["pop"] != int64(870001) || d["state"] != "CA" || fmt.Sprint(d["tags"]) != "[west coast]" {
		t.Errorf("SF = %v", d)
	}
	if at, ok := sf.Data()["at"].(time.Time); !ok || at.IsZero() {
		t.Errorf("server timestamp = %v", sf.Data()["at"])
	}
	snaps, err := c.GetAll(bg, []*firestore.DocumentRef{cities.Doc("LA"), cities.Doc("TMP"), cities.Doc("SF")})
	if err != nil || len(snaps) != 3 || !snaps[0].Exists() || snaps[1].Exists() || snaps[2].Ref.ID != "SF" {
		t.Fatalf("GetAll: %v %v", snaps, err)
	}

	// RunQuery: filters, order, cursors, limits, projections.
	q := cities.Where("state", "==", "CA").OrderBy("pop", firestore.Desc)
	docs, err := q.Documents(bg).GetAll()
	if err != nil || len(docs) != 2 || docs[0].Ref.ID != "LA" {
		t.Fatalf("query: %v %v", ids(docs), err)
	}
	docs, err = cities.OrderBy("pop", firestore.Asc).StartAfter(870001).Limit(1).Documents(bg).GetAll()
	if err != nil || len(ids(docs)) != 1 || docs[0].Ref.ID != "LA" {
		t.Fatalf("cursor query: %v %v", ids(docs), err)
	}
	docs, err = cities.OrderBy("pop", firestore.Asc).LimitToLast(2).Documents(bg).GetAll()
	if err != nil || fmt.Sprint(ids(docs)) != "[LA NY]" {
		t.Fatalf("limitToLast: %v %v", ids(docs), err)
	}
	docs, err = cities.Select("name").Where("pop", ">", 1000000).Documents(bg).GetAll()
	if err != nil || len(docs) != 2 || len(docs[0].Data()) != 1 {
		t.Fatalf("select: %v %v", docs, err)
	}
	docs, err = cities.WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{
		firestore.PropertyFilter{Path: "state", Operator: "==", Value: "NY"},
		firestore.PropertyFilter{Path: "pop", Operator: "<", Value: 1000000},
	}}).Documents(bg).GetAll()
	// Ordered by the inequality field first, as the official emulator does.
	if err != nil || fmt.Sprint(ids(docs)) != "[SF NY]" {
		t.Fatalf("or query: %v %v", ids(docs), err)
	}

	// RunAggregationQuery.
	caQ := cities.Where("state", "==", "CA")
	agg, err := caQ.NewAggregationQuery().WithCount("n").WithSum("pop", "total").WithAvg("pop", "avg").Get(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := agg["n"].(*pb.Value).GetIntegerValue(); n != 2 {
		t.Errorf("count = %v", agg["n"])
	}
	if s := agg["total"].(*pb.Value).GetIntegerValue(); s != 4770001 {
		t.Errorf("sum = %v", agg["total"])
	}
	if a := agg["avg"].(*pb.Value).GetDoubleValue(); a != 2385000.5 {
		t.Errorf("avg = %v", agg["avg"])
	}

	// ListCollectionIds and ListDocuments (with a missing parent).
	if _, err := c.Doc("cities/SF/landmarks/bridge").Set(bg, map[string]any{"name": "Golden Gate"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("ghosts/g1/sub/x").Set(bg, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	var colls []string
	for it := c.Collections(bg); ; {
		cr, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		colls = append(colls, cr.ID)
	}
	if fmt.Sprint(colls) != "[cities ghosts]" {
		t.Errorf("Collections = %v", colls)
	}
	sub, err := cities.Doc("SF").Collections(bg).GetAll()
	if err != nil || len(sub) != 1 || sub[0].ID != "landmarks" {
		t.Errorf("SF collections = %v %v", sub, err)
	}
	refs, err := c.Collection("ghosts").DocumentRefs(bg).GetAll()
	if err != nil || len(refs) != 1 || refs[0].ID != "g1" {
		t.Errorf("DocumentRefs with a missing document = %v %v", refs, err)
	}

	// BatchWrite through the BulkWriter: 45 writes, more than one request.
	bw := c.BulkWriter(bg)
	var jobs []*firestore.BulkWriterJob
	for i := range 45 {
		j, err := bw.Set(c.Collection("bulk").Doc(fmt.Sprintf("d%02d", i)), map[string]any{"i": i})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	dup, err := bw.Create(cities.Doc("SF"), map[string]any{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	bw.End()
	for _, j := range jobs {
		if _, err := j.Results(); err != nil {
			t.Fatalf("bulk job: %v", err)
		}
	}
	_, err = dup.Results()
	wantCode(t, "bulk create of an existing document", err, codes.AlreadyExists)
	n, err := c.Collection("bulk").NewAggregationQuery().WithCount("n").Get(bg)
	if err != nil || n["n"].(*pb.Value).GetIntegerValue() != 45 {
		t.Errorf("bulk count = %v %v", n, err)
	}

	// PartitionQuery.
	parts, err := c.CollectionGroup("bulk").GetPartitionedQueries(bg, 4)
	if err != nil || len(parts) != 4 {
		t.Fatalf("partitions: %d %v", len(parts), err)
	}
	total := 0
	for _, p := range parts {
		d, err := p.Documents(bg).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		total += len(d)
	}
	if total != 45 {
		t.Errorf("partitions cover %d documents, want 45", total)
	}
}

func ids(docs []*firestore.DocumentSnapshot) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Ref.ID
	}
	return out
}

// The RPCs the high-level client never calls, through the generated client.
func TestRawRPCs(t *testing.T) {
	t.Parallel()
	s := start(t)
	rc := raw(t, s, "owner")
	parent := dbPath(s) + "/documents"

	created, err := rc.CreateDocument(bg, &pb.CreateDocumentRequest{Parent: parent, CollectionId: "things", DocumentId: "a",
		Document: &pb.Document{Fields: map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}}}})
	if err != nil || created.GetName() != docPath(s, "things/a") || created.GetCreateTime() == nil {
		t.Fatalf("CreateDocument: %v %v", created, err)
	}
	_, err = rc.CreateDocument(bg, &pb.CreateDocumentRequest{Parent: parent, CollectionId: "things", DocumentId: "a", Document: &pb.Document{}})
	wantCode(t, "CreateDocument twice", err, codes.AlreadyExists)
	auto, err := rc.CreateDocument(bg, &pb.CreateDocumentRequest{Parent: parent, CollectionId: "things", Document: &pb.Document{}})
	if err != nil || len(auto.GetName()) != len(docPath(s, "things/"))+20 {
		t.Errorf("CreateDocument with an auto id: %v %v", auto.GetName(), err)
	}

	got, err := rc.GetDocument(bg, &pb.GetDocumentRequest{Name: docPath(s, "things/a")})
	if err != nil || got.GetFields()["n"].GetIntegerValue() != 1 {
		t.Fatalf("GetDocument: %v %v", got, err)
	}
	_, err = rc.GetDocument(bg, &pb.GetDocumentRequest{Name: docPath(s, "things/missing")})
	wantCode(t, "GetDocument of a missing document", err, codes.NotFound)

	upd, err := rc.UpdateDocument(bg, &pb.UpdateDocumentRequest{
		Document:   &pb.Document{Name: docPath(s, "things/a"), Fields: map[string]*pb.Value{"m": {ValueType: &pb.Value_StringValue{StringValue: "x"}}}},
		UpdateMask: &pb.DocumentMask{FieldPaths: []string{"m"}},
	})
	if err != nil || upd.GetFields()["n"].GetIntegerValue() != 1 || upd.GetFields()["m"].GetStringValue() != "x" {
		t.Fatalf("UpdateDocument: %v %v", upd, err)
	}
	_, err = rc.UpdateDocument(bg, &pb.UpdateDocumentRequest{
		Document:        &pb.Document{Name: docPath(s, "things/nope")},
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}},
	})
	wantCode(t, "UpdateDocument of a missing document with exists=true", err, codes.NotFound)

	// Two documents, one per page; the mask keeps only n.
	it := rc.ListDocuments(bg, &pb.ListDocumentsRequest{Parent: parent, CollectionId: "things", PageSize: 1,
		Mask: &pb.DocumentMask{FieldPaths: []string{"n"}}})
	var listed []*pb.Document
	for {
		d, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, d)
	}
	if len(listed) != 2 || !slices.ContainsFunc(listed, func(d *pb.Document) bool {
		return d.GetName() == docPath(s, "things/a") && len(d.GetFields()) == 1
	}) {
		t.Errorf("ListDocuments: %v", listed)
	}

	if err := rc.DeleteDocument(bg, &pb.DeleteDocumentRequest{Name: docPath(s, "things/a")}); err != nil {
		t.Fatal(err)
	}
	err = rc.DeleteDocument(bg, &pb.DeleteDocumentRequest{Name: docPath(s, "things/a"),
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}})
	wantCode(t, "DeleteDocument of a deleted document with exists=true", err, codes.NotFound)

	// BeginTransaction, reads in it, Rollback; then the id is dead.
	tx, err := rc.BeginTransaction(bg, &pb.BeginTransactionRequest{Database: dbPath(s)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Rollback(bg, &pb.RollbackRequest{Database: dbPath(s), Transaction: tx.GetTransaction()}); err != nil {
		t.Fatal(err)
	}
	_, err = rc.Commit(bg, &pb.CommitRequest{Database: dbPath(s), Transaction: tx.GetTransaction()})
	wantCode(t, "Commit of a rolled-back transaction", err, codes.InvalidArgument, "transaction")

	// The official emulator has no pipelines: neither does pyric.
	st, err := rc.ExecutePipeline(bg, &pb.ExecutePipelineRequest{Database: dbPath(s)})
	if err == nil {
		_, err = st.Recv()
	}
	wantCode(t, "ExecutePipeline", err, codes.Unimplemented)
	_ = fieldmaskpb.New
}

// The JS SDK's Write stream (wire-protocols.md §1.4): handshake with a
// stream token and no results, then one response per batch, in order; a
// failing batch ends the stream with its error.
func TestWriteStream(t *testing.T) {
	t.Parallel()
	s := start(t)
	rc := raw(t, s, "owner")
	ws, err := rc.Write(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Send(&pb.WriteRequest{Database: dbPath(s)}); err != nil {
		t.Fatal(err)
	}
	hs, err := ws.Recv()
	if err != nil || len(hs.GetStreamToken()) == 0 || hs.GetStreamId() == "" || len(hs.GetWriteResults()) != 0 {
		t.Fatalf("handshake: %v %v", hs, err)
	}
	token := hs.GetStreamToken()
	set := func(id string, n int64) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: docPath(s, "w/"+id),
			Fields: map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: n}}}}}}
	}
	for i := range 3 {
		inc := set(fmt.Sprint(i), 1)
		inc.UpdateTransforms = []*pb.DocumentTransform_FieldTransform{{FieldPath: "m",
			TransformType: &pb.DocumentTransform_FieldTransform_Increment{Increment: &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: 2}}}}}
		if err := ws.Send(&pb.WriteRequest{StreamToken: token, Writes: []*pb.Write{inc, set(fmt.Sprint(i)+"b", 2)}}); err != nil {
			t.Fatal(err)
		}
		r, err := ws.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetWriteResults()) != 2 || r.GetCommitTime() == nil || len(r.GetWriteResults()[0].GetTransformResults()) != 1 ||
			len(r.GetStreamToken()) == 0 || string(r.GetStreamToken()) == string(token) {
			t.Fatalf("batch %d: %v", i, r)
		}
		token = r.GetStreamToken()
	}
	// A request without writes only acknowledges: no answer; the next batch still works.
	ws.Send(&pb.WriteRequest{StreamToken: token})
	create := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: docPath(s, "w/0")}},
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}}
	ws.Send(&pb.WriteRequest{StreamToken: token, Writes: []*pb.Write{create}})
	_, err = ws.Recv()
	wantCode(t, "write stream create of an existing document", err, codes.AlreadyExists)

	c := s.Client(t)
	docs, err := c.Collection("w").Documents(bg).GetAll()
	if err != nil || len(docs) != 6 || docs[0].Data()["m"] != int64(2) {
		t.Errorf("after the stream: %d docs %v", len(docs), err)
	}

	// A stream closed by the client right after the handshake ends cleanly.
	ws2, _ := rc.Write(bg)
	ws2.Send(&pb.WriteRequest{Database: dbPath(s)})
	if _, err := ws2.Recv(); err != nil {
		t.Fatal(err)
	}
	ws2.CloseSend()
	if _, err := ws2.Recv(); err != io.EOF {
		t.Errorf("after CloseSend: %v", err)
	}
}

// Projects and databases are routed by resource name: the same paths in
// four databases are four documents.
func TestProjectsAndDatabases(t *testing.T) {
	t.Parallel()
	s := fstest.Start(t, fstest.Options{Project: "p1"})
	type db struct{ project, database string }
	dbs := []db{{"p1", "(default)"}, {"p1", "other"}, {"p2", "(default)"}, {"p2", "third"}}
	for i, d := range dbs {
		c := s.ClientAs(t, d.project, d.database, "owner")
		if _, err := c.Doc("shared/doc").Set(bg, map[string]any{"i": i}); err != nil {
			t.Fatalf("%v: %v", d, err)
		}
	}
	for i, d := range dbs {
		c := s.ClientAs(t, d.project, d.database, "owner")
		snap, err := c.Doc("shared/doc").Get(bg)
		if err != nil || snap.Data()["i"] != int64(i) {
			t.Errorf("%v: %v %v", d, snap.Data(), err)
		}
		n, err := c.Collection("shared").NewAggregationQuery().WithCount("n").Get(bg)
		if err != nil || n["n"].(*pb.Value).GetIntegerValue() != 1 {
			t.Errorf("%v count: %v %v", d, n, err)
		}
	}
	var got []string
	for _, name := range s.Engine.Databases() {
		got = append(got, name.String())
	}
	sort.Strings(got)
	want := "[projects/p1/databases/(default) projects/p1/databases/other projects/p2/databases/(default) projects/p2/databases/third]"
	if fmt.Sprint(got) != want {
		t.Errorf("engine databases = %v", got)
	}
}
