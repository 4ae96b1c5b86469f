package firestore

import (
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

func TestCoverageValueForms(t *testing.T) {
	long := value.String(strings.Repeat("x", 1000))
	for _, tc := range []struct {
		v    value.Value
		want string
	}{
		{value.Null{}, `{"nullValue":null}`},
		{value.Bool(true), `{"boolValue":true}`},
		{value.Int(-12), `{"intValue":"-12"}`},
		{value.Float(1.5), `{"floatValue":1.5}`},
		{value.String(`it's "x" é`), `{"stringValue":"it's \"x\" é"}`},
		{value.List{value.Int(1), value.String("x")}, `{"listValue":{"values":[{"intValue":"1"},{"stringValue":"x"}]}}`},
		{value.Map{"a": value.Int(1)}, `{"mapValue":{"fields":{"a":{"intValue":"1"}}}}`},
		{value.Timestamp{Time: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}, `{"timestampValue":"2024-01-02T03:04:05Z"}`},
		{value.ParsePath("/databases/(default)/documents/a"), `{"pathValue":{"segments":[{"simple":"databases"},{"simple":"(default)"},{"simple":"documents"},{"simple":"a"}]}}`},
		{value.Bytes("\x00\xff"), `{"bytesValue":"AP8="}`},
		{value.Set{value.Int(1)}, `{"setValue":{"values":[{"intValue":"1"}]}}`},
		{value.Errorf("Null value error."), `{"undefined":{"causeMessage":"Null value error."}}`},
	} {
		if got := coverageValue(tc.v, false); got != tc.want {
			t.Errorf("%s: got %s, want %s", value.Show(tc.v), got, tc.want)
		}
	}
	if got := coverageValue(nil, true); got != `{}` {
		t.Errorf("skipped: %s", got)
	}
	// A long value keeps its type and its whole content.
	if got := coverageValue(long, false); !strings.Contains(got, `"stringValue"`) || len(got) < 1000 {
		t.Errorf("long value: %.80s…", got)
	}
}

func TestCoverageCountsTracedDecisions(t *testing.T) {
	rs, diags := Compile(source.NewFile("firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /a/{id} {
      allow get: if request.auth != null && resource.data.n > 3;
    }
  }
}`))
	if rs == nil {
		t.Fatal(diags)
	}
	cov := NewCoverage(rs)
	for _, n := range []int64{5, 1} {
		cov.Record(rs.Decide(&Request{Method: "get", Path: "a/x", Auth: &Auth{UID: "u"},
			Resource: &Doc{Path: "a/x", Data: value.Map{"n": value.Int(n)}}, Time: time.Now()}))
	}
	rep := cov.Report()
	if len(rep) != 1 || len(rep[0].Values) != 2 || rep[0].Values[0].Count != 1 {
		t.Fatalf("report = %+v", rep)
	}
	cmp := rep[0].Children[1] // resource.data.n > 3
	if cmp.Source != "resource.data.n > 3" || len(cmp.Values) != 2 || string(cmp.Values[0].Value) != `{"boolValue":true}` {
		t.Fatalf("comparison node = %+v", cmp)
	}
}
