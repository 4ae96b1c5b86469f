package firestoreserver

import (
	"fmt"
	"strings"
	"testing"
)

// nestedJSON returns a REST map value nested depth levels deep.
func nestedJSON(depth int) string {
	v := `{"integerValue":"1"}`
	for range depth {
		v = `{"mapValue":{"fields":{"a":` + v + `}}}`
	}
	return v
}

// TestRESTBadInput sends, over REST, the bad (or formerly mishandled)
// requests e2e/goclient's TestHardening sends over gRPC, each compared
// there with the official emulator.
func TestRESTBadInput(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	doc := func(id string) string { return "projects/p/databases/(default)/documents/open/" + id }
	var many []string
	for i := range 501 {
		many = append(many, fmt.Sprintf(`{"update":{"name":"%s","fields":{"n":{"integerValue":"%d"}}}}`, doc(fmt.Sprint("m", i)), i))
	}
	query := func(sq string) string { return `{"structuredQuery":` + sq + `}` }
	var aggs []string
	for i := range 6 {
		aggs = append(aggs, fmt.Sprintf(`{"alias":"c%d","count":{}}`, i))
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     []string
	}{
		{"lone surrogate in a string value", "PATCH", docs + "/open/s", `{"fields":{"s":{"stringValue":"a\ud800b"}}}`, 400,
			[]string{"fields.s.stringValue", "lone surrogate"}},
		{"lone low surrogate", "PATCH", docs + "/open/s", `{"fields":{"s":{"stringValue":"\udc00"}}}`, 400, []string{"fields.s.stringValue"}},
		{"lone surrogate in a field name", "PATCH", docs + "/open/s", `{"fields":{"k\ud800":{"stringValue":"x"}}}`, 400, []string{"member name", "lone surrogate"}},
		{"lone surrogate deep in a commit", "POST", docs + ":commit", `{"writes":[{"delete":"` + doc("x") + `"},{"update":{"name":"` + doc("y") + `","fields":{"a":{"arrayValue":{"values":[{"stringValue":"\ud83d"}]}}}}}]}`, 400,
			[]string{"writes[1].update.fields.a.arrayValue.values[0].stringValue"}},
		{"a surrogate pair is fine", "PATCH", docs + "/open/s", `{"fields":{"s":{"stringValue":"\ud83d\ude00"}}}`, 200, []string{`"stringValue":"😀"`}},
		{"commit of 501 writes", "POST", docs + ":commit", `{"writes":[` + strings.Join(many, ",") + `]}`, 200, []string{`"commitTime"`}},
		{"maps nested 20 deep", "PATCH", docs + "/open/n", `{"fields":{"m":` + nestedJSON(20) + `}}`, 200, nil},
		{"maps nested 21 deep", "PATCH", docs + "/open/n", `{"fields":{"m":` + nestedJSON(21) + `}}`, 400, []string{"invalid nested entity", "m.a.a"}},
		{"unknown orderBy direction", "POST", docs + ":runQuery", query(`{"from":[{"collectionId":"open"}],"orderBy":[{"field":{"fieldPath":"a"},"direction":7}]}`), 400,
			[]string{"Unrecognized ordering"}},
		{"negative pageSize listing documents", "GET", docs + "/open?pageSize=-1", "", 400, []string{"Page size must be nonnegative"}},
		{"negative pageSize listing collection ids", "POST", docs + ":listCollectionIds", `{"pageSize":-1}`, 400, []string{"page_size must be greater than or equal to zero"}},
		{"foreign pageToken listing documents", "GET", docs + "/open?pageToken=bm90LWEtdG9rZW4", "", 400, []string{"invalid page token"}},
		{"foreign pageToken listing collection ids", "POST", docs + ":listCollectionIds", `{"pageToken":"open"}`, 400, []string{"invalid page token"}},
		{"delete then update", "POST", docs + ":commit", `{"writes":[{"delete":"` + doc("x") + `"},{"update":{"name":"` + doc("x") + `"},"updateMask":{},"currentDocument":{"exists":true}}]}`, 400,
			[]string{"Cannot delete then update an entity in the same request."}},
		{"order after the key", "POST", docs + ":runQuery", query(`{"from":[{"collectionId":"open"}],"orderBy":[{"field":{"fieldPath":"__name__"}},{"field":{"fieldPath":"a"}}]}`), 400,
			[]string{"order by clause cannot contain more fields after the key"}},
		{"key equality with inequalities", "POST", docs + ":runQuery", query(`{"from":[{"collectionId":"open"}],"where":{"compositeFilter":{"op":"AND","filters":[` +
			`{"fieldFilter":{"field":{"fieldPath":"a"},"op":"GREATER_THAN","value":{"integerValue":"1"}}},` +
			`{"fieldFilter":{"field":{"fieldPath":"__name__"},"op":"EQUAL","value":{"referenceValue":"` + doc("x") + `"}}}]}}}`), 400,
			[]string{"Equality on key is not allowed"}},
		{"numeric id", "PATCH", docs + "/open/__id-9223372036854775808__", `{"fields":{}}`, 200, []string{`open/__id-9223372036854775808__"`}},
		{"numeric id with leading zero is reserved", "PATCH", docs + "/open/__id07__", `{"fields":{}}`, 400, []string{"reserved"}},
		{"kindless query", "POST", docs + ":runQuery", query(`{"from":[{"allDescendants":true}]}`), 200, []string{`"document":{`}},
		{"more than 5 aggregations", "POST", docs + ":runAggregationQuery", `{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"open"}]},"aggregations":[` + strings.Join(aggs, ",") + `]}}`, 400,
			[]string{"maximum number of aggregations"}},
		{"batchWrite delete has no updateTime", "POST", docs + ":batchWrite", `{"writes":[{"delete":"` + doc("gone") + `"}]}`, 200, []string{`"writeResults":[{}]`}},
	}
	for _, c := range cases {
		r := do(t, ts, c.method, c.path, c.body, owner)
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.status, truncate(r.body, 300))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s: body lacks %q: %s", c.name, w, truncate(r.body, 300))
			}
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// FuzzBadJSONString: the scanner never panics out, and whatever it
// reports is a real problem: a body it finds nothing wrong with and that
// encoding/json accepts decodes without replacement characters it did not
// contain.
func FuzzBadJSONString(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `{"fields":{"s":{"stringValue":"\ud83d\ude00"}}}`, `[1,2,{"x\udc00":null}]`, `"\u12"`, `{"a":` + "\"\xff\"}", `{`, `[[[[`, `{"a":true,"b":-1.5e3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path, problem, ok := badJSONString(data)
		if ok && problem == "" {
			t.Fatalf("found a bad string at %q without saying why", path)
		}
	})
}
