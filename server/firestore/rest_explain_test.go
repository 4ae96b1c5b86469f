package firestoreserver

import (
	"encoding/json"
	"reflect"
	"testing"
)

// restAnswers decodes a streamed REST answer (a JSON array of responses).
func restAnswers(t *testing.T, r reply) []map[string]any {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var out []map[string]any
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("not a JSON array of responses: %v\n%s", err, r.body)
	}
	return out
}

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
	plan := map[string]any{"indexesUsed": []any{map[string]any{"properties": "(n ASC, __name__ ASC)", "query_scope": "Collection"}}}

	rs := restAnswers(t, do(t, ts, "POST", docs+":runQuery", `{`+query+`,"explainOptions":{}}`, ""))
	if want := []map[string]any{{"explainMetrics": map[string]any{"planSummary": plan}}}; !reflect.DeepEqual(rs, want) {
		t.Errorf("runQuery without analyze: %v, want %v", rs, want)
	}

	rs = restAnswers(t, do(t, ts, "POST", docs+":runQuery", `{`+query+`,"explainOptions":{"analyze":true}}`, ""))
	if len(rs) != 2 || rs[0]["explainMetrics"] != nil || rs[1]["document"] == nil || rs[1]["explainMetrics"] == nil {
		t.Fatalf("runQuery with analyze: %v; want two documents, the metrics on the last", rs)
	}
	m := rs[1]["explainMetrics"].(map[string]any)
	st, _ := m["executionStats"].(map[string]any)
	if d, _ := st["executionDuration"].(string); len(d) < 2 || d[len(d)-1] != 's' {
		t.Errorf("executionDuration %v, want seconds", st["executionDuration"])
	}
	delete(st, "executionDuration")
	want := map[string]any{"planSummary": plan, "executionStats": map[string]any{"resultsReturned": "2", "readOperations": "2",
		"debugStats": map[string]any{"documents_scanned": "2", "index_entries_scanned": "2", "billing_details": map[string]any{
			"documents_billable": "2", "index_entries_billable": "0", "min_query_cost": "0", "small_ops": "0"}}}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("runQuery with analyze: metrics %v, want %v", m, want)
	}

	agg := `{"structuredAggregationQuery":{` + query + `,"aggregations":[{"alias":"c","count":{}}]},"explainOptions":{"analyze":true}}`
	rs = restAnswers(t, do(t, ts, "POST", docs+":runAggregationQuery", agg, ""))
	if len(rs) != 1 || !reflect.DeepEqual(rs[0]["result"], map[string]any{"aggregateFields": map[string]any{"c": map[string]any{"integerValue": "2"}}}) {
		t.Fatalf("runAggregationQuery with analyze: %v", rs)
	}
	st, _ = rs[0]["explainMetrics"].(map[string]any)["executionStats"].(map[string]any)
	ds, _ := st["debugStats"].(map[string]any)
	if st["resultsReturned"] != "1" || st["readOperations"] != "1" || ds["documents_scanned"] != "0" || ds["index_entries_scanned"] != "2" {
		t.Errorf("runAggregationQuery with analyze: stats %v", st)
	}

	// A query the rules deny is denied when explained too.
	r := do(t, ts, "POST", docs+":runQuery", `{"structuredQuery":{"from":[{"collectionId":"users"}]},"explainOptions":{}}`, aliceToken())
	if r.status != 403 {
		t.Errorf("denied query explained: %d %s", r.status, r.body)
	}
}
