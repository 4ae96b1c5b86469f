package coverage

import (
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/ast"
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

// An expression keeps at most MaxValues distinct values; the rest are
// counted under Elided.
func TestCoverageBoundsValues(t *testing.T) {
	c := New(nil, nil)
	n := &ast.Ident{Name: "request"}
	for i := range MaxValues + 50 {
		c.add(n, []byte(coverageValue(value.Int(i), false)))
	}
	c.add(n, []byte(coverageValue(value.String(strings.Repeat("x", MaxValueBytes)), false)))
	vc := c.counts[n]
	if len(vc.order) != MaxValues+1 || vc.order[MaxValues] != Elided || vc.counts[MaxValues] != 51 {
		t.Fatalf("kept %d values, elided %d", len(vc.order), vc.counts[MaxValues])
	}
	// A value kept before the bound keeps counting.
	c.add(n, []byte(coverageValue(value.Int(3), false)))
	if vc.counts[vc.idx[coverageValue(value.Int(3), false)]] != 2 {
		t.Fatalf("kept value not counted: %v", vc.counts)
	}
}
