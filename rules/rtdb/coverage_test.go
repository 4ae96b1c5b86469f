package rtdb

import (
	"testing"

	"github.com/pyric/pyric/rules/source"
)

// Coverage counts allowed requests (decided untraced) as well as denied
// ones, expression by expression.
func TestCoverageCountsEveryEvaluation(t *testing.T) {
	rs, diags := Compile(source.NewFile("database.rules.json", `{"rules": {"users": {"$uid": {
  ".write": "auth != null && auth.uid === $uid",
  ".validate": "newData.hasChildren(['name'])"}}}}`))
	if rs == nil {
		t.Fatal(diags)
	}
	cov := NewCoverage(rs)
	for _, uid := range []string{"alice", "bob", ""} {
		var a *Auth
		if uid != "" {
			a = &Auth{UID: uid}
		}
		d, err := rs.Evaluate(Request{Operation: Write, Path: "/users/alice", Auth: a, NewData: map[string]any{"name": "A"}, Coverage: cov})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != (uid == "alice") {
			t.Fatalf("%s: allowed = %v", uid, d.Allowed)
		}
	}
	got := map[string]ExprCoverage{}
	for _, x := range cov.Expressions() {
		got[x.Text] = x
	}
	for text, want := range map[string][4]int{ // true, false, error, skipped
		"auth != null && auth.uid === $uid": {1, 2, 0, 0},
		"auth != null":                      {2, 1, 0, 0},
		"auth.uid === $uid":                 {1, 1, 0, 1},
		"newData.hasChildren(['name'])":     {1, 0, 0, 0},
	} {
		x, ok := got[text]
		if !ok {
			t.Errorf("%s: not counted (have %v)", text, got)
			continue
		}
		if [4]int{x.True, x.False, x.Error, x.Skipped} != want {
			t.Errorf("%s: %+v, want true/false/error/skipped %v", text, x, want)
		}
		if x.Line != 2 && x.Line != 3 || x.Column == 0 || x.MatchPath != "/users/$uid" {
			t.Errorf("%s: position %+v", text, x)
		}
	}
}

func BenchmarkWriteMessageCounted(b *testing.B) {
	rs, _ := Compile(source.NewFile("bench.json", benchRules))
	benchDecisions(b, Request{Operation: Write, Path: "/rooms/lobby/messages/new1", Auth: benchAuth, Data: benchData(), Now: testNow,
		NewData: map[string]any{"from": "user1", "text": "hello there", "ts": 1.0}, Coverage: NewCoverage(rs)})
}
