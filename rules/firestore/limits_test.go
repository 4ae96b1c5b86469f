package firestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

func rulesWith(fns, cond string) string {
	return fmt.Sprintf("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n%s\n    match /d/{id} {\n      allow get, create: if %s;\n    }\n  }\n}\n", fns, cond)
}

func decideGet(t *testing.T, src string, batch bool) *Decision {
	t.Helper()
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatalf("compile: %v", diags)
	}
	method := Get
	if batch {
		method = Create
	}
	return rs.Decide(&Request{Method: method, Path: "d/x", Time: time.Now(), Batch: batch, Auth: &Auth{UID: "u"},
		Resource: &Doc{Path: "d/x", Data: value.Map{}}, After: value.Map{},
		Get: LookupFunc(func(string) (value.Map, bool, error) { return value.Map{"ok": value.Bool(true)}, true, nil })})
}

func TestExpressionBudget(t *testing.T) {
	// Each call of f evaluates 1 + 10 comparisons of 3 nodes and 9 ||s.
	terms := make([]string, 10)
	for i := range terms {
		terms[i] = fmt.Sprintf("x == %d", i+100)
	}
	fn := "    function f(x) { return " + strings.Join(terms, " || ") + "; }"
	calls := func(n int) string {
		c := make([]string, n)
		for i := range c {
			c[i] = "f(1)"
		}
		return strings.Join(c, " || ") + " || true"
	}
	d := decideGet(t, rulesWith(fn, calls(10)), false)
	if !d.Allowed() || d.Expressions > 1000 {
		t.Fatalf("10 calls: %s after %d expressions", d.Outcome, d.Expressions)
	}
	d = decideGet(t, rulesWith(fn, calls(40)), false)
	if d.Allowed() || d.Expressions <= 1000 {
		t.Fatalf("40 calls: %s after %d expressions", d.Outcome, d.Expressions)
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "Evaluation budget exhausted") {
		t.Errorf("exhaustion is not explained: %v", d.Notes)
	}
}

func TestLookupLimits(t *testing.T) {
	gets := func(n int, distinct bool) string {
		var c []string
		for i := 0; i < n; i++ {
			p := "x"
			if distinct {
				p = fmt.Sprintf("x%d", i)
			}
			c = append(c, fmt.Sprintf("get(/databases/$(database)/documents/c/%s).data.ok", p))
		}
		return strings.Join(c, " && ")
	}
	tests := []struct {
		name  string
		cond  string
		batch bool
		want  sim.Outcome
	}{
		{"10 distinct documents", gets(10, true), false, sim.Allow},
		{"11 distinct documents", gets(11, true), false, sim.Deny},
		{"30 reads of one document count once", gets(30, false), false, sim.Allow},
		{"20 distinct documents in a batch", gets(20, true), true, sim.Allow},
		{"21 distinct documents in a batch", gets(21, true), true, sim.Deny},
		{"exists counts too", gets(10, true) + " && exists(/databases/$(database)/documents/other/y)", false, sim.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decideGet(t, rulesWith("", tt.cond), tt.batch)
			if d.Outcome != tt.want {
				t.Fatalf("%s, want %s: %v", d.Outcome, tt.want, d.Notes)
			}
			if tt.want == sim.Deny && !strings.Contains(strings.Join(d.Notes, "\n"), "document lookups") {
				t.Errorf("limit not explained: %v", d.Notes)
			}
		})
	}
}

