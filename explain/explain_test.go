package explain

import (
	"strings"
	"testing"

	"github.com/pyric/pyric/event"
)

func TestLines(t *testing.T) {
	trace := []event.Step{
		{Text: "a && b", Value: "false", Depth: 0},
		{Text: "a", Value: "true", Depth: 1},
		{Text: "b", Error: "Property b is undefined on object.", Depth: 1},
	}
	d := &event.Explanation{Failing: []event.Step{trace[2]}}
	got := Lines(d, trace)
	if len(got) != 1 || got[0] != "b → error: Property b is undefined on object." {
		t.Fatalf("%q", got)
	}
	// A map selected from keeps its text: its whole value would bury the
	// selection (query.orderByKey → {"endAt":null,…}.orderByKey).
	sel := []event.Step{
		{Text: "query.orderByKey", Value: "false", Depth: 0},
		{Text: "query", Value: `{"endAt":null,"orderByKey":false}`, Depth: 1},
	}
	if got := Lines(&event.Explanation{Failing: sel[:1]}, sel); len(got) != 1 || got[0] != "query.orderByKey is false" {
		t.Fatalf("selection from a map: %q", got)
	}
	if Lines(nil, nil) != nil {
		t.Fatal("nil decision")
	}
	long := event.Step{Text: strings.Repeat("é", 400), Value: "false"}
	if l := Lines(&event.Explanation{Failing: []event.Step{long}}, nil); len(l[0]) > MaxLine+4 {
		t.Fatalf("not clipped: %d", len(l[0]))
	}
	var many []event.Step
	for i := 0; i < 10; i++ {
		many = append(many, event.Step{Text: "x", Value: "false"})
	}
	if l := Lines(&event.Explanation{Failing: many}, nil); len(l) != MaxLines+1 || l[MaxLines] != "…" {
		t.Fatalf("%q", l)
	}
}

// FuzzStep: any trace renders without panicking, on one line.
func FuzzStep(f *testing.F) {
	f.Add("a.size() < 20", "false", "a.size()", "27", "20", "20")
	f.Add("x", "", "", "", "", "")
	f.Add("f(a, a)", "false", "a", "1", "a", "2")
	f.Fuzz(func(t *testing.T, text, value, c1, v1, c2, v2 string) {
		trace := []event.Step{{Text: text, Value: value}, {Text: c1, Value: v1, Depth: 1}, {Text: c2, Value: v2, Depth: 1}}
		out := Lines(&event.Explanation{Failing: trace[:1]}, trace)
		if len(out) != 1 || strings.Contains(out[0], "\n") {
			t.Fatalf("%q", out)
		}
	})
}
