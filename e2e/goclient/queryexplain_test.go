package goclient

import (
	"reflect"
	"testing"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"

	pyric "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// plan is the plan summary production gives for one index.
func plan(properties string) []*map[string]any {
	return []*map[string]any{{"query_scope": "Collection", "properties": properties}}
}

// explained runs q to the end and returns its documents and metrics.
func explained(t *testing.T, q firestore.Query) ([]*firestore.DocumentSnapshot, *firestore.ExplainMetrics) {
	t.Helper()
	it := q.Documents(bg)
	docs, err := it.GetAll()
	if err != nil {
		t.Fatal(err)
	}
	m, err := it.ExplainMetrics()
	if err != nil {
		t.Fatal(err)
	}
	return docs, m
}

// wantStats checks the statistics production's own integration tests
// check (results, billed reads, documents and index entries scanned as
// strings), and that billing details are there.
func wantStats(t *testing.T, what string, st *firestore.ExecutionStats, results, reads int64, docs, entries string) {
	t.Helper()
	if st == nil {
		t.Fatalf("%s: no execution stats", what)
	}
	if st.ResultsReturned != results || st.ReadOperations != reads {
		t.Errorf("%s: results %d, reads %d; want %d, %d", what, st.ResultsReturned, st.ReadOperations, results, reads)
	}
	if st.ExecutionDuration == nil {
		t.Errorf("%s: no execution duration", what)
	}
	ds := *st.DebugStats
	if ds["documents_scanned"] != docs || ds["index_entries_scanned"] != entries {
		t.Errorf("%s: debug stats %v; want documents_scanned %q, index_entries_scanned %q", what, ds, docs, entries)
	}
	if _, ok := ds["billing_details"].(map[string]any); !ok {
		t.Errorf("%s: debug stats %v lack billing_details", what, ds)
	}
}

// TestQueryExplain: Query Explain through the official Go client, with
// production's answers (those of the client's own integration tests where
// they have one): without analyze a plan and no documents; with analyze
// the documents, the plan and the statistics; a composite index as
// declared; aggregations; and rules applying as to the query itself.
func TestQueryExplain(t *testing.T) {
	t.Parallel()
	s := fstest.Start(t, fstest.Options{Project: "demo-goclient", Rules: rules, Indexes: &pyric.IndexConfig{Indexes: []pyric.IndexDef{{
		CollectionGroup: "open", QueryScope: "COLLECTION",
		Fields: []pyric.IndexField{{FieldPath: "category", Order: "ASCENDING"}, {FieldPath: "price", Order: "DESCENDING"}},
	}}}})
	admin := s.Client(t)
	coll := admin.Collection("open")
	for i, d := range []map[string]any{
		{"N": 0, "category": "a", "price": 3, "weight": 0.5},
		{"N": 1, "category": "a", "price": 5, "weight": 0.5},
		{"N": 2, "category": "b", "price": 4, "weight": 0.5},
		{"N": 3, "category": "a", "price": 1, "weight": 2},
		{"N": 4, "category": "b", "price": 2, "weight": 3},
	} {
		if _, err := coll.Doc(string(rune('a'+i))).Set(bg, d); err != nil {
			t.Fatal(err)
		}
	}

	docs, m := explained(t, coll.WithRunOptions(firestore.ExplainOptions{}).OrderBy("N", firestore.Asc))
	if len(docs) != 0 || m == nil || m.ExecutionStats != nil {
		t.Fatalf("without analyze: %d documents, metrics %+v; want none, a plan alone", len(docs), m)
	}
	if !reflect.DeepEqual(m.PlanSummary.IndexesUsed, plan("(N ASC, __name__ ASC)")) {
		t.Errorf("plan = %v", *m.PlanSummary.IndexesUsed[0])
	}

	docs, m = explained(t, coll.WithRunOptions(firestore.ExplainOptions{Analyze: true}).OrderBy("N", firestore.Asc))
	if len(docs) != 5 || docs[0].Ref.ID != "a" || docs[4].Ref.ID != "e" {
		t.Fatalf("with analyze: %d documents", len(docs))
	}
	if !reflect.DeepEqual(m.PlanSummary.IndexesUsed, plan("(N ASC, __name__ ASC)")) {
		t.Errorf("plan = %v", *m.PlanSummary.IndexesUsed[0])
	}
	wantStats(t, "with analyze", m.ExecutionStats, 5, 5, "5", "5")

	docs, m = explained(t, coll.WithRunOptions(firestore.ExplainOptions{Analyze: true}).Where("category", "==", "a").OrderBy("price", firestore.Desc))
	if len(docs) != 3 || docs[0].Ref.ID != "b" {
		t.Fatalf("composite: %d documents", len(docs))
	}
	if !reflect.DeepEqual(m.PlanSummary.IndexesUsed, plan("(category ASC, price DESC, __name__ DESC)")) {
		t.Errorf("composite plan = %v", *m.PlanSummary.IndexesUsed[0])
	}
	wantStats(t, "composite", m.ExecutionStats, 3, 3, "3", "3")

	// No result still bills the minimum query cost of one read.
	_, m = explained(t, coll.WithRunOptions(firestore.ExplainOptions{Analyze: true}).Where("category", "==", "z"))
	wantStats(t, "no result", m.ExecutionStats, 0, 1, "0", "0")
	if bd := (*m.ExecutionStats.DebugStats)["billing_details"].(map[string]any); bd["min_query_cost"] != "1" {
		t.Errorf("no result: billing details %v, want min_query_cost 1", bd)
	}

	agg := func(opts firestore.ExplainOptions) *firestore.AggregationResponse {
		t.Helper()
		q := coll.Where("weight", "<=", 1).WithRunOptions(opts)
		res, err := q.NewAggregationQuery().
			WithCount("count1").WithAvg("weight", "weight_avg1").WithSum("weight", "weight_sum1").GetResponse(bg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := agg(firestore.ExplainOptions{})
	if res.Result != nil || res.ExplainMetrics == nil || res.ExplainMetrics.ExecutionStats != nil {
		t.Fatalf("aggregation without analyze: result %v, metrics %+v; want a plan alone", res.Result, res.ExplainMetrics)
	}
	if !reflect.DeepEqual(res.ExplainMetrics.PlanSummary.IndexesUsed, plan("(weight ASC, __name__ ASC)")) {
		t.Errorf("aggregation plan = %v", *res.ExplainMetrics.PlanSummary.IndexesUsed[0])
	}
	res = agg(firestore.ExplainOptions{Analyze: true})
	if n := res.Result["count1"].(*pb.Value).GetIntegerValue(); n != 3 {
		t.Errorf("aggregation with analyze: count %d, want 3", n)
	}
	if res.ExplainMetrics == nil {
		t.Fatal("aggregation with analyze: no metrics")
	}
	wantStats(t, "aggregation", res.ExplainMetrics.ExecutionStats, 1, 1, "0", "3")

	// Rules decide an explained query as the query itself: denied with or
	// without analyze.
	alice := s.ClientAs(t, s.Project, firestore.DefaultDatabaseID, mockToken("alice"))
	for _, analyze := range []bool{false, true} {
		_, err := alice.Collection("users").WithRunOptions(firestore.ExplainOptions{Analyze: analyze}).Documents(bg).GetAll()
		wantCode(t, "explained denied query", err, codes.PermissionDenied)
	}
}
