package firestore

import (
	"strconv"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// Query Explain (ExplainOptions on RunQuery and RunAggregationQuery), as
// production answers it: without analyze the query is planned, not run,
// and one response carries the plan alone; with analyze the results come
// as usual and the last response adds the execution statistics.
//
// The plan names the index production would use, which is what a
// developer tunes locally: the declared composite index serving the query
// (the one checkIndex demands), else the automatic single-field indexes
// (Pyric's own walks of its in-memory indexes are not production's and
// are not reported). The statistics count as production does over an
// index that serves the query exactly: a query reads one index entry and
// one document per result (skipped ones included) and bills one read per
// document, at least one; an aggregation reads index entries only and
// bills one read per 1000 of them, at least one.

// queryRun says how much of a query to run.
type queryRun int

const (
	runDocuments queryRun = iota // collect the documents
	runCount                     // the number of results may come alone
	runPlan                      // authorize only: explain without analyze
)

// explainRun is the run an explain option asks for, given the run the
// request otherwise needs.
func explainRun(opts *pb.ExplainOptions, run queryRun) queryRun {
	if opts != nil && !opts.GetAnalyze() {
		return runPlan
	}
	return run
}

// indexesUsed is the plan summary's list: one Struct per index, with its
// scope and its fields as production formats them.
func (e *Engine) indexesUsed(q *query) []*structpb.Struct {
	scope := "Collection"
	if q.allDesc {
		scope = "Collection group"
	}
	var indexes [][]IndexField
	if n, composite := q.indexNeed(); composite {
		fields := append(append([]IndexField(nil), n.eq...), n.orders...)
		if cfg := e.indexes.Load(); cfg != nil {
			if declared, ok := cfg.servingIndex(q.collID, n); ok {
				fields = declared
			}
		}
		indexes = append(indexes, fields)
	} else {
		indexes = q.singleFieldIndexes()
	}
	out := make([]*structpb.Struct, len(indexes))
	for i, fields := range indexes {
		out[i] = &structpb.Struct{Fields: map[string]*structpb.Value{
			"query_scope": structpb.NewStringValue(scope),
			"properties":  structpb.NewStringValue(indexProperties(fields)),
		}}
	}
	return out
}

// singleFieldIndexes are the automatic indexes a query without a
// composite need uses: its first order field's (an inequality or an
// explicit order), else one per equality or array-contains field (merged
// by production), else the documents' names.
func (q *query) singleFieldIndexes() [][]IndexField {
	if first := q.orders[0]; !first.fp.IsName() {
		return [][]IndexField{{orderField(first)}}
	}
	var out [][]IndexField
	seen := map[string]bool{}
	var walk func(f *filter)
	walk = func(f *filter) {
		if f == nil {
			return
		}
		switch f.kind {
		case fAnd, fOr:
			for _, s := range f.subs {
				walk(s)
			}
			return
		}
		if f.fp.IsName() {
			return
		}
		ix := IndexField{FieldPath: f.fp.String(), Order: "ASCENDING"}
		if f.kind == fField && (f.op == pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS || f.op == pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY) {
			ix = IndexField{FieldPath: f.fp.String(), ArrayConfig: "CONTAINS"}
		}
		key := ix.FieldPath + "/" + ix.ArrayConfig
		if !seen[key] {
			seen[key] = true
			out = append(out, []IndexField{ix})
		}
	}
	walk(q.filter)
	if len(out) == 0 {
		out = append(out, []IndexField{orderField(q.orders[0])})
	}
	return out
}

func orderField(o order) IndexField {
	if o.desc {
		return IndexField{FieldPath: o.fp.String(), Order: "DESCENDING"}
	}
	return IndexField{FieldPath: o.fp.String(), Order: "ASCENDING"}
}

// indexProperties formats an index's fields as production's plan does,
// "(category ASC, price DESC, __name__ DESC)": every index ends with the
// name, in the direction of the field before it.
func indexProperties(fields []IndexField) string {
	var b strings.Builder
	b.WriteByte('(')
	dir := "ASC"
	named := false
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		path := canonicalPath(f.FieldPath) // a declared index may quote a path that needs none
		b.WriteString(path)
		switch {
		case f.ArrayConfig != "":
			b.WriteString(" CONTAINS")
			continue
		case strings.EqualFold(f.Order, "DESCENDING"):
			dir = "DESC"
		default:
			dir = "ASC"
		}
		b.WriteString(" " + dir)
		named = path == NameField
	}
	if !named {
		if len(fields) > 0 {
			b.WriteString(", ")
		}
		b.WriteString(NameField + " " + dir)
	}
	b.WriteByte(')')
	return b.String()
}

// explainMetrics is the answer's ExplainMetrics: the plan, and with
// analyze the statistics of the run (st).
func (e *Engine) explainMetrics(q *query, opts *pb.ExplainOptions, st execStats) *pb.ExplainMetrics {
	m := &pb.ExplainMetrics{PlanSummary: &pb.PlanSummary{IndexesUsed: e.indexesUsed(q)}}
	if opts.GetAnalyze() {
		m.ExecutionStats = st.proto()
	}
	return m
}

// execStats is what a run read, in production's terms.
type execStats struct {
	results      int // results returned (documents, or one aggregation)
	documents    int // documents read
	indexEntries int // index entries read
	aggregation  bool
	duration     time.Duration
}

// readOps is the billed reads: a query's documents, an aggregation's
// index entries by the thousand; at least one (the minimum query cost).
func (st execStats) readOps() (ops int, minCost int) {
	ops = st.documents
	if st.aggregation {
		ops = (st.indexEntries + 999) / 1000
	}
	if ops == 0 {
		return 1, 1
	}
	return ops, 0
}

func (st execStats) proto() *pb.ExecutionStats {
	ops, minCost := st.readOps()
	billableEntries := 0
	if st.aggregation {
		billableEntries = st.indexEntries
	}
	num := func(n int) *structpb.Value { return structpb.NewStringValue(strconv.Itoa(n)) }
	billing := &structpb.Struct{Fields: map[string]*structpb.Value{
		"documents_billable":     num(st.documents),
		"index_entries_billable": num(billableEntries),
		"small_ops":              num(0),
		"min_query_cost":         num(minCost),
	}}
	return &pb.ExecutionStats{
		ResultsReturned:   int64(st.results),
		ExecutionDuration: durationpb.New(st.duration),
		ReadOperations:    int64(ops),
		DebugStats: &structpb.Struct{Fields: map[string]*structpb.Value{
			"index_entries_scanned": num(st.indexEntries),
			"documents_scanned":     num(st.documents),
			"billing_details":       structpb.NewStructValue(billing),
		}},
	}
}
