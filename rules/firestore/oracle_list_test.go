package firestore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// listFilter is one filter of a differential list query.
type listFilter struct {
	field, op string
	v         value.Value
}

var restOps = map[string]string{"==": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS_THAN", "<=": "LESS_THAN_OR_EQUAL", ">": "GREATER_THAN",
	">=": "GREATER_THAN_OR_EQUAL", "in": "IN", "not-in": "NOT_IN", "array-contains": "ARRAY_CONTAINS", "array-contains-any": "ARRAY_CONTAINS_ANY"}

func restQuery(coll string, fs []listFilter) map[string]any {
	q := map[string]any{"from": []any{map[string]any{"collectionId": coll}}}
	var filters []any
	for _, f := range fs {
		filters = append(filters, map[string]any{"fieldFilter": map[string]any{"field": map[string]any{"fieldPath": f.field}, "op": restOps[f.op], "value": restValue(f.v)}})
	}
	switch len(filters) {
	case 0:
	case 1:
		q["where"] = filters[0]
	default:
		q["where"] = map[string]any{"compositeFilter": map[string]any{"op": "AND", "filters": filters}}
	}
	return map[string]any{"structuredQuery": q}
}

// TestDifferentialListQueries compares "rules are not filters" decisions
// for list queries with the official emulator.
func TestDifferentialListQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("differential test against the official emulator is skipped in -short mode")
	}
	emu := emulator.Start(t)
	ctx := context.Background()
	rules := []string{
		"resource.data.owner == request.auth.uid",
		"request.auth.uid == resource.data.owner",
		"resource.data.public == true",
		"resource.data.public == true || resource.data.owner == request.auth.uid",
		"resource.data.age > 18",
		"resource.data.age >= 18",
		"resource.data.age < 65 && resource.data.age > 18",
		"resource.data.status in ['a', 'b']",
		"resource.data.status != 'hidden'",
		"'x' in resource.data.tags",
		"resource.data.name is string",
		"resource.data.age is number",
		"request.query.limit <= 10",
		"request.query.limit <= 10 && resource.data.owner == request.auth.uid",
		"resource.data.m.k == 1",
		"resource.data.owner == request.auth.uid || request.auth.token.admin == true",
		"resource.data.size() > 0",
		"resource.data.owner.size() > 0",
		"true",
	}
	str := func(s string) value.Value { return value.String(s) }
	num := func(n int64) value.Value { return value.Int(n) }
	queries := [][]listFilter{
		nil,
		{{"owner", "==", str("alice")}},
		{{"owner", "==", str("bob")}},
		{{"owner", "in", value.List{str("alice")}}},
		{{"owner", "in", value.List{str("alice"), str("bob")}}},
		{{"public", "==", value.Bool(true)}},
		{{"age", ">", num(18)}},
		{{"age", ">", num(20)}},
		{{"age", ">=", num(18)}},
		{{"age", ">", num(17)}},
		{{"age", ">", num(20)}, {"age", "<", num(30)}},
		{{"age", "==", num(40)}},
		{{"age", "==", value.Float(40.5)}},
		{{"status", "==", str("a")}},
		{{"status", "in", value.List{str("a"), str("b")}}},
		{{"status", "in", value.List{str("a"), str("c")}}},
		{{"status", "not-in", value.List{str("hidden")}}},
		{{"status", "!=", str("hidden")}},
		{{"tags", "array-contains", str("x")}},
		{{"tags", "array-contains-any", value.List{str("x")}}},
		{{"tags", "array-contains-any", value.List{str("x"), str("y")}}},
		{{"name", "==", str("n")}},
		{{"name", ">", str("a")}},
		{{"m.k", "==", num(1)}},
		{{"owner", "==", str("alice")}, {"public", "==", value.Bool(false)}},
	}
	token := emulator.MockToken(map[string]any{"sub": "alice"})
	var b strings.Builder
	b.WriteString("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n")
	for i, r := range rules {
		fmt.Fprintf(&b, "    match /l%d/{id} {\n      allow list: if %s;\n    }\n", i, r)
	}
	b.WriteString("  }\n}\n")
	src := b.String()
	if err := emu.SetRules(ctx, src); err != nil {
		t.Fatalf("emulator rejects the list rules: %v", err)
	}
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatal(diags)
	}
	limit := int64(5)
	compared, diffs := 0, 0
	for i, rule := range rules {
		coll := fmt.Sprintf("l%d", i)
		for _, q := range queries {
			for _, withLimit := range []bool{false, true} {
				body := restQuery(coll, q)
				query := &Query{}
				if withLimit {
					body["structuredQuery"].(map[string]any)["limit"] = limit
					query.Limit = &limit
				}
				for _, f := range q {
					query.Constraints = append(query.Constraints, Constraint{Field: f.field, Op: f.op, Value: f.v})
				}
				r, err := emu.Do(ctx, "POST", emu.DocumentsURL()+":runQuery", body, token)
				if err != nil {
					t.Fatal(err)
				}
				want := "ALLOW"
				if r.Status == 403 {
					want = "DENY"
				} else if r.Status != 200 {
					t.Fatalf("%s %v: status %d %s", rule, q, r.Status, r.Body)
				}
				d := rs.Decide(&Request{Method: List, Path: coll, Auth: &Auth{UID: "alice", Token: map[string]any{"sub": "alice"}}, Query: query, Time: time.Now()})
				compared++
				if string(d.Outcome) != want {
					diffs++
					t.Errorf("rule %q, query %v (limit %v): emulator %s (%s), pyric %s (%s)", rule, q, withLimit, want, strings.TrimSpace(r.ErrorMessage()), d.Outcome, strings.TrimSpace(d.EmulatorMessage(List)))
				}
			}
		}
	}
	t.Logf("compared %d list decisions with the official emulator: %d differences", compared, diffs)
}