func TestCompileLimits(t *testing.T) {
	chain := func(n int) string {
		c := make([]string, n)
		for i := range c {
			c[i] = fmt.Sprintf("request.auth.uid == 'u%d'", i)
		}
		return strings.Join(c, " || ")
	}
	lets := func(n int) string {
		var b strings.Builder
		b.WriteString("    function f() {\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "      let v%d = %d;\n", i, i)
		}
		b.WriteString("      return v0 == 0")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, " && v%d == %d", i, i)
		}
		b.WriteString(";\n    }")
		return b.String()
	}
	callChain := func(n int) string {
		var b strings.Builder
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "    function f%d() { return f%d(); }\n", i, i+1)
		}
		fmt.Fprintf(&b, "    function f%d() { return true; }", n)
		return b.String()
	}
	tests := []struct {
		name string
		src  string
		want string // "" compiles
	}{
		{"98-operand chain", rulesWith("", chain(98)), ""},
		{"99-operand chain", rulesWith("", chain(99)), "Expression is too complex to evaluate safely."},
		{"97 parentheses", rulesWith("", strings.Repeat("(", 97)+"1 == 1"+strings.Repeat(")", 97)), ""},
		{"98 parentheses", rulesWith("", strings.Repeat("(", 98)+"1 == 1"+strings.Repeat(")", 98)), "Expression is too complex to evaluate safely."},
		{"11 lets", rulesWith(lets(11), "f()"), ""},
		{"12 lets", rulesWith(lets(12), "f()"), "Maximum allowed variable count of 10 for a given function has been reached."},
		{"21 functions on a stack", rulesWith(callChain(21), "f1()"), ""},
		{"22 functions on a stack", rulesWith(callChain(22), "f1()"), "Maximum allowed call depth of 20 is reached for [f1->f2->f3->f4->f5->f6->f7->f8->f9->f10->f11->f12->f13->f14->f15->f16->f17->f18->f19->f20->f21->f22] call stack."},
		{"recursion", rulesWith("    function f(n) { return n <= 0 || f(n - 1); }", "f(3)"), "Recursive call is not allowed."},
		{"mutual recursion", rulesWith("    function a() { return b(); }\n    function b() { return a(); }", "a()"), "Recursive call is not allowed."},
		{"256 KiB", rulesWith("", "true") + strings.Repeat("/", 0) + "//" + strings.Repeat("x", 256*1024), "exceeding the 262144 byte (256 KiB) limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, diags := Compile(source.NewFile("firestore.rules", tt.src))
			if tt.want == "" {
				if rs == nil {
					t.Fatalf("does not compile: %v", diags)
				}
				return
			}
			if rs != nil {
				t.Fatalf("compiles, want %q", tt.want)
			}
			if !strings.Contains(diags.Error()+fmt.Sprint([]source.Diagnostic(diags)), tt.want) {
				t.Fatalf("diagnostics %v, want %q", diags, tt.want)
			}
		})
	}
	// The 21-function chain also evaluates.
	if d := decideGet(t, rulesWith(callChain(21), "f1()"), false); !d.Allowed() {
		t.Errorf("21-deep call: %s %v", d.Outcome, d.Notes)
	}
}

// TestListWithTrailingRecursiveWildcard: listing users against
// /users/{uid}/{rest=**} lets {uid} take the unknown document and {rest}
// match nothing (it once sliced an empty remainder).
func TestListWithTrailingRecursiveWildcard(t *testing.T) {
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /users/{uid}/{rest=**} {\n      allow list: if request.auth != null;\n    }\n  }\n}\n"
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatal(diags)
	}
	d := rs.Decide(&Request{Method: List, Path: "users", Time: time.Now(), Auth: &Auth{UID: "u"}})
	if !d.Allowed() {
		t.Errorf("list users: %s %v", d.Outcome, d.Notes)
	}
	d = rs.Decide(&Request{Method: List, Path: "users/a/posts", Time: time.Now(), Auth: &Auth{UID: "u"}})
	if !d.Allowed() {
		t.Errorf("list users/a/posts: %s %v", d.Outcome, d.Notes)
	}
}

// bigListRequest is an update whose rule runs hasAll over two
// 100,000-element lists (quadratic before hashed membership: 25 s).
func bigListRequest(t testing.TB) (*Ruleset, *Request) {
	t.Helper()
	const n = 100000
	stored, next := make(value.List, n), make(value.List, n)
	for i := range stored {
		stored[i] = value.String(fmt.Sprintf("tag-%d", i))
		next[n-1-i] = stored[i]
	}
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" +
		"    match /big/{id} {\n      allow update: if request.resource.data.tags.hasAll(resource.data.tags) && resource.data.tags.toSet().hasOnly(request.resource.data.tags);\n    }\n" +
		"    match /small/{id} {\n      allow get: if request.auth.uid == id;\n    }\n  }\n}\n"
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatalf("compile: %v", diags)
	}
	return rs, &Request{Method: Update, Path: "big/x", Time: time.Now(), Auth: &Auth{UID: "heavy"},
		Resource: &Doc{Path: "big/x", Data: value.Map{"tags": stored}}, After: value.Map{"tags": next}}
}

// TestLargeHasAllIsBoundedAndDoesNotDelayOthers decides a 100,000-element
// hasAll in bounded time while another user's requests keep being decided.
func TestLargeHasAllIsBoundedAndDoesNotDelayOthers(t *testing.T) {
	rs, big := bigListRequest(t)
	start := time.Now()
	if d := rs.Decide(big); !d.Allowed() {
		t.Fatalf("100,000-element hasAll: %s %v", d.Outcome, d.Notes)
	}
	// Generous: linear work takes milliseconds; the quadratic version took
	// 25 s and the evaluator's own time limit is a second.
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("100,000-element hasAll took %v", el)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				rs.DecideFast(big)
			}
		}
	}()
	small := &Request{Method: Get, Path: "small/alice", Time: time.Now(), Auth: &Auth{UID: "alice"}}
	var worst time.Duration
	for i := 0; i < 50; i++ {
		s := time.Now()
		if d := rs.DecideFast(small); !d.Allowed() {
			t.Fatalf("small request: %s %v", d.Outcome, d.Notes)
		}
		worst = max(worst, time.Since(s))
	}
	close(stop)
	<-done
	if worst > time.Second {
		t.Fatalf("a small request took %v while a large one was being decided", worst)
	}
	t.Logf("100,000-element hasAll decided in %v; worst concurrent small decision %v", time.Since(start), worst)
}
