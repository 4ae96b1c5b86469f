package eval_test

import (
	"testing"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// TestCompiledBudget evaluates conditions untraced (their compiled form)
// and traced (the tree walk) under every expression budget from 1 to
// what they need: the value, the expressions counted and the limit
// reported must be the same at each, so a budget that runs out midway —
// inside a member chain, a folded list, a function's let — runs out at
// the same node either way.
func TestCompiledBudget(t *testing.T) {
	t.Parallel()
	conds := []string{
		"request.auth.uid == 'alice' && request.auth.token.email_verified == true && request.resource.data.title.size() < 100",
		"request.resource.data.owner == request.auth.uid || request.resource.data.count >= 0",
		"f(request.auth.uid, [1, 2, 3]) && g(request.resource.data)",
		"['a', 'b', 'c'].hasAll(['a']) && {'k': 1}.k == 1 && ('x' in ['x', 'y'])",
		"(request.auth).token.email_verified ? -request.resource.data.count < 0 : !true",
		"/a/$(request.auth.uid)/b == path('/a/alice/b') && request.resource.data.keys().size() == 4",
		"request.resource.data.title[1:3] == 'el' && request.resource.data.title[0] == 'h' && request.nope.x == 1 || true",
		"request.resource.data.count is int && 1 / 0 == 1 || request.resource.data.status != 'archived'",
	}
	const funcs = `
  function f(u, l) { let n = l.size(); let u2 = u; return u2 == 'alice' && n == 3 && l[0] == 1; }
  function g(d) { let bad = 1 / 0; return d.title.size() > 0 && h(d.count); }
  function h(c) { return c > 0; }
`
	request := value.MustFromGo(map[string]any{
		"auth": map[string]any{"uid": "alice", "token": map[string]any{"email_verified": true}},
		"resource": map[string]any{"data": map[string]any{
			"title": "hello world", "count": int64(3), "owner": "alice", "status": "draft",
		}},
	})
	for _, cond := range conds {
		src := "rules_version = '2';\nservice s {\n" + funcs + "  match /d/{id} {\n    allow read: if " + cond + ";\n  }\n}\n"
		rs, diags := parser.Parse(source.NewFile("t.rules", src))
		if diags.HasErrors() {
			t.Fatalf("parse %q: %v", cond, diags)
		}
		p := eval.NewProgram(rs)
		m, _ := p.Match([]string{"d", "x"})
		c := m[0].Block.Match.Allows[0].Cond
		run := func(max int, trace bool) (string, int, string) {
			r := eval.NewRun(&eval.Env{Program: p, Globals: map[string]value.Value{"request": request}, MaxExpressions: max, Trace: trace})
			v, _ := r.Condition(m[0], c)
			shown := value.Show(v)
			if e, ok := v.(*value.Error); ok {
				shown += " at " + value.Show(value.Int(e.Offset))
			}
			return shown, r.Count(), r.Limit()
		}
		_, need, _ := run(0, true)
		for max := 1; max <= need+1; max++ {
			fv, fc, fl := run(max, false)
			tv, tc, tl := run(max, true)
			if fv != tv || fc != tc || fl != tl {
				t.Errorf("%q with a budget of %d: untraced %s (%d, %q), traced %s (%d, %q)", cond, max, fv, fc, fl, tv, tc, tl)
			}
		}
	}
}
