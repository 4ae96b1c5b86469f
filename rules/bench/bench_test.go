package bench

import (
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// sixComparisons is a 6-comparison boolean over request.auth and
// request.resource.data, valid in both languages.
const sixComparisons = `request.auth.uid == 'alice' && request.auth.token.email_verified == true && ` +
	`request.resource.data.title.size() < 100 && request.resource.data.count >= 0 && ` +
	`request.resource.data.owner == request.auth.uid && request.resource.data.status != 'archived'`

func requestGo() map[string]any {
	return map[string]any{
		"auth": map[string]any{"uid": "alice", "token": map[string]any{"email_verified": true, "email": "alice@example.com"}},
		"resource": map[string]any{"data": map[string]any{
			"title": "hello world", "count": int64(3), "owner": "alice", "status": "draft",
		}},
		"method": "create",
	}
}

func pyricProgram(b testing.TB) (*eval.Program, eval.Matched, *eval.Env) {
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /d/{id} {\n    allow create: if " + sixComparisons + ";\n  }\n}\n"
	rs, diags := parser.Parse(source.NewFile("bench.rules", src))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	p := eval.NewProgram(rs)
	m, _ := p.Match([]string{"d", "x"})
	if len(m) != 1 {
		b.Fatal("no match")
	}
	env := &eval.Env{Program: p, Globals: map[string]value.Value{"request": value.MustFromGo(requestGo())}}
	return p, m[0], env
}

// BenchmarkSixComparisons evaluates the same boolean over the same request
// with pyric's evaluator (untraced; traced and rendered for reports; traced
// in typed form only) and with cel-go.
func BenchmarkSixComparisons(b *testing.B) {
	b.Run("pyric", func(b *testing.B) {
		six := pyricSix(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			six()
		}
	})
	b.Run("pyric-traced", func(b *testing.B) {
		_, m, env := pyricProgram(b)
		env.Trace = true
		cond := m.Block.Match.Allows[0].Cond
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			eval.NewRun(env).Condition(m, cond)
		}
	})
	b.Run("pyric-typed-trace", func(b *testing.B) {
		_, m, env := pyricProgram(b)
		env.Trace = true
		cond := m.Block.Match.Allows[0].Cond
		if _, steps := eval.NewRun(env).ConditionSteps(m, cond); len(steps) == 0 {
			b.Fatal("no steps")
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			eval.NewRun(env).ConditionSteps(m, cond)
		}
	})
	b.Run("cel-go", func(b *testing.B) {
		eval := celProgram(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			eval()
		}
	})
}

// pyricSix returns the untraced pyric evaluation of the six comparisons.
func pyricSix(b testing.TB) func() {
	_, m, env := pyricProgram(b)
	cond := m.Block.Match.Allows[0].Cond
	if v, _ := eval.NewRun(env).Condition(m, cond); v != value.Bool(true) {
		b.Fatalf("pyric: %v", value.Show(v))
	}
	return func() { eval.NewRun(env).Condition(m, cond) }
}

// celProgram compiles the six comparisons with cel-go and returns their
// evaluation over the same request.
func celProgram(b testing.TB) func() {
	e, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		b.Fatal(err)
	}
	ast, iss := e.Compile(sixComparisons)
	if iss.Err() != nil {
		b.Fatal(iss.Err())
	}
	prg, err := e.Program(ast)
	if err != nil {
		b.Fatal(err)
	}
	act, err := cel.NewActivation(map[string]any{"request": requestGo()})
	if err != nil {
		b.Fatal(err)
	}
	out, _, err := prg.Eval(act)
	if err != nil || out.Value() != true {
		b.Fatalf("cel-go: %v %v", out, err)
	}
	return func() { prg.Eval(act) }
}
