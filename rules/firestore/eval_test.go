package firestore

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// TestEvaluationSemantics pins error-as-value semantics and production's
// messages and positions, beyond the recorded conformance cases.
func TestEvaluationSemantics(t *testing.T) {
	tests := []struct {
		name, fns, cond string
		want            sim.Outcome
		msg             string // expected error message of the rule, if any
		col             int    // expected column of the error note, if any
	}{
		{name: "error && false is false", cond: "resource.data.nope == 1 && false", want: sim.Deny},
		{name: "false && error skips the error", cond: "!(false && resource.data.nope == 1)", want: sim.Allow},
		{name: "error || true is true", cond: "resource.data.nope == 1 || true", want: sim.Allow},
		{name: "error || false keeps the error", cond: "resource.data.nope == 1 || false", want: sim.Deny, msg: "Property nope is undefined on object.", col: 21},
		{name: "errors survive !", cond: "!(resource.data.nope == 1)", want: sim.Deny, msg: "Property nope is undefined on object."},
		{name: "non-boolean operand", cond: "1 && true", want: sim.Deny, msg: "Type error. Received: [int] Expected: [bool]."},
		{name: "non-boolean condition", cond: "1", want: sim.Deny, msg: "Type error. Received: [int] Expected: [bool]."},
		{name: "ternary with erroring condition", cond: "resource.data.nope ? true : true", want: sim.Deny, msg: "Property nope is undefined on object."},
		{name: "ternary takes one branch", cond: "true ? true : resource.data.nope", want: sim.Allow},
		{name: "unused erroring let", fns: "function f() { let x = 1 / 0; return true; }", cond: "f()", want: sim.Allow},
		{name: "used erroring let", fns: "function f() { let x = 1 / 0; return x == 1; }", cond: "f()", want: sim.Deny, msg: "Divide by zero error."},
		{name: "unused erroring argument", fns: "function f(a) { return true; }", cond: "f(1 / 0)", want: sim.Allow},
		{name: "functions are lexically scoped", fns: "function f() { return x == 1; }", cond: "(function_scope_probe == 1) || f()", want: sim.Deny, msg: "Null value error."},
		{name: "division by zero position", cond: "10 / 0 == 0", want: sim.Deny, msg: "Divide by zero error.", col: 24},
		{name: "int overflow", cond: "9223372036854775807 + 1 > 0", want: sim.Deny, msg: "Integer value is out of the [-9223372036854775808, 9223372036854775807] range."},
		{name: "missing map key with get", cond: "resource.data.get('nope', 'd') == 'd'", want: sim.Allow},
		{name: "map get with a path", cond: "resource.data.get(['m', 'k'], 0) == 1", want: sim.Allow},
		{name: "bracket on missing key errors", cond: "resource.data['nope'] == null", want: sim.Deny, msg: "Property nope is undefined on object."},
		{name: "null member", cond: "resource.data.nil.x == 1", want: sim.Deny, msg: "Null value error."},
		{name: "path literal with interpolation", cond: "/databases/$(database)/documents/users/$(request.auth.uid) == path('/databases/(default)/documents/users/u')", want: sim.Allow},
		{name: "in on a string", cond: "'a' in 'abc'", want: sim.Deny, msg: "Function not found error: Name: [in]."},
		{name: "in checks the collection first", cond: "1 / 0 in []", want: sim.Deny, msg: "Divide by zero error."},
		{name: "unknown method before its arguments", cond: "resource.data.age.foo(1 / 0)", want: sim.Deny, msg: "Function not found error: Name: [foo]."},
		{name: "set algebra needs sets", cond: "[1].toSet().union([2]).size() == 2", want: sim.Deny, msg: "Unsupported operation error. Received: set.union(list). Expected: set.union(set)."},
		{name: "keys is a list", cond: "resource.data.keys().union([1])", want: sim.Deny, msg: "Function not found error: Name: [union]."},
		{name: "empty slice start errors", cond: "[1, 2][0:0] == []", want: sim.Deny, msg: "Index out of bound error. Index: [-1] , size: [2]."},
		{name: "illegal range", cond: "[1, 2, 3][2:1] == []", want: sim.Deny, msg: "Illegal range error. From index: [2] , To index: [1]."},
		{name: "timestamp arithmetic", cond: "request.time - duration.value(1, 'd') < request.time", want: sim.Allow},
		{name: "ordering across types", cond: "1 < 'a'", want: sim.Deny, msg: "Unsupported operation error. Received: int < string. Expected: string < string, bytes < bytes, int < int, float < float, duration < duration, timestamp < timestamp, constraint < any, any < constraint."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    " + tt.fns + "\n    match /d/{id} {\n      allow get: if " + tt.cond + ";\n    }\n  }\n}\n"
			rs, diags := Compile(source.NewFile("firestore.rules", src))
			if rs == nil {
				t.Fatalf("compile: %v", diags)
			}
			d := rs.Decide(&Request{Method: Get, Path: "d/x", Time: time.Now(), Auth: &Auth{UID: "u"},
				Resource: &Doc{Path: "d/x", Data: value.Map{"age": value.Int(3), "nil": value.Null{}, "m": value.Map{"k": value.Int(1)}}}})
			if d.Outcome != tt.want {
				t.Fatalf("%s, want %s: %v", d.Outcome, tt.want, d.Notes)
			}
			if tt.msg != "" {
				if len(d.Trace) == 0 || d.Trace[0].Message != tt.msg {
					t.Fatalf("message %q, want %q", d.Trace[0].Message, tt.msg)
				}
				if tt.col > 0 && !strings.Contains(strings.Join(d.Notes, "\n"), "line [6], column ["+itoa(tt.col)+"]") {
					t.Errorf("notes %v, want column %d", d.Notes, tt.col)
				}
			}
		})
	}
}

