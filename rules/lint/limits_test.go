package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

// firestoreRules wraps functions and allow statements in a ruleset.
func firestoreRules(funcs, allows string) string {
	return "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" +
		funcs + "\n    match /t/{id} {\n" + allows + "\n    }\n  }\n}\n"
}

func storageRules(funcs, allows string) string {
	return "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n" +
		funcs + "\n    match /t/{id} {\n" + allows + "\n    }\n  }\n}\n"
}

// severityOf returns the severity of the code's diagnostics ("" when there
// are none; the worst when there are several) and their messages.
func severityOf(res *Result, code string) (string, []string) {
	sev, msgs := "", []string(nil)
	for _, d := range res.Diagnostics {
		if d.Code != code {
			continue
		}
		msgs = append(msgs, d.Message)
		if sev == "" || d.Severity == source.Error {
			sev = d.Severity.String()
		}
	}
	return sev, msgs
}

func lintText(t *testing.T, service, text string) *Result {
	t.Helper()
	res := Lint(source.NewFile("t.rules", text), Options{Service: service})
	for _, d := range res.Diagnostics {
		if d.Code == CodeInternal || d.Code == "PARSE_ERROR" {
			t.Fatalf("%s\n%s", d, text)
		}
	}
	return res
}

// productionRejects reports whether package check (production's compile
// errors, measured against the official emulator) rejects the text.
func productionRejects(text, code string) bool {
	rs, diags := parser.Parse(source.NewFile("t.rules", text))
	if len(diags) > 0 {
		return true
	}
	for _, d := range check.Check(rs, check.Options{Service: Firestore}) {
		if d.Code == code && d.Severity == source.Error {
			return true
		}
	}
	return false
}

func TestSourceSizeBoundary(t *testing.T) {
	t.Parallel()
	base := firestoreRules("", "      allow read: if request.auth != null;")
	for _, tc := range []struct {
		size int
		want string
	}{{MaxSourceBytes - 1, ""}, {MaxSourceBytes, ""}, {MaxSourceBytes + 1, "error"}} {
		pad := tc.size - len(base) - len("//\n")
		text := "//" + strings.Repeat("x", pad) + "\n" + base
		if len(text) != tc.size {
			t.Fatalf("built %d bytes, want %d", len(text), tc.size)
		}
		res := lintText(t, Firestore, text)
		if got, _ := severityOf(res, CodeSourceSize); got != tc.want {
			t.Errorf("%d bytes: SOURCE_SIZE %q, want %q", tc.size, got, tc.want)
		}
		if res.Metrics.SourceSize != tc.size {
			t.Errorf("metrics.sourceSize = %d", res.Metrics.SourceSize)
		}
	}
}

func chain(n int, operand func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = operand(i)
	}
	return strings.Join(parts, " && ")
}

func comparison(i int) string { return fmt.Sprintf("resource.data.f%d == %d", i, i) }

func TestChainDepthBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n        int
		compare  bool
		want     string
		exceeds  bool // the message says production rejects it
		rejected bool // production (package check) rejects it
	}{
		{84, true, "", false, false},
		{85, true, "warning", false, false},
		{86, true, "warning", false, false},
		{94, true, "warning", false, false},
		{95, true, "error", false, false},
		{96, true, "error", false, false},
		{97, true, "error", false, false},
		{98, true, "error", false, false},
		{99, true, "error", true, true},
		{100, true, "error", true, true},
		// Bare operands nest one level less: 99 compile, 100 don't.
		{98, false, "error", false, false},
		{99, false, "error", false, false},
		{100, false, "error", true, true},
	} {
		operand := comparison
		if !tc.compare {
			operand = func(int) string { return "true" }
		}
		text := firestoreRules("", "      allow read: if "+chain(tc.n, operand)+";")
		res := lintText(t, Firestore, text)
		name := fmt.Sprintf("%d operands (comparisons %v)", tc.n, tc.compare)
		got, msgs := severityOf(res, CodeChainDepth)
		if got != tc.want {
			t.Errorf("%s: CHAIN_DEPTH %q, want %q", name, got, tc.want)
		}
		if exceeds := len(msgs) > 0 && strings.Contains(msgs[0], "the ruleset does not compile"); exceeds != tc.exceeds {
			t.Errorf("%s: message %q", name, msgs)
		}
		if rej := productionRejects(text, check.CodeNesting); rej != tc.rejected {
			t.Errorf("%s: package check rejects = %v, want %v", name, rej, tc.rejected)
		}
		if nest, _ := severityOf(res, CodeNesting); nest != "" {
			t.Errorf("%s: NESTING_DEPTH reported next to CHAIN_DEPTH", name)
		}
		if res.Metrics.MaxChainDepth != tc.n {
			t.Errorf("%s: metrics.maxChainDepth = %d", name, res.Metrics.MaxChainDepth)
		}
	}
}

func TestLetLimitBoundary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lets int
		want string
	}{{10, ""}, {11, ""}, {12, "error"}, {13, "error"}} {
		var b strings.Builder
		b.WriteString("    function f() {\n")
		var names []string
		for i := 0; i < tc.lets; i++ {
			fmt.Fprintf(&b, "      let v%d = %d;\n", i, i)
			names = append(names, fmt.Sprintf("v%d", i))
		}
		fmt.Fprintf(&b, "      return %s > 0;\n    }", strings.Join(names, " + "))
		text := firestoreRules(b.String(), "      allow read: if f();")
		res := lintText(t, Firestore, text)
		if got, _ := severityOf(res, CodeLetLimit); got != tc.want {
			t.Errorf("%d lets: LET_LIMIT %q, want %q", tc.lets, got, tc.want)
		}
		if rej := productionRejects(text, check.CodeLetLimit); rej != (tc.want == "error") {
			t.Errorf("%d lets: package check rejects = %v", tc.lets, rej)
		}
		if res.Metrics.MaxLetBindings != tc.lets {
			t.Errorf("metrics.maxLetBindings = %d", res.Metrics.MaxLetBindings)
		}
	}
}

func TestCallDepthBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		depth int
		want  string
	}{{17, ""}, {18, "warning"}, {19, "warning"}, {20, "warning"}, {21, "warning"}, {22, "error"}, {23, "error"}} {
		var b strings.Builder
		for i := 1; i <= tc.depth; i++ {
			body := fmt.Sprintf("f%d()", i+1)
			if i == tc.depth {
				body = "request.auth != null"
			}
			fmt.Fprintf(&b, "    function f%d() { return %s; }\n", i, body)
		}
		text := firestoreRules(b.String(), "      allow read: if f1();")
		res := lintText(t, Firestore, text)
		if got, _ := severityOf(res, CodeCallDepth); got != tc.want {
			t.Errorf("%d functions: CALL_DEPTH %q, want %q", tc.depth, got, tc.want)
		}
		if rej := productionRejects(text, check.CodeCallDepth); rej != (tc.want == "error") {
			t.Errorf("%d functions: package check rejects = %v", tc.depth, rej)
		}
		if res.Metrics.MaxCallDepth != tc.depth {
			t.Errorf("metrics.maxCallDepth = %d", res.Metrics.MaxCallDepth)
		}
	}
}

func TestGetCountBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		service string
		n       int
		want    string
	}{
		{Firestore, 4, ""}, {Firestore, 5, "warning"}, {Firestore, 6, "warning"},
		{Firestore, 9, "warning"}, {Firestore, 10, "warning"}, {Firestore, 11, "error"}, {Firestore, 12, "error"},
		{Storage, 1, ""}, {Storage, 2, ""}, {Storage, 3, "error"}, {Storage, 4, "error"},
	} {
		call := "exists(/databases/$(database)/documents/c/d%d)"
		wrap := firestoreRules
		if tc.service == Storage {
			call = "firestore.exists(/databases/(default)/documents/c/d%d)"
			wrap = storageRules
		}
		// Half the lookups sit in a helper function: they count too.
		helper := chain((tc.n+1)/2, func(i int) string { return fmt.Sprintf(call, i) })
		rest := chain(tc.n/2, func(i int) string { return fmt.Sprintf(call, 100+i) })
		cond := "request.auth != null && helper()"
		if tc.n/2 > 0 {
			cond += " && " + rest
		}
		text := wrap("    function helper() { return "+helper+"; }", "      allow read: if "+cond+";")
		res := lintText(t, tc.service, text)
		if got, _ := severityOf(res, CodeGetCount); got != tc.want {
			t.Errorf("%s, %d documents: GET_COUNT %q, want %q", tc.service, tc.n, got, tc.want)
		}
		if res.Metrics.GetCallCount != tc.n {
			t.Errorf("%s: metrics.getCallCount = %d, want %d", tc.service, res.Metrics.GetCallCount, tc.n)
		}
	}
}

// pad returns an expression of exactly n expression nodes (n >= 1).
func pad(n int) string {
	if n%2 == 1 {
		return chain((n+1)/2, func(int) string { return "true" })
	}
	return "!(" + chain(n/2, func(int) string { return "true" }) + ")"
}

func TestExpressionBudgetBoundaries(t *testing.T) {
	t.Parallel()
	for calls := 0; calls <= 5; calls++ {
		warn, errAt := BudgetTier(calls)
		for _, tc := range []struct {
			n    int
			want string
		}{{warn - 1, ""}, {warn, "warning"}, {warn + 1, "warning"}, {errAt - 1, "warning"}, {errAt, "error"}, {errAt + 1, "error"}} {
			var funcs strings.Builder
			var parts []string
			for i := 1; i <= calls; i++ {
				fmt.Fprintf(&funcs, "    function h%d() { return true; }\n", i)
				parts = append(parts, fmt.Sprintf("h%d()", i))
			}
			used := 2*calls + max(calls-1, 0) // each call and its body, and the &&s between them
			cond := pad(tc.n)
			if calls > 0 {
				cond = strings.Join(parts, " && ") + " && " + pad(tc.n-used-1)
			}
			res := lintText(t, Firestore, firestoreRules(funcs.String(), "      allow read: if "+cond+";"))
			if got, _ := severityOf(res, CodeExpressionBudget); got != tc.want {
				t.Errorf("%d calls, %d expressions: EXPRESSION_BUDGET %q, want %q", calls, tc.n, got, tc.want)
			}
			if res.Metrics.MaxEstimatedExpressions != tc.n || res.Metrics.MaxFunctionCalls != calls {
				t.Errorf("%d calls, %d expressions: metrics %+v", calls, tc.n, res.Metrics)
			}
		}
	}
}

// TestCallsAreNotMemoized: a helper called twice costs twice, and calls
// made by helpers count.
func TestCallsAreNotMemoized(t *testing.T) {
	t.Parallel()
	text := firestoreRules(`    function leaf() { return request.auth != null; }
    function mid() { return leaf() && leaf(); }`, "      allow read: if mid() && mid();")
	res := lintText(t, Firestore, text)
	// leaf: 4 nodes; mid: 2 calls + && + 2 leaves = 11; rule: 2 calls + && + 2 mids = 25.
	if res.Metrics.MaxEstimatedExpressions != 25 || res.Metrics.MaxFunctionCalls != 6 {
		t.Errorf("metrics = %+v", res.Metrics)
	}
}
