package firestore

import (
	"slices"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// explainPlan runs sq with explain options (no analyze) and returns the
// plan's indexes as "scope: properties", failing unless the answer is one
// response carrying the plan alone.
func explainPlan(t *testing.T, e *Engine, sq *pb.StructuredQuery) []string {
	t.Helper()
	rs, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(),
		QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: sq}, ExplainOptions: &pb.ExplainOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Document != nil || rs[0].ExplainMetrics.GetExecutionStats() != nil {
		t.Fatalf("without analyze: %v; want one response with a plan alone", rs)
	}
	var out []string
	for _, ix := range rs[0].GetExplainMetrics().GetPlanSummary().GetIndexesUsed() {
		out = append(out, ix.Fields["query_scope"].GetStringValue()+": "+ix.Fields["properties"].GetStringValue())
	}
	return out
}

// TestExplainPlan: the indexes a plan names, production's for each shape
// of query: the automatic single-field index of the ordered field, one per
// equality field when they merge, the composite index a query needs (as
// declared, when one is), the scope, and field paths as production
// spells them.
func TestExplainPlan(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/a", map[string]*pb.Value{"a": Int(1), "b": Int(2)})
	e.SetIndexes(&IndexConfig{Indexes: []IndexDef{{CollectionGroup: "d", QueryScope: "COLLECTION",
		Fields: []IndexField{{FieldPath: "`b`", Order: "ASCENDING"}, {FieldPath: "a", Order: "ASCENDING"}, {FieldPath: "c", Order: "DESCENDING"}}}}})
	eq := pb.StructuredQuery_FieldFilter_EQUAL
	cases := []struct {
		name string
		sq   *pb.StructuredQuery
		want []string
	}{
		{"every document", &pb.StructuredQuery{From: from("c")}, []string{"Collection: (__name__ ASC)"}},
		{"by name descending", &pb.StructuredQuery{From: from("c"), OrderBy: []*pb.StructuredQuery_Order{orderBy("__name__", true)}},
			[]string{"Collection: (__name__ DESC)"}},
		{"one equality", &pb.StructuredQuery{From: from("c"), Where: where("a", eq, Int(1))}, []string{"Collection: (a ASC, __name__ ASC)"}},
		{"merged equalities", &pb.StructuredQuery{From: from("c"), Where: and(where("a", eq, Int(1)), where("b", eq, Int(2)))},
			[]string{"Collection: (a ASC, __name__ ASC)", "Collection: (b ASC, __name__ ASC)"}},
		{"disjunction", &pb.StructuredQuery{From: from("c"), Where: or(where("a", eq, Int(1)), where("b", eq, Int(2)))},
			[]string{"Collection: (a ASC, __name__ ASC)", "Collection: (b ASC, __name__ ASC)"}},
		{"array-contains", &pb.StructuredQuery{From: from("c"), Where: where("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, Int(1))},
			[]string{"Collection: (tags CONTAINS, __name__ ASC)"}},
		{"inequality", &pb.StructuredQuery{From: from("c"), Where: where("a", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(0))},
			[]string{"Collection: (a ASC, __name__ ASC)"}},
		{"order descending", &pb.StructuredQuery{From: from("c"), OrderBy: []*pb.StructuredQuery_Order{orderBy("a", true)}},
			[]string{"Collection: (a DESC, __name__ DESC)"}},
		{"quoted field path", &pb.StructuredQuery{From: from("c"), Where: where("`x-y`", eq, Int(1))}, []string{"Collection: (`x-y` ASC, __name__ ASC)"}},
		{"collection group", &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c", AllDescendants: true}}},
			[]string{"Collection group: (__name__ ASC)"}},
		{"declared composite", &pb.StructuredQuery{From: from("d"), Where: and(where("a", eq, Int(1)), where("b", eq, Int(2))),
			OrderBy: []*pb.StructuredQuery_Order{orderBy("c", true)}}, []string{"Collection: (b ASC, a ASC, c DESC, __name__ DESC)"}},
	}
	for _, c := range cases {
		if got := explainPlan(t, e, c.sq); !slices.Equal(got, c.want) {
			t.Errorf("%s: plan %q, want %q", c.name, got, c.want)
		}
	}
}

// TestExplainAnalyzeCounts: with analyze the statistics count skipped
// documents as read (production bills an offset's documents), and the
// last response carries them; without explain options no response has
// metrics.
func TestExplainAnalyzeCounts(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		setT(t, e, "c/"+id, map[string]*pb.Value{"n": Int(1)})
	}
	sq := &pb.StructuredQuery{From: from("c"), Offset: 1, Limit: limit(2)}
	run := func(opts *pb.ExplainOptions) []*pb.RunQueryResponse {
		rs, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(),
			QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: sq}, ExplainOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	for _, r := range run(nil) {
		if r.ExplainMetrics != nil {
			t.Fatalf("metrics without explain options: %v", r)
		}
	}
	rs := run(&pb.ExplainOptions{Analyze: true})
	if len(rs) != 2 || rs[0].ExplainMetrics != nil {
		t.Fatalf("with analyze: %v", rs)
	}
	st := rs[1].GetExplainMetrics().GetExecutionStats()
	ds := st.GetDebugStats().AsMap()
	if st.GetResultsReturned() != 2 || st.GetReadOperations() != 3 || ds["documents_scanned"] != "3" || ds["index_entries_scanned"] != "3" {
		t.Errorf("stats %v, want 2 results, 3 reads (the skipped one billed)", st)
	}
	bd := ds["billing_details"].(map[string]any)
	if bd["documents_billable"] != "3" || bd["index_entries_billable"] != "0" || bd["small_ops"] != "0" || bd["min_query_cost"] != "0" {
		t.Errorf("billing details %v", bd)
	}
}

// TestExplainAggregationBilling: an aggregation bills one read per 1000
// index entries, at least one, and reads no document.
func TestExplainAggregationBilling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		entries, reads, minCost int
	}{{0, 1, 1}, {3, 1, 0}, {1000, 1, 0}, {1001, 2, 0}}
	for _, c := range cases {
		ops, minCost := execStats{aggregation: true, indexEntries: c.entries}.readOps()
		if ops != c.reads || minCost != c.minCost {
			t.Errorf("%d entries: %d reads (min cost %d), want %d (%d)", c.entries, ops, minCost, c.reads, c.minCost)
		}
	}
}

