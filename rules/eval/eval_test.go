package eval_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// program is a one-block ruleset whose allow condition is cond.
func program(t testing.TB, cond string) (*eval.Program, []eval.Matched) {
	t.Helper()
	src := "rules_version = '2';\nservice s {\n  match /d/{id} {\n    allow read: if " + cond + ";\n  }\n}\n"
	rs, diags := parser.Parse(source.NewFile("t.rules", src))
	if diags.HasErrors() {
		t.Fatalf("parse %q: %v", cond, diags)
	}
	p := eval.NewProgram(rs)
	m, _ := p.Match([]string{"d", "x"})
	if len(m) != 1 {
		t.Fatalf("match: %d blocks", len(m))
	}
	return p, m
}

func evalCond(t testing.TB, cond string, globals map[string]value.Value, tweak func(*eval.Env)) (value.Value, *eval.Run) {
	t.Helper()
	p, m := program(t, cond)
	env := &eval.Env{Program: p, Globals: globals}
	if tweak != nil {
		tweak(env)
	}
	run := eval.NewRun(env)
	v, _ := run.Condition(m[0], m[0].Block.Match.Allows[0].Cond)
	return v, run
}

// TestEvalTable runs expressions through the evaluator alone, independent
// of any service binding: want is the shown value or "error: <substring>".
func TestEvalTable(t *testing.T) {
	t.Parallel()
	g := map[string]value.Value{
		"l":  value.List{value.Int(1), value.Int(2), value.Int(3)},
		"m":  value.Map{"a": value.Int(1)},
		"id": value.String("x"),
	}
	cases := []struct{ name, expr, want string }{
		{"error absorbed by or", "1 / 0 == 1 || true", "true"},
		{"error absorbed by and", "false && 1 / 0 == 1", "false"},
		{"error surfaces", "1 / 0 == 1 && true", "error: "},
		{"path variable", "id == 'x'", "true"},
		{"unbound", "nope == 1", "error: Null value error"},
		{"list in strict", "1.0 in l", "false"},
		{"set in numeric", "1.0 in l.toSet()", "true"},
		{"hasAll list strict", "l.hasAll([1.0])", "false"},
		{"hasAll set numeric", "l.toSet().hasAll([1.0])", "true"},
		{"hasAny empty", "l.hasAny([])", "false"},
		{"hasOnly", "[1, 1].hasOnly([1])", "true"},
		{"toSet dedups numerically", "[1, 1.0, 2].toSet().size() == 2", "true"},
		{"set equality", "[1, 2].toSet() == [2.0, 1].toSet()", "true"},
		{"list equality strict", "[1] == [1.0]", "false"},
		{"difference", "l.toSet().difference([2].toSet()) == [1, 3].toSet()", "true"},
		{"removeAll", "l.removeAll([2.0, 3]) == [1, 2]", "true"},
		{"join no separator errors", "['a'].join() == 'a'", "error: Incorrect number of arguments. Received: 0. Expected: list.join(string)."},
		{"join", "['a', 'b'].join('-') == 'a-b'", "true"},
		{"ceil of int is float", "math.ceil(1) is float && !(math.ceil(1) is int)", "true"},
		{"round of int is int", "math.round(1) is int", "true"},
		{"is set is false", "l.toSet() is set", "false"},
		{"map member", "m.a == 1", "true"},
		{"lazy let free", "true || m.zz", "true"},
		{"ternary", "(l.size() > 2 ? 'big' : 'small') == 'big'", "true"},
		{"non-bool condition", "1", "error: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, _ := evalCond(t, c.expr, g, nil)
			got := value.Show(v)
			if e, ok := v.(*value.Error); ok {
				got = "error: " + e.Message
			}
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, want) {
					t.Fatalf("%s = %s, want an error containing %q", c.expr, got, want)
				}
				return
			}
			if got != c.want {
				t.Fatalf("%s = %s, want %s", c.expr, got, c.want)
			}
		})
	}
}