func itoa(n int) string { return value.Show(value.Int(n)) }

// TestTraceMarksShortCircuits checks the sub-expression trace: values in
// evaluation order, and the operand a short-circuit skipped.
func TestTraceMarksShortCircuits(t *testing.T) {
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /d/{id} {\n      allow get: if request.auth == null && resource.data.x == 1;\n    }\n  }\n}\n"
	rs, _ := Compile(source.NewFile("firestore.rules", src))
	d := rs.Decide(&Request{Method: Get, Path: "d/x", Time: time.Now(), Auth: &Auth{UID: "u"}, Resource: &Doc{Path: "d/x", Data: value.Map{}}})
	exprs := d.Trace[0].Expressions
	var root, skipped, lhs *sim.Expr
	for i := range exprs {
		switch exprs[i].Source {
		case "request.auth == null && resource.data.x == 1":
			root = &exprs[i]
		case "resource.data.x == 1":
			skipped = &exprs[i]
		case "request.auth == null":
			lhs = &exprs[i]
		}
	}
	if root == nil || root.Value != "false" || lhs == nil || lhs.Value != "false" || lhs.Depth != root.Depth+1 || skipped == nil || !skipped.Skipped {
		t.Errorf("trace = %+v", exprs)
	}
}

// TestStructuredDecision checks the typed explanation: the deciding rule,
// its failing leaves as typed values, path variables, lookups and budget.
func TestStructuredDecision(t *testing.T) {
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" +
		"    function member(g) { return exists(/databases/$(database)/documents/groups/$(g)/members/$(request.auth.uid)); }\n" +
		"    match /groups/{g}/posts/{p} {\n      allow update: if member(g) || request.resource.data.n < 3;\n    }\n  }\n}\n"
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatal(diags)
	}
	d := rs.Decide(&Request{Method: Update, Path: "groups/g1/posts/p1", Time: time.Now(), Auth: &Auth{UID: "bob"},
		Resource: &Doc{Path: "groups/g1/posts/p1", Data: value.Map{}}, After: value.Map{"n": value.Int(5)},
		Get: LookupFunc(func(string) (value.Map, bool, error) { return nil, false, nil })})
	if d.Allowed() {
		t.Fatal("allowed")
	}
	rule := d.DecidingRuleOf()
	if rule == nil || rule.Value != value.Bool(false) || len(rule.Failing) != 2 {
		t.Fatalf("deciding rule %+v", rule)
	}
	var got []string
	for _, i := range rule.Failing {
		st := rule.Steps[i]
		got = append(got, eval.SourceText(rs.File(), st.Node)+" = "+value.Show(st.Value))
	}
	want := []string{"exists(/databases/$(database)/documents/groups/$(g)/members/$(request.auth.uid)) = false", "request.resource.data.n < 3 = false"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("failing leaves:\n got %v\nwant %v", got, want)
	}
	if b := d.Bindings.Map(); b["g"] != value.String("g1") || b["p"] != value.String("p1") {
		t.Errorf("bindings %v", d.Bindings.Map())
	}
	if len(d.Reads) != 1 || d.Reads[0].Function != "exists" || d.Reads[0].Result != value.Bool(false) ||
		d.Reads[0].Path.(value.Path).String() != "/databases/(default)/documents/groups/g1/members/bob" {
		t.Errorf("reads %+v", d.Reads)
	}
	if d.Budget.Expressions != d.Expressions || d.Budget.MaxExpressions != eval.DefaultMaxExpressions || d.Budget.Limit != "" {
		t.Errorf("budget %+v", d.Budget)
	}
}

