package parser

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/source"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestConformanceRulesetsParse parses every ruleset production accepted.
func TestConformanceRulesetsParse(t *testing.T) {
	for _, service := range []string{"firestore", "storage"} {
		scenarios, err := conformance.Load(service)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scenarios {
			_, diags := Parse(source.NewFile(s.ID+".rules", s.Rules))
			for _, d := range diags {
				t.Errorf("%s/%s: %s", service, s.ID, d)
			}
		}
	}
}

// TestGolden compares AST dumps of testdata/*.rules with their .golden files.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.rules")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rs, diags := Parse(source.NewFile(filepath.Base(path), string(src)))
			got := ast.Dump(rs)
			for _, d := range diags {
				got += "error " + d.String() + "\n"
			}
			golden := strings.TrimSuffix(path, ".rules") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("dump mismatch for %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func TestExpressions(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a || b && c", "(|| a (&& b c))"},
		{"a && b || c", "(|| (&& a b) c)"},
		{"1 == 1 in [true]", "(in (== 1 1) (list true))"},
		{"x is int && y", "(&& (is x int) y)"},
		{"a is bool < 3", "(< (is a bool) 3)"},
		{"1 == 1 is bool", "(is (== 1 1) bool)"},
		{"1. == 1.0", "(== 1f 1f)"},
		{"a ? b : c ? d : e", "(? a b (? c d e))"},
		{"!a.b()", "(! (call (. a b)))"},
		{"-1", "-1"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"- x", "(- x)"},
		{"1 + 2 * 3 - 4 % 5", "(- (+ 1 (* 2 3)) (% 4 5))"},
		{"a < b == c <= d", "(== (< a b) (<= c d))"},
		{"x[1][a:b][:2][3:]", "(slice (slice (slice (index x 1) a b) <nil> 2) 3 <nil>)"},
		{"math.abs(-1.5)", "(call (. math abs) -1.5f)"},
		{"f(a, b,)", "(call f a b)"},
		{"{'a': 1, b: [2,],}", "(map \"a\":1 b:(list 2))"},
		{"/databases/$(database)/documents/users/$(request.auth.uid)", "(path databases $database documents users $(. (. request auth) uid))"},
		{"get(/databases/$(db)/documents/a/b).data", "(. (call get (path databases $db documents a b)) data)"},
		{"exists(/databases/(default)/documents/a/x-1.y)", "(call exists (path databases (default) documents a x-1.y))"},
		{"4 / 2", "(/ 4 2)"},
		{".5 == 0.5", "(== 0.5f 0.5f)"},
		{"'a\\'b\\n\\u00e9\\x41\\101'", `"a'b\né` + "AA\""},
		{"b'\\x01\\xff'", `b"\x01\xff"`},
		{"(a)", "(paren a)"},
		{"request.resource.data.keys().hasAll(['a'])", "(call (. (call (. (. (. request resource) data) keys)) hasAll) (list \"a\"))"},
	}
	for _, tt := range tests {
		e, diags := ParseExpr(source.NewFile("", tt.src))
		if len(diags) > 0 {
			t.Errorf("%s: %v", tt.src, diags)
			continue
		}
		if got := ast.DumpExpr(e); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

func TestExpressionErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1e3", "no exponent"},
		{"9.matches('a')", "unexpected 'matches'"},
		{"0x10", "hexadecimal"},
		{"'a\\vb'", "invalid escape sequence \\v"},
		{"'abc", "never closed"},
		{"4/2", "put a space after '/'"},
		{"a === b", "'===' is not a rules operator; use '=='"},
		{"a !== b", "use '!='"},
		{"a?.b", "optional chaining"},
		{"`x`", "template strings"},
		{"- -1", "unexpected '-'"},
		{"--x", "Increment (++) and decrement (--) operators are not supported."},
		{"x is foo", "An unsupported type identifier was used with the 'is' operator. Received foo."},
		{"/a/{x}", "write $(x)"},
		{"f(", "expected ')', found end of file"},
		{"(a", "expected ')', found end of file"},
		{"99999999999999999999", "out of range"},
		{"a b", "expected end of expression, found 'b'"},
		{"x /* open", "comment is never closed"},
	}
	for _, tt := range tests {
		_, diags := ParseExpr(source.NewFile("", tt.src))
		if len(diags) == 0 {
			t.Errorf("%s: no error, want %q", tt.src, tt.want)
			continue
		}
		if !strings.Contains(diags.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.src, diags, tt.want)
		}
	}
}

func TestRulesetErrorsArePositioned(t *testing.T) {
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /a/{id} {\n      allow read: if ;\n    }\n  }\n}\n"
	_, diags := Parse(source.NewFile("x.rules", src))
	if len(diags) != 1 {
		t.Fatalf("diags = %v", diags)
	}
	d := diags[0]
	if d.Span.Start.Line != 5 || d.Span.Start.Column != 22 || d.Message != "Missing conditional expression after 'if'." {
		t.Errorf("got %v at %s", d.Message, d.Span.Start)
	}
}

func TestDeepNestingDoesNotOverflow(t *testing.T) {
	if _, diags := ParseExpr(source.NewFile("", strings.Repeat("a.", 100000)+"b")); len(diags) != 0 {
		t.Errorf("long member chain: %v", diags)
	}
	for _, src := range []string{strings.Repeat("(", 100000), strings.Repeat("!", 100000) + "x", strings.Repeat("[", 50000), strings.Repeat("{'a':", 10000)} {
		_, diags := ParseExpr(source.NewFile("", src))
		if len(diags) == 0 {
			t.Errorf("no error for %.10s...", src)
		}
	}
}

func FuzzParse(f *testing.F) {
	scenarios, _ := conformance.Load("firestore")
	for _, s := range scenarios {
		f.Add(s.Rules)
	}
	f.Add("service cloud.firestore { match /{x=**} { allow read: if get(/a/$(x)).data.y[1:2] is int; } }")
	f.Fuzz(func(t *testing.T, src string) {
		rs, diags := Parse(source.NewFile("fuzz.rules", src))
		if rs == nil {
			t.Fatal("nil ruleset")
		}
		for _, d := range diags {
			if !d.Span.Start.IsValid() {
				t.Fatalf("diagnostic without position: %v", d)
			}
		}
		_ = ast.Dump(rs)
	})
}
