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
// while the real table (untouched) knows none of it. Lint, given the
// copy (Options.Decls), accepts the call and suggests the method for a
// misspelling; without it, it does neither.
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
	if s := suggest("shuot", firestoreMethods); s == "shout" {
		t.Errorf("the real table suggests the throwaway method")
	}

	// Lint resolves and suggests against the table it is given.
	undefinedFn := func(src string, opts Options) []source.Diagnostic {
		var out []source.Diagnostic
		for _, d := range Lint(source.NewFile("t.rules", src), opts).Diagnostics {
			if d.Code == CodeUndefinedFunction {
				out = append(out, d)
			}
		}
		return out
	}
	if ds := undefinedFn(src, Options{Decls: env}); len(ds) != 0 {
		t.Errorf("lint with the method reports it undefined: %v", ds)
	}
	if ds := undefinedFn(src, Options{}); len(ds) != 1 {
		t.Errorf("lint without the method: %v, want one %s", ds, CodeUndefinedFunction)
	}
	typo := firestoreRules("", "      allow read: if id.shuot() == 'X!';")
	ds := undefinedFn(typo, Options{Decls: env})
	if len(ds) != 1 || ds[0].Fix != "did you mean `shout()`?" {
		t.Errorf("lint of shuot with the method: %v, want did you mean `shout()`?", ds)
	}
	for _, d := range undefinedFn(typo, Options{}) {
		if strings.Contains(d.Fix, "shout") {
			t.Errorf("lint of shuot without the method suggests it: %v", d)
		}
	}
}
