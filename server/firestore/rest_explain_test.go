package firestoreserver

import (
	"strings"
	"testing"
)

// TestRESTQueryExplain: runQuery and runAggregationQuery take
// explainOptions over REST and answer explainMetrics in the REST mapping's
// JSON: camelCase message fields, int64 numbers as strings, the duration
// as seconds, and the Structs' own keys (query_scope, debug_stats' keys)
// as production writes them.
func TestRESTQueryExplain(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	for _, id := range []string{"a", "b"} {
		if r := do(t, ts, "POST", docs+"/open?documentId="+id, `{"fields":{"n":{"integerValue":"1"}}}`, ""); r.status != 200 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
	}
	query := `"structuredQuery":{"from":[{"collectionId":"open"}],"where":{"fieldFilter":{"field":{"fieldPath":"n"},"op":"EQUAL","value":{"integerValue":"1"}}}}`
	plan := `"planSummary":{"indexesUsed":[{"properties":"(n ASC, __name__ ASC)","query_scope":"Collection"}]}`

	r := do(t, ts, "POST", docs+":runQuery", `{`+query+`,"explainOptions":{}}`, "")
	if r.status != 200 || r.body != "[{\"explainMetrics\":{"+plan+"}}]\n" {
		t.Errorf("runQuery without analyze: %d %s", r.status, r.body)
	}

	r = do(t, ts, "POST", docs+":runQuery", `{`+query+`,"explainOptions":{"analyze":true}}`, "")
	for _, want := range []string{`"document":{`, plan, `"executionStats":{"resultsReturned":"2","executionDuration":"`,
		`"readOperations":"2","debugStats":{"billing_details":{"documents_billable":"2","index_entries_billable":"0","min_query_cost":"0","small_ops":"0"},"documents_scanned":"2","index_entries_scanned":"2"}}`} {
		if r.status != 200 || !strings.Contains(r.body, want) {
			t.Errorf("runQuery with analyze: %d %s\nlacks %s", r.status, r.body, want)
		}
	}
	if strings.Count(r.body, `"explainMetrics"`) != 1 || strings.Index(r.body, `"explainMetrics"`) < strings.LastIndex(r.body, `"document"`) {
		t.Errorf("runQuery with analyze: the metrics are not on the last response alone: %s", r.body)
	}

	agg := `{"structuredAggregationQuery":{` + query + `,"aggregations":[{"alias":"c","count":{}}]},"explainOptions":{"analyze":true}}`
	r = do(t, ts, "POST", docs+":runAggregationQuery", agg, "")
	for _, want := range []string{`"aggregateFields":{"c":{"integerValue":"2"}}`, `"resultsReturned":"1"`, `"readOperations":"1"`,
		`"documents_scanned":"0","index_entries_scanned":"2"`} {
		if r.status != 200 || !strings.Contains(r.body, want) {
			t.Errorf("runAggregationQuery with analyze: %d %s\nlacks %s", r.status, r.body, want)
		}
	}

	// A query the rules deny is denied when explained too.
	r = do(t, ts, "POST", docs+":runQuery", `{"structuredQuery":{"from":[{"collectionId":"users"}]},"explainOptions":{}}`, aliceToken())
	if r.status != 403 {
		t.Errorf("denied query explained: %d %s", r.status, r.body)
	}
}
