package sim

import "testing"

func TestFailingFindsTheDecidingLeaves(t *testing.T) {
	exprs := []Expr{
		{Source: "a != null && t.size() < 20", Depth: 0, Value: "false"},
		{Source: "a != null", Depth: 1, Value: "true"},
		{Source: "a", Depth: 2, Value: "{}"},
		{Source: "t.size() < 20", Depth: 1, Value: "false"},
		{Source: "t.size()", Depth: 2, Value: "33"},
		{Source: "20", Depth: 2, Value: "20"},
	}
	f := Failing(exprs)
	if len(f) != 1 || f[0].Text != "t.size() < 20" {
		t.Fatalf("failing = %+v", f)
	}
	// An error deep down is the leaf; short-circuit skipped nodes are not.
	exprs = []Expr{
		{Source: "d.x > 1 || b", Depth: 0, Value: "false"},
		{Source: "d.x > 1", Depth: 1, Error: "no such key"},
		{Source: "d.x", Depth: 2, Error: "no such key: x"},
		{Source: "1", Depth: 2, Value: "1"},
		{Source: "b", Depth: 1, Value: "false"},
		{Source: "c", Depth: 1, Value: "false", Skipped: true},
	}
	f = Failing(exprs)
	if len(f) != 2 || f[0].Text != "d.x" || f[1].Text != "b" {
		t.Fatalf("failing = %+v", f)
	}
}

func TestExplainPicksTheDecidingRule(t *testing.T) {
	trace := []Rule{
		{MatchPath: "/a", RuleIndex: 0, Operations: []string{"read"}, Verdict: VerdictDeny, Line: 3, Condition: "false",
			Expressions: []Expr{{Source: "false", Value: "false", Line: 3, Column: 20}}},
	}
	e := Explain("firestore", "false for 'get' @ L3", trace, 0, []string{"n"}, 1, 0)
	if e.Rule == nil || e.Rule.Line != 3 || len(e.Trace) != 1 || len(e.Decision.Failing) != 1 || e.Decision.Evaluated[0].Verdict != "DENY" {
		t.Fatalf("explained = %+v %+v", e, e.Decision)
	}
	if e := Explain("firestore", "", nil, -1, nil, 0, 0); e.Rule != nil || e.Decision == nil {
		t.Fatalf("no rule: %+v", e)
	}
}

func TestExplainPrefersTheEvaluatorsFailingSet(t *testing.T) {
	trace := []Rule{{RuleIndex: 0, Verdict: VerdictDeny, Line: 3,
		Expressions: []Expr{{Source: "f() || x < 1", Value: "false"}, {Source: "f()", Value: "false", Depth: 1}, {Source: "x < 1", Value: "false", Depth: 1}},
		Failing:     []Failure{{Source: "a == b", Value: "false", Values: "1 == 2 → false", Line: 2, Column: 5}, {Source: "x < 1", Value: "false", Line: 3, Column: 9}}}}
	e := Explain("firestore", "", trace, 0, nil, 3, 0)
	if len(e.Decision.Failing) != 2 || e.Decision.Failing[0].Text != "a == b" || e.Decision.Failing[0].Line != 2 {
		t.Fatalf("failing = %+v", e.Decision.Failing)
	}
}