// TestTimeLimitNamesTheLimit checks that evaluation is bounded in time as
// well as in count, and that the error says which limit ran out.
func TestTimeLimitNamesTheLimit(t *testing.T) {
	t.Parallel()
	terms := make([]string, 200)
	for i := range terms {
		terms[i] = "l.size() == 0"
	}
	g := map[string]value.Value{"l": value.List{value.Int(1)}}
	v, run := evalCond(t, strings.Join(terms, " || "), g, func(e *eval.Env) { e.MaxDuration = time.Nanosecond })
	e, ok := v.(*value.Error)
	if !ok || e.Kind != value.Exhausted || !strings.Contains(e.Message, "time limit") || run.Limit() != "time" {
		t.Fatalf("got %s (limit %q), want the time limit's error", value.Show(v), run.Limit())
	}
	v, run = evalCond(t, strings.Join(terms, " || "), g, func(e *eval.Env) { e.MaxExpressions = 50 })
	e, ok = v.(*value.Error)
	if !ok || e.Kind != value.Exhausted || !strings.Contains(e.Message, "50 expressions") || run.Limit() != "expressions" {
		t.Fatalf("got %s (limit %q), want the expression budget's error", value.Show(v), run.Limit())
	}
}

// TestMatchOrderWithIndex: the children index returns every matching
// block in source order, literal and wildcard siblings interleaved, and
// near misses only when nothing matched.
func TestMatchOrderWithIndex(t *testing.T) {
	t.Parallel()
	src := "rules_version = '2';\nservice s {\n" +
		"  match /a/{x} { allow read; }\n  match /{c}/{y} { allow read; }\n  match /b/{z} { allow read; }\n" +
		"  match /a/{p=**} { allow read; }\n  match /{q=**} { allow read; }\n}\n"
	rs, diags := parser.Parse(source.NewFile("t.rules", src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := eval.NewProgram(rs)
	cases := map[string][]string{
		"a/1": {"/a/{x}", "/{c}/{y}", "/a/{p=**}", "/{q=**}"},
		"b/1": {"/{c}/{y}", "/b/{z}", "/{q=**}"},
		"z/1": {"/{c}/{y}", "/{q=**}"},
	}
	for path, want := range cases {
		m, attempts := p.Match(strings.Split(path, "/"))
		var got []string
		for _, x := range m {
			got = append(got, x.Block.Pattern)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") || attempts != nil {
			t.Errorf("%s: matched %v (attempts %v), want %v", path, got, attempts, want)
		}
	}
	strict := "rules_version = '2';\nservice s {\n  match /a/{x} { allow read; }\n  match /b/c { allow read; }\n}\n"
	rs, _ = parser.Parse(source.NewFile("t.rules", strict))
	if m, attempts := eval.NewProgram(rs).Match([]string{"b", "d"}); len(m) != 0 || len(attempts) != 2 {
		t.Errorf("no match: %d matched, attempts %+v", len(m), attempts)
	}
}

// TestFoldingKeepsCountsAndBudget: a constant list or map literal is
// folded once, yet a run counts the expressions evaluating it would have
// (traced runs evaluate it, so both counts must agree), runs out of
// budget at the same expression, and values are never shared mutably.
func TestFoldingKeepsCountsAndBudget(t *testing.T) {
	t.Parallel()
	g := map[string]value.Value{"s": value.String("b")}
	for _, cond := range []string{
		"s in ['a', 'b', 'c']",
		"['a', ['b', 1], {'k': [true, null]}].size() == 3",
		"{'a': 1, 'b': [2, 3]}.keys().hasOnly(['a', 'b'])",
		"[s, 'x'].hasAny(['a', 'b'])", // not constant: evaluated each time
		"({'a': 1, 'a': 2}).a == 2",   // a duplicate key is left to evaluation
	} {
		v1, fast := evalCond(t, cond, g, nil)
		v2, traced := evalCond(t, cond, g, func(e *eval.Env) { e.Trace = true })
		if value.Show(v1) != value.Show(v2) || v1 != value.Bool(true) {
			t.Errorf("%s: untraced %s, traced %s, want true", cond, value.Show(v1), value.Show(v2))
		}
		if fast.Count() != traced.Count() {
			t.Errorf("%s: untraced run counted %d expressions, traced %d", cond, fast.Count(), traced.Count())
		}
		// Exactly the budget the condition needs passes; one less is exhausted,
		// folded or not.
		n := traced.Count()
		for _, trace := range []bool{false, true} {
			if v, _ := evalCond(t, cond, g, func(e *eval.Env) { e.MaxExpressions, e.Trace = n, trace }); v != value.Bool(true) {
				t.Errorf("%s (trace %v): budget %d gave %s", cond, trace, n, value.Show(v))
			}
			v, _ := evalCond(t, cond, g, func(e *eval.Env) { e.MaxExpressions, e.Trace = n-1, trace })
			if e, ok := v.(*value.Error); !ok || e.Kind != value.Exhausted {
				t.Errorf("%s (trace %v): budget %d gave %s, want exhausted", cond, trace, n-1, value.Show(v))
			}
		}
	}
}

// TestNestedCallArguments: call arguments live on the run's stack while
// their call runs; nested and failing calls must not see each other's.
func TestNestedCallArguments(t *testing.T) {
	t.Parallel()
	g := map[string]value.Value{"l": value.List{value.Int(1), value.Int(2)}}
	cases := []struct{ expr, want string }{
		{"l.concat([3]).hasAll(l.concat([l.size()]))", "true"},
		{"math.abs(l[0] - l.concat([5]).size()) == 2", "true"},
		{"'a,b'.split(',').concat(['c,d'.split(',')[1]]).join('-') == 'a-b-d'", "true"},
		{"l.hasAny([1 / 0]) || l.concat([9]).hasAll([9, 1])", "true"},
		{"[l.size(), [l.concat(l).size(), l.toSet().size()].size()] == [2, 2]", "true"},
	}
	for _, c := range cases {
		if v, _ := evalCond(t, c.expr, g, nil); value.Show(v) != c.want {
			t.Errorf("%s = %s, want %s", c.expr, value.Show(v), c.want)
		}
	}
}

// TestMemberChainsCountEveryNode: an untraced run reads a chain such as
// request.auth.token.email in one step; its value, error and budget must
// be those of evaluating node by node (as a traced run does), also when
// the budget runs out inside the chain.
func TestMemberChainsCountEveryNode(t *testing.T) {
	request := value.Map{"auth": value.Map{"uid": value.String("u"), "token": value.Map{"email": value.String("a@b")}}}
	conds := []string{
		"request.auth.token.email == 'a@b' && request.auth.uid == 'u'",
		"request.auth.token.nope.deeper == 1 || request.auth.uid == 'u'",
		"(request.auth).token.email.size() > 0 && request.a.b.c.d.e.f.g.h.i.j == 1",
	}
	for _, cond := range conds {
		for max := 1; max <= 30; max++ {
			var vals [2]string
			var counts [2]int
			for i, traced := range []bool{false, true} {
				v, run := evalCond(t, cond, map[string]value.Value{"request": request}, func(e *eval.Env) {
					e.Trace, e.MaxExpressions = traced, max
				})
				vals[i], counts[i] = value.Show(v), run.Count()
				if e, ok := v.(*value.Error); ok {
					vals[i] += " at " + value.Show(value.Int(e.Offset))
				}
			}
			if vals[0] != vals[1] || counts[0] != counts[1] {
				t.Errorf("%s with a budget of %d: untraced %s after %d expressions, traced %s after %d", cond, max, vals[0], counts[0], vals[1], counts[1])
			}
		}
	}
}