// TestExplainCountUpTo: a count with up_to stops reading index entries
// there; a sum beside it reads every match.
func TestExplainCountUpTo(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		setT(t, e, "c/"+id, map[string]*pb.Value{"n": Int(1)})
	}
	entries := func(aggs ...*pb.StructuredAggregationQuery_Aggregation) string {
		t.Helper()
		rs, err := e.RunAggregationQuery(bg, admin, &pb.RunAggregationQueryRequest{Parent: testDB.Documents(),
			QueryType: &pb.RunAggregationQueryRequest_StructuredAggregationQuery{StructuredAggregationQuery: &pb.StructuredAggregationQuery{
				QueryType:    &pb.StructuredAggregationQuery_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("c")}},
				Aggregations: aggs}},
			ExplainOptions: &pb.ExplainOptions{Analyze: true}})
		if err != nil {
			t.Fatal(err)
		}
		return rs[0].GetExplainMetrics().GetExecutionStats().GetDebugStats().AsMap()["index_entries_scanned"].(string)
	}
	upTo := &pb.StructuredAggregationQuery_Aggregation{Alias: "c", Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{
		Count: &pb.StructuredAggregationQuery_Aggregation_Count{UpTo: wrapperspb.Int64(2)}}}
	sum := &pb.StructuredAggregationQuery_Aggregation{Alias: "s", Operator: &pb.StructuredAggregationQuery_Aggregation_Sum_{
		Sum: &pb.StructuredAggregationQuery_Aggregation_Sum{Field: fref("n")}}}
	if got := entries(upTo); got != "2" {
		t.Errorf("count up to 2: %s entries scanned, want 2", got)
	}
	if got := entries(upTo, sum); got != "4" {
		t.Errorf("count up to 2 and a sum: %s entries scanned, want 4", got)
	}
}
