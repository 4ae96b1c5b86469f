package firestore

import (
	"fmt"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A count alone counts the matching documents without collecting them
// (queryOrCount); its result must still be the length of the query's
// result, after filters, cursors, offset and limit, with up_to applied.
func TestCountMatchesQuery(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	for i := range 20 {
		setT(t, e, fmt.Sprintf("n/d%02d", i), M("v", Int(int64(i)), "odd", Bool(i%2 == 1)))
	}
	setT(t, e, "n/nov", M("odd", Bool(true)))
	// A deleted document (kept as history) is not counted.
	commitT(t, e, admin, &pb.Write{Operation: &pb.Write_Delete{Delete: name("n/d03")}})
	gt5 := where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(5))
	cases := []struct {
		name string
		sq   *pb.StructuredQuery
		upTo int64
	}{
		{"all", &pb.StructuredQuery{}, 0},
		{"by name", &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("__name__", true)}, Limit: limit(7)}, 0},
		{"filter", &pb.StructuredQuery{Where: gt5}, 0},
		{"equality", &pb.StructuredQuery{Where: where("odd", pb.StructuredQuery_FieldFilter_EQUAL, Bool(true))}, 0},
		{"order needs the field", &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("v", true)}}, 0},
		{"offset", &pb.StructuredQuery{Where: gt5, Offset: 4}, 0},
		{"offset past the end", &pb.StructuredQuery{Where: gt5, Offset: 40}, 0},
		{"limit", &pb.StructuredQuery{Where: gt5, Limit: limit(3)}, 0},
		{"offset and limit", &pb.StructuredQuery{Where: gt5, Offset: 12, Limit: limit(3)}, 0},
		{"start cursor", &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("v", false)}, StartAt: &pb.Cursor{Values: []*pb.Value{Int(15)}}}, 0},
		{"up to", &pb.StructuredQuery{Where: gt5}, 4},
		{"up to past the count", &pb.StructuredQuery{Where: gt5}, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.sq.From = from("n")
			rs, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: c.sq}})
			if err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			for _, r := range rs {
				if r.Document != nil {
					want++
				}
			}
			cnt := &pb.StructuredAggregationQuery_Aggregation_Count{}
			if c.upTo > 0 {
				cnt.UpTo = wrapperspb.Int64(c.upTo)
				want = min(want, c.upTo)
			}
			ar, err := e.RunAggregationQuery(bg, admin, &pb.RunAggregationQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunAggregationQueryRequest_StructuredAggregationQuery{
				StructuredAggregationQuery: &pb.StructuredAggregationQuery{QueryType: &pb.StructuredAggregationQuery_StructuredQuery{StructuredQuery: c.sq},
					Aggregations: []*pb.StructuredAggregationQuery_Aggregation{{Alias: "n", Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: cnt}}}}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := ar[0].Result.AggregateFields["n"].GetIntegerValue(); got != want {
				t.Errorf("count = %d, want %d (the query's results)", got, want)
			}
		})
	}
}
