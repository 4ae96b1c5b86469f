package expr

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestParsePrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct{ src, want string }{
		{"a || b && c", "(|| a (&& b c))"},
		{"a && b || c && d", "(|| (&& a b) (&& c d))"},
		{"a || b || c", "(|| (|| a b) c)"},
		{"a === b && c !== d", "(&& (=== a b) (!== c d))"},
		{"a == b != c", "(!= (== a b) c)"},
		{"a < b === c >= d", "(=== (< a b) (>= c d))"},
		{"1 + 2 * 3 - 4 / 5 % 6", "(- (+ 1 (* 2 3)) (% (/ 4 5) 6))"},
		{"a - b - c", "(- (- a b) c)"},
		{"!a && -b < c", "(&& (! a) (< (- b) c))"},
		{"!!a", "(! (! a))"},
		{"a ? b : c ? d : e", "(? a b (? c d e))"},
		{"a || b ? c : d", "(? (|| a b) c d)"},
		{"a ? b ? c : d : e", "(? a (? b c d) e)"},
		{"(a || b) && c", "(&& (paren (|| a b)) c)"},
		{"data.child('a').val()", "(call (. (call (. data child) \"a\") val))"},
		{"auth.token['firebase']['sign_in_provider']", "([] ([] (. auth token) \"firebase\") \"sign_in_provider\")"},
		{"newData.hasChildren(['a', \"b\"])", "(call (. newData hasChildren) [\"a\" \"b\"])"},
		{"$uid.matches(/^[a-z]+\\/x$/i)", "(call (. $uid matches) /^[a-z]+\\/x$/i)"},
		{"a / b / c", "(/ (/ a b) c)"},
		{"(a) / 2", "(/ (paren a) 2)"},
		{"x.y / /re/", "(/ (. x y) /re/)"},
		{"'it\\'s' + \"q\\\"\"", "(+ \"it's\" \"q\\\"\")"},
		{"1.5e3 + .5 + 0x1F", "(+ (+ 1500 0.5) 31)"},
		{"true && false || null", "(|| (&& true false) null)"},
		{"  now  ", "now"},
		{"a.b.c(1, 2)(3)", "(call (call (. (. a b) c) 1 2) 3)"},
	}
	for _, tt := range tests {
		n, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if got := Dump(n); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.src, got, tt.want)
		}
		if n.Pos() < 0 || n.End() > len(tt.src) || n.Pos() > n.End() {
			t.Errorf("Parse(%q): span [%d,%d) outside the source", tt.src, n.Pos(), n.End())
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	// Each case marks the expected error start with ^ under the source.
	tests := []struct{ src, caret, msg string }{
		{"", "^", "empty expression"},
		{"a &&", "    ^", "unexpected end of expression"},
		{"a = b", "  ^", "assignment is not allowed"},
		{"a & b", "  ^", "use &&"},
		{"a | b", "  ^", "use ||"},
		{"(a", "  ^", "expected ')'"},
		{"a.", "  ^", "expected a property or method name"},
		{"a.1", " ^", "unexpected number .1"},
		{"'abc", "^", "unterminated string"},
		{"/abc", "^", "unterminated regular expression"},
		{"a b", "  ^", "unexpected identifier b"},
		{"f(a,)", "    ^", "expected an operand"},
		{"f(a b)", "    ^", "expected ','"},
		{"a ? b", "     ^", "expected ':'"},
		{"`x`", "^", "template strings"},
		{"a;", " ^", "semicolons"},
		{"{a: 1}", "^", "object literals"},
		{"undefined", "^", "'undefined' is not supported"},
		{"1abc", "^", "identifier starts immediately after a number"},
		{"+a", "^", "unary '+'"},
		{"a @ b", "  ^", "unexpected character"},
		{"=== b", "^", "needs an operand on its left"},
		{"[1, 2", "     ^", "expected ','"},
		{"a[1", "   ^", "expected ']'"},
		{"'\\u12'", " ^", "invalid \\u escape"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", tt.src, tt.msg)
			continue
		}
		if want := strings.Index(tt.caret, "^"); err.Pos != want {
			t.Errorf("Parse(%q): error at %d, want %d (%s)", tt.src, err.Pos, want, err.Msg)
		}
		if !strings.Contains(err.Msg, tt.msg) {
			t.Errorf("Parse(%q): error %q, want it to mention %q", tt.src, err.Msg, tt.msg)
		}
		if err.EndPos < err.Pos {
			t.Errorf("Parse(%q): error span [%d,%d) is inverted", tt.src, err.Pos, err.EndPos)
		}
	}
}

func TestParseDepthLimit(t *testing.T) {
	t.Parallel()
	ok := strings.Repeat("(", MaxDepth-1) + "a" + strings.Repeat(")", MaxDepth-1)
	if _, err := Parse(ok); err != nil {
		t.Errorf("%d parentheses: %v", MaxDepth-1, err)
	}
	deep := strings.Repeat("(", 5000) + "a" + strings.Repeat(")", 5000)
	if _, err := Parse(deep); err == nil || !strings.Contains(err.Msg, "nested too deeply") {
		t.Errorf("5000 parentheses: got %v, want a nesting error", err)
	}
	if _, err := Parse(strings.Repeat("!", 5000) + "a"); err == nil {
		t.Error("5000 ! operators: want a nesting error")
	}
	// A long flat chain is not nesting.
	chain := "a" + strings.Repeat(" && a", 2000)
	if _, err := Parse(chain); err != nil {
		t.Errorf("flat chain of 2001 operands: %v", err)
	}
}

// TestParseGolden parses every line of testdata/exprs.txt and compares the
// dumps (or errors) with testdata/exprs.golden; -update rewrites it.
func TestParseGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "exprs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n, perr := Parse(line)
		out.WriteString(line + "\n")
		if perr != nil {
			out.WriteString("  error " + perr.Error() + "\n")
		} else {
			out.WriteString("  " + Dump(n) + "\n")
		}
	}
	golden := filepath.Join("testdata", "exprs.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if out.String() != string(want) {
		t.Errorf("parse dumps differ from %s (run with -update after checking):\n%s", golden, out.String())
	}
}

func FuzzParseExpr(f *testing.F) {
	seeds := []string{
		"auth != null", "$uid === auth.uid", "newData.child('a').val() > now - 1000",
		"data.val() == null ? true : newData.val().matches(/^[a-z]{1,8}$/i)",
		"auth.token['firebase']['sign_in_provider'] === 'anonymous'",
		"newData.hasChildren(['a', 'b']) && !data.exists()", "(((", "'unterminated", "/re", "a ? b :",
		"x.y / /re/g", "1e999 + 0x", "newData.val().replace('a', 'b').toUpperCase().length",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n, err := Parse(src)
		if err != nil {
			if n != nil {
				t.Fatalf("Parse(%q) returned a tree and an error", src)
			}
			if err.Pos < 0 || err.Pos > len(src) || err.EndPos < err.Pos {
				t.Fatalf("Parse(%q): error span [%d,%d) out of range", src, err.Pos, err.EndPos)
			}
			if strings.Contains(err.Msg, "internal parser error") {
				t.Fatalf("Parse(%q) panicked: %s", src, err.Msg)
			}
			return
		}
		Walk(n, func(x Node) bool {
			if x.Pos() < 0 || x.End() > len(src) || x.Pos() > x.End() {
				t.Fatalf("Parse(%q): node %s has span [%d,%d)", src, Dump(x), x.Pos(), x.End())
			}
			return true
		})
		_ = Dump(n)
	})
}
