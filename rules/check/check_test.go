package check_test

import (
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

// TestCheckTable runs conditions and functions through the checker alone,
// independent of the service bindings: want lists the diagnostic codes
// expected (errors and warnings), in order.
func TestCheckTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, funcs, cond string
		want              []string
	}{
		{"clean", "", "request.auth != null", nil},
		{"join without separator compiles", "", "['a'].join() == 'a'", nil},
		{"join with two arguments", "", "['a'].join(',', 1) == 'a'", []string{check.CodeArgCount}},
		{"method arity", "", "'a'.size(1) == 1", []string{check.CodeArgCount}},
		{"namespace arity", "", "math.abs(1, 2) == 1", []string{check.CodeArgCount}},
		{"global arity", "", "int() == 1", []string{check.CodeArgCount}},
		{"unknown method", "", "'a'.lenght() == 1", []string{check.CodeUndefinedFn}},
		{"unknown namespace function", "", "math.cbrt(8) == 2", []string{check.CodeUndefinedFn}},
		{"unknown function", "", "nope() == 1", []string{check.CodeUndefinedFn}},
		{"undefined variable", "", "nope == 1", []string{check.CodeUndefinedID}},
		{"user function arity", "function f(x) { return x; }", "f()", []string{check.CodeArgCount}},
		{"recursion", "function f(x) { return f(x); }", "f(1)", []string{check.CodeRecursion}},
		{"invalid regex", "", "'a'.matches('(')", []string{check.CodeRegex}},
		{"service builtin", "", "exists(/databases/$(database)/documents/a/b)", nil},
		{"unused let", "function f() { let y = 1; return true; }", "f()", []string{check.CodeUnused}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    " + c.funcs +
				"\n    match /d/{id} {\n      allow read: if " + c.cond + ";\n    }\n  }\n}\n"
			rs, diags := parser.Parse(source.NewFile("t.rules", src))
			if diags.HasErrors() {
				t.Fatalf("parse: %v", diags)
			}
			var got []string
			for _, d := range check.Check(rs, check.Options{Service: "cloud.firestore"}) {
				got = append(got, d.Code)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("%s: codes %v, want %v", c.cond, got, c.want)
			}
		})
	}
}

// TestEnvironments: each service resolves calls against its own
// declaration table (check.Environment): Firestore's bare builtins,
// Storage's firestore namespace.
func TestEnvironments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		service, cond string
		want          []string
	}{
		{check.Firestore, "get(/databases/x/documents/a/b).data.v == 1", nil},
		// The count of a Firestore builtin's arguments is checked when it is evaluated.
		{check.Firestore, "exists(/a, /b)", nil},
		{check.Storage, "firestore.get(/databases/(default)/documents/a/b).data.v == 1", nil},
		{check.Storage, "firestore.gett(/a) != null", []string{check.CodeUndefinedFn}},
		{check.Storage, "firestore.exists(/a, /b)", []string{check.CodeArgCount}},
		{check.Storage, "get(/a) != null", []string{check.CodeUndefinedFn}},
	}
	for _, c := range cases {
		src := "rules_version = '2';\nservice " + c.service + " {\n  match /d/{id} {\n    allow read: if " + c.cond + ";\n  }\n}\n"
		rs, diags := parser.Parse(source.NewFile("t.rules", src))
		if diags.HasErrors() {
			t.Fatalf("parse: %v", diags)
		}
		var got []string
		for _, d := range check.Check(rs, check.Options{Service: c.service}) {
			got = append(got, d.Code)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s %s: codes %v, want %v", c.service, c.cond, got, c.want)
		}
	}
	if _, ok := check.Environment(check.Storage).Lookup(eval.Namespaced, "firestore", "get"); !ok {
		t.Error("Storage's environment lacks firestore.get")
	}
}
