package lint

import (
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// TestOneEditAddsAMethod registers a throwaway method in a copy of the
// Firestore environment — one Decl, nothing else — and sees the
// evaluator run it, the checker accept it and did-you-mean suggest it,
// while the real table (untouched) knows none of it. Lint's
// suggestions read eval.Standard.Methods(), so the same entry added to
// eval.Standard reaches the linter's diagnostics.
func TestOneEditAddsAMethod(t *testing.T) {
	shout := eval.Decl{Kind: eval.Method, Name: "shout", MinArgs: 0, MaxArgs: 0, Status: eval.Production,
		Doc: "The string in upper case with an exclamation mark.",
		Receivers: []eval.Receiver{{Type: value.TString, Impl: func(recv value.Value, args []value.Value) value.Value {
			return value.String(strings.ToUpper(string(recv.(value.String))) + "!")
		}}}}
	env := check.Environment(check.Firestore).With(shout)

	src := firestoreRules("", "      allow read: if id.shout() == 'X!';")
	rs, diags := parser.Parse(source.NewFile("t.rules", src))
	if diags.HasErrors() {
		t.Fatalf("parse: %v", diags)
	}
	run := func(p *eval.Program) value.Value {
		m, _ := p.Match([]string{"databases", "(default)", "documents", "t", "x"})
		if len(m) != 1 {
			t.Fatalf("match: %d blocks", len(m))
		}
		v, _ := eval.NewRun(&eval.Env{Program: p}).Condition(m[0], m[0].Block.Match.Allows[0].Cond)
		return v
	}

	// The evaluator binds the copy's implementation.
	if v := run(eval.NewProgramWith(rs, env)); v != value.Bool(true) {
		t.Errorf("with the method: %s, want true", value.Show(v))
	}
	if v := run(eval.NewProgram(rs)); !value.IsError(v) || !strings.Contains(value.Show(v), "Function not found") {
		t.Errorf("without the method: %s, want Function not found", value.Show(v))
	}

	// The checker resolves the call against the copy.
	undefined := func(ds source.Diagnostics) bool {
		for _, d := range ds {
			if d.Code == check.CodeUndefinedFn {
				return true
			}
		}
		return false
	}
	if ds := check.Check(rs, check.Options{Service: check.Firestore, Decls: env}); undefined(ds) {
		t.Errorf("checker with the method: %v", ds)
	}
	if ds := check.Check(rs, check.Options{Service: check.Firestore}); !undefined(ds) {
		t.Errorf("checker without the method reports nothing: %v", ds)
	}

	// Did-you-mean suggests it from the table's names.
	if s := suggest("shuot", env.Methods()); s != "shout" {
		t.Errorf("suggest(shuot) with the method = %q, want shout", s)
	}
	if s := suggest("shuot", knownMethods); s == "shout" {
		t.Errorf("the real table suggests the throwaway method")
	}
}
