package firestore

import (
	"context"
	"math"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
)

var (
	testDB = DatabaseName{Project: "p", Database: DefaultDatabase}
	admin  = identity.AdminIdentity()
	bg     = context.Background()
)

func name(rel string) string { return testDB.DocName(rel) }

func newTestEngine(t testing.TB) *Engine {
	t.Helper()
	return New(Options{Rules: AllowAll})
}

func upd(rel string, fields map[string]*pb.Value) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: name(rel), Fields: fields}}}
}

func del(rel string) *pb.Write { return &pb.Write{Operation: &pb.Write_Delete{Delete: name(rel)}} }

func commitT(t testing.TB, e *Engine, who identity.Identity, ws ...*pb.Write) *pb.CommitResponse {
	t.Helper()
	r, err := e.Commit(bg, who, &pb.CommitRequest{Database: testDB.String(), Writes: ws})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return r
}

func setT(t testing.TB, e *Engine, rel string, fields map[string]*pb.Value) {
	t.Helper()
	commitT(t, e, admin, upd(rel, fields))
}

func getT(t testing.TB, e *Engine, rel string) *pb.Document {
	t.Helper()
	r, err := e.BatchGetDocuments(bg, admin, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name(rel)}})
	if err != nil {
		t.Fatalf("get %s: %v", rel, err)
	}
	return r[0].GetFound()
}

func fref(p string) *pb.StructuredQuery_FieldReference {
	return &pb.StructuredQuery_FieldReference{FieldPath: p}
}

func where(f string, op pb.StructuredQuery_FieldFilter_Operator, v *pb.Value) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{Field: fref(f), Op: op, Value: v}}}
}

func unary(f string, op pb.StructuredQuery_UnaryFilter_Operator) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_UnaryFilter{UnaryFilter: &pb.StructuredQuery_UnaryFilter{Op: op, OperandType: &pb.StructuredQuery_UnaryFilter_Field{Field: fref(f)}}}}
}

func and(fs ...*pb.StructuredQuery_Filter) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{Op: pb.StructuredQuery_CompositeFilter_AND, Filters: fs}}}
}

func or(fs ...*pb.StructuredQuery_Filter) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{Op: pb.StructuredQuery_CompositeFilter_OR, Filters: fs}}}
}

func orderBy(f string, desc bool) *pb.StructuredQuery_Order {
	d := pb.StructuredQuery_ASCENDING
	if desc {
		d = pb.StructuredQuery_DESCENDING
	}
	return &pb.StructuredQuery_Order{Field: fref(f), Direction: d}
}

func from(coll string) []*pb.StructuredQuery_CollectionSelector {
	return []*pb.StructuredQuery_CollectionSelector{{CollectionId: coll}}
}

func limit(n int32) *wrapperspb.Int32Value { return wrapperspb.Int32(n) }

// ids runs a query as admin and returns the result document ids.
func ids(t testing.TB, e *Engine, sq *pb.StructuredQuery) []string {
	t.Helper()
	out, err := queryIDs(e, admin, testDB.Documents(), sq)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return out
}

func queryIDs(e *Engine, who identity.Identity, parent string, sq *pb.StructuredQuery) ([]string, error) {
	r, err := e.RunQuery(bg, who, &pb.RunQueryRequest{Parent: parent, QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: sq}})
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, x := range r {
		if x.Document != nil {
			out = append(out, fsvalue.DocID(x.Document.Name))
		}
	}
	return out, nil
}

func tsv(sec int64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: sec}}}
}
func bytesv(b string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: []byte(b)}}
}
func refv(rel string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: name(rel)}}
}
func geov(lat, lng float64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: lat, Longitude: lng}}}
}

var nan = math.NaN()

// fakeClock is a deterministic clock advancing 1ms per call.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { c.t = c.t.Add(time.Millisecond); return c.t }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
