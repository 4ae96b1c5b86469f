package firestore

import (
	"google.golang.org/protobuf/proto"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func nearestQuery(measure pb.StructuredQuery_FindNearest_DistanceMeasure, lim int32, threshold *float64, vec ...float64) *pb.StructuredQuery {
	fn := &pb.StructuredQuery_FindNearest{VectorField: fref("v"), QueryVector: Vector(vec...), DistanceMeasure: measure,
		Limit: wrapperspb.Int32(lim), DistanceResultField: "dist"}
	if threshold != nil {
		fn.DistanceThreshold = wrapperspb.Double(*threshold)
	}
	return &pb.StructuredQuery{From: from("vec"), FindNearest: fn}
}

func TestFindNearest(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "vec/a", M("v", Vector(0, 0)))
	setT(t, e, "vec/b", M("v", Vector(3, 4)))
	setT(t, e, "vec/c", M("v", Vector(1, 0)))
	setT(t, e, "vec/d", M("v", Vector(1, 1, 1))) // other dimension: never returned
	setT(t, e, "vec/e", M("v", String("not a vector")))
	if got := ids(t, e, nearestQuery(pb.StructuredQuery_FindNearest_EUCLIDEAN, 2, nil, 0, 0)); !equalStrings(got, []string{"a", "c"}) {
		t.Errorf("euclidean nearest = %v", got)
	}
	five := 5.0
	if got := ids(t, e, nearestQuery(pb.StructuredQuery_FindNearest_EUCLIDEAN, 10, &five, 0, 0)); !equalStrings(got, []string{"a", "c", "b"}) {
		t.Errorf("euclidean within 5 = %v", got)
	}
	if got := ids(t, e, nearestQuery(pb.StructuredQuery_FindNearest_DOT_PRODUCT, 3, nil, 1, 1)); !equalStrings(got, []string{"b", "c", "a"}) {
		t.Errorf("dot product ranks largest first = %v", got)
	}
	r, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{
		StructuredQuery: nearestQuery(pb.StructuredQuery_FindNearest_EUCLIDEAN, 1, nil, 3, 4)}})
	if err != nil || len(r) == 0 || r[0].Document.Fields["dist"].GetDoubleValue() != 0 {
		t.Errorf("distance result field: %v %v", r, err)
	}
	bad := nearestQuery(pb.StructuredQuery_FindNearest_EUCLIDEAN, 0, nil, 1)
	if _, err := queryIDs(e, admin, testDB.Documents(), bad); Code(err).String() != "InvalidArgument" {
		t.Errorf("limit 0: %v", err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestExactDoubleSums: doubles are summed exactly and rounded once, as the
// emulator does, so 4.8+5.9+6.0+7.1+8.2 is 32 and its average 6.4.
func TestExactDoubleSums(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	for i, f := range []float64{4.8, 5.9, 6.0, 7.1, 8.2} {
		setT(t, e, "nums/"+string(rune('a'+i)), M("x", Double(f)))
	}
	r, err := e.RunAggregationQuery(bg, admin, &pb.RunAggregationQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunAggregationQueryRequest_StructuredAggregationQuery{
		StructuredAggregationQuery: &pb.StructuredAggregationQuery{QueryType: &pb.StructuredAggregationQuery_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("nums")}},
			Aggregations: []*pb.StructuredAggregationQuery_Aggregation{
				{Alias: "s", Operator: &pb.StructuredAggregationQuery_Aggregation_Sum_{Sum: &pb.StructuredAggregationQuery_Aggregation_Sum{Field: fref("x")}}},
				{Alias: "a", Operator: &pb.StructuredAggregationQuery_Aggregation_Avg_{Avg: &pb.StructuredAggregationQuery_Aggregation_Avg{Field: fref("x")}}},
			}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := r[0].Result.AggregateFields
	if f["s"].GetDoubleValue() != 32 || f["a"].GetDoubleValue() != 6.4 {
		t.Errorf("sum %v avg %v, want 32 and 6.4", f["s"], f["a"])
	}
}

// TestReadBeforeFirstCommit: a read at a time before the database's first
// write sees it empty instead of failing, as on the emulator.
func TestReadBeforeFirstCommit(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	before := time.Now().Add(-time.Second).Truncate(time.Microsecond)
	setT(t, e, "early/a", M("x", Int(1)))
	r, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(),
		QueryType:           &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("early")}},
		ConsistencySelector: &pb.RunQueryRequest_ReadTime{ReadTime: timestamppb.New(before)}})
	if err != nil {
		t.Fatalf("read before the first commit: %v", err)
	}
	for _, x := range r {
		if x.Document != nil {
			t.Errorf("found %s at a time before it was written", x.Document.Name)
		}
	}
}

// TestNotInWithDisjunction: not-in can't be combined with in,
// array-contains-any or OR (INVALID_ARGUMENT, as the emulator says).
func TestNotInWithDisjunction(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	notIn := where("a", pb.StructuredQuery_FieldFilter_NOT_IN, Array(Int(1)))
	in := where("b", pb.StructuredQuery_FieldFilter_IN, Array(Int(2)))
	for _, f := range []*pb.StructuredQuery_Filter{and(notIn, in), or(notIn, where("c", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)))} {
		if _, err := queryIDs(e, admin, testDB.Documents(), &pb.StructuredQuery{From: from("q"), Where: f}); Code(err).String() != "InvalidArgument" {
			t.Errorf("not-in with a disjunction: %v", err)
		}
	}
}

// TestVerifyWrite: a verify write checks its precondition and changes
// nothing; it is what the JS SDKs send for documents a transaction read
// but does not write.
func TestVerifyWrite(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "v/read", M("n", Int(1)))
	cur := getT(t, e, "v/read")
	ok := VerifyWrite(name("v/read"), &pb.Precondition{ConditionType: &pb.Precondition_UpdateTime{UpdateTime: cur.UpdateTime}})
	r := commitT(t, e, admin, ok, upd("v/written", M("x", Int(2))))
	if len(r.WriteResults) != 2 {
		t.Fatalf("results = %v", r.WriteResults)
	}
	if got := getT(t, e, "v/read"); !proto.Equal(got.UpdateTime, cur.UpdateTime) {
		t.Errorf("verify changed the document: %v", got)
	}
	setT(t, e, "v/read", M("n", Int(2)))
	stale := VerifyWrite(name("v/read"), &pb.Precondition{ConditionType: &pb.Precondition_UpdateTime{UpdateTime: cur.UpdateTime}})
	if _, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{stale, upd("v/other", M("x", Int(3)))}}); Code(err).String() != "FailedPrecondition" {
		t.Errorf("stale verify: %v", err)
	}
	if getT(t, e, "v/other") != nil {
		t.Error("a failed verify let the rest of the commit through")
	}
	absent := VerifyWrite(name("v/none"), &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}})
	commitT(t, e, admin, absent)
	if _, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{{}}}); Code(err).String() != "InvalidArgument" {
		t.Errorf("empty write: %v", err)
	}
}