// TestDecideStepsRendersAtTheEdge: DecideSteps records the same typed
// trace as Decide without rendering it; Render then gives exactly what
// Decide shows, for an allowed and a denied request.
func TestDecideStepsRendersAtTheEdge(t *testing.T) {
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" +
		"    function named() { let d = request.resource.data; return d.title is string && d.title.size() < 20; }\n" +
		"    match /posts/{p} {\n      allow create: if request.auth != null && named();\n      allow read: if resource.data.public == true;\n    }\n  }\n}\n"
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatal(diags)
	}
	for _, req := range []*Request{
		{Method: Create, Path: "posts/p1", Auth: &Auth{UID: "a"}, After: value.Map{"title": value.String("short")}},
		{Method: Create, Path: "posts/p1", Auth: &Auth{UID: "a"}, After: value.Map{"title": value.String(strings.Repeat("x", 33))}},
		{Method: Get, Path: "posts/p1", Resource: &Doc{Path: "posts/p1", Data: value.Map{"public": value.Bool(false)}}},
	} {
		req.Time = time.Unix(1, 0)
		full, steps := rs.Decide(req), rs.DecideSteps(req)
		if len(steps.Rules) == 0 || len(steps.Rules[0].Steps) == 0 {
			t.Fatalf("%s %s: no typed steps", req.Method, req.Path)
		}
		for _, r := range steps.Trace {
			if r.Expressions != nil || r.Failing != nil {
				t.Fatalf("%s %s: DecideSteps rendered its trace", req.Method, req.Path)
			}
		}
		if len(steps.Rules[0].Steps) != len(full.Rules[0].Steps) || steps.Outcome != full.Outcome {
			t.Fatalf("%s %s: typed traces differ: %d vs %d steps", req.Method, req.Path, len(steps.Rules[0].Steps), len(full.Rules[0].Steps))
		}
		steps.Render()
		a, _ := json.Marshal(full.Trace)
		b, _ := json.Marshal(steps.Trace)
		if string(a) != string(b) {
			t.Errorf("%s %s: rendered later\n%s\nwant\n%s", req.Method, req.Path, b, a)
		}
		if full.Allowed() == (len(full.Trace[len(full.Trace)-1].Failing) > 0) {
			t.Errorf("%s %s: failing sub-expressions %+v on a %s", req.Method, req.Path, full.Trace[len(full.Trace)-1].Failing, full.Outcome)
		}
	}
}
