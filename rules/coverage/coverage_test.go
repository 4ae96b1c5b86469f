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

// A value whose form is longer than MaxValueBytes is counted as Elided
// and rendered no further than the bound: a decision over a document
// with a 100,000-element list keeps kilobytes, not its megabytes, per
// expression and in the Tally's recycled buffer.
func TestCoverageBoundsRenderingPerValue(t *testing.T) {
	big := make(value.List, 100_000)
	for i := range big {
		big[i] = value.String("t" + strings.Repeat("0", 10))
	}
	b := appendBounded(nil, big)
	if string(b) != Elided {
		t.Fatalf("100,000-element list rendered as %.60s… (%d bytes), want %s", b, len(b), Elided)
	}
	if cap(b) > 4*MaxValueBytes {
		t.Fatalf("rendering the list took a %d-byte buffer; the bound is %d bytes per value", cap(b), MaxValueBytes)
	}
	for _, v := range []value.Value{value.String(strings.Repeat("x", MaxValueBytes)), value.Bytes(strings.Repeat("x", MaxValueBytes)), value.Map{"tags": big}} {
		if got := appendBounded(nil, v); string(got) != Elided {
			t.Errorf("%.40s: rendered %d bytes, want %s", value.Show(v), len(got), Elided)
		}
	}
	// A value within the bound keeps its whole form.
	small := value.List{value.String("t1"), value.String("t2")}
	if got, want := string(appendBounded(nil, small)), coverageValue(small, false); got != want || !strings.Contains(got, `"t2"`) {
		t.Errorf("small list: %s, want %s", got, want)
	}

	// Through a Tally: the same large map at two expressions (the seen
	// cache) and a small value, each counted where it belongs.
	c := New(nil, nil)
	data, tags, ok := &ast.Ident{Name: "data"}, &ast.Ident{Name: "tags"}, &ast.Ident{Name: "ok"}
	doc := value.Map{"tags": big}
	tl := c.Tally()
	tl.Count(data, doc)
	tl.Count(data, doc)
	tl.Count(tags, big)
	tl.Count(ok, value.Bool(true))
	tl.Flush()
	for n, want := range map[ast.Expr]string{data: Elided, tags: Elided, ok: valTrue} {
		vc := c.counts[n]
		if vc == nil || len(vc.order) != 1 || vc.order[0] != want {
			t.Errorf("%s: kept %v, want [%s]", n.(*ast.Ident).Name, vc, want)
		}
	}
	if n := c.counts[data].counts[0]; n != 2 {
		t.Errorf("data counted %d times, want 2", n)
	}
	if cap(tl.buf) > 4*MaxValueBytes {
		t.Errorf("the recycled Tally keeps a %d-byte buffer", cap(tl.buf))
	}
}
