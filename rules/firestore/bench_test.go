package firestore

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// realisticRules is a typical app ruleset: ownership, membership through
// get(), field validation on writes. rules/bench times the same file
// beside cel-go.
var realisticRules = func() string {
	b, err := os.ReadFile("testdata/realistic.rules")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func BenchmarkDecideRealistic(b *testing.B) {
	rs, diags := Compile(source.NewFile("firestore.rules", realisticRules))
	if rs == nil {
		b.Fatal(diags)
	}
	now := time.Now()
	room := value.Map{"members": value.List{value.String("alice"), value.String("bob")}}
	req := &Request{Method: Create, Path: "rooms/r1/messages/m1", Time: now, Auth: &Auth{UID: "alice", Token: map[string]any{}},
		After: value.Map{"text": value.String("hello"), "author": value.String("alice"), "sent": value.Timestamp{Time: now}},
		Get:   LookupFunc(func(string) (value.Map, bool, error) { return room, true, nil })}
	if d := rs.decide(req, false); !d.Allowed() {
		b.Fatalf("not allowed: %v", d.Notes)
	}
	b.Run("no-trace", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rs.decide(req, false)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
	b.Run("typed-trace", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rs.DecideSteps(req)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
	b.Run("trace-rendered", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rs.Decide(req)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
	// Rule coverage of an allowed request: the counter path, against
	// tracing it to count from the trace.
	b.Run("no-trace+coverage", func(b *testing.B) {
		r := *req
		r.Coverage = NewCoverage(rs)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rs.decide(&r, false)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
	// Each request at its own time, as in a server: `request` is a new
	// value every time (kept up to coverage.MaxValues, then elided).
	b.Run("no-trace+coverage/new-time", func(b *testing.B) {
		r := *req
		r.Coverage = NewCoverage(rs)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r.Time = now.Add(time.Duration(i) * time.Millisecond)
			rs.decide(&r, false)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
	b.Run("trace+coverage", func(b *testing.B) {
		cov := NewCoverage(rs)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			cov.Record(rs.Decide(req).Rules)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
}

// BenchmarkDecideBudgetHeavy evaluates a rule near the 1,000-expression
// budget: many helper calls with long disjunctions.
func BenchmarkDecideBudgetHeavy(b *testing.B) {
	terms := make([]string, 12)
	for i := range terms {
		terms[i] = fmt.Sprintf("x == 'role%d'", i)
	}
	calls := make([]string, 17)
	for i := range calls {
		calls[i] = fmt.Sprintf("hasRole(request.auth.token.role%d)", i)
	}
	src := rulesWith("    function hasRole(x) { return "+strings.Join(terms, " || ")+"; }", strings.Join(calls, " || ")+" || true")
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		b.Fatal(diags)
	}
	token := map[string]any{}
	for i := 0; i < 25; i++ {
		token[fmt.Sprintf("role%d", i)] = "none"
	}
	req := &Request{Method: Get, Path: "d/x", Time: time.Now(), Auth: &Auth{UID: "u", Token: token}, Resource: &Doc{Path: "d/x", Data: value.Map{}}}
	d := rs.decide(req, false)
	if !d.Allowed() || d.Expressions < 800 {
		b.Fatalf("budget-heavy rule: %s after %d expressions", d.Outcome, d.Expressions)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rs.decide(req, false)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(d.Expressions), "expressions/decision")
}

func BenchmarkCompile(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Compile(source.NewFile("firestore.rules", realisticRules))
	}
}

// manyBlocks is a ruleset with n sibling match blocks (/c0/{id} … /cN/{id}).
func manyBlocks(n int) string {
	var b strings.Builder
	b.WriteString("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    match /c%d/{id} {\n      allow get: if request.auth != null && id == 'x';\n    }\n", i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// BenchmarkDecideManyBlocks decides a request for the last of n sibling
// blocks: the matcher looks the collection up instead of trying each
// block, so 200 blocks cost about what 20 do.
func BenchmarkDecideManyBlocks(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rs, diags := Compile(source.NewFile("firestore.rules", manyBlocks(n)))
			if rs == nil {
				b.Fatal(diags)
			}
			req := &Request{Method: Get, Path: fmt.Sprintf("c%d/x", n-1), Time: time.Now(), Auth: &Auth{UID: "u"}, Resource: &Doc{Path: "d/x", Data: value.Map{}}}
			if d := rs.DecideFast(req); !d.Allowed() {
				b.Fatalf("%s %v", d.Outcome, d.Notes)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rs.DecideFast(req)
			}
		})
	}
}

// decideExplain is what the Firestore engine does per app request: decide
// untraced, decide again traced when denied, and build the event's
// explanation (sim.Explain, the bindings).
func (rs *Ruleset) decideExplain(req *Request) sim.Explained {
	d := rs.DecideFast(req)
	if !d.Allowed() {
		d = rs.Decide(req)
	}
	exp := sim.Explain("firestore", "reason", d.Trace, d.Deciding, d.Notes, d.Expressions, d.Lookups)
	exp.Decision.Bindings = sim.Bound(d.Bindings.Map())
	return exp
}

// BenchmarkDecideExplain decides and explains requests as the engine
// does: a get allowed by `if true`, one allowed by `request.auth != null`,
// the realistic ruleset's create, and a get it denies.
func BenchmarkDecideExplain(b *testing.B) {
	open, diags := Compile(source.NewFile("open.rules", "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{document=**} {\n      allow read, write: if true;\n    }\n  }\n}\n"))
	if open == nil {
		b.Fatal(diags)
	}
	signedIn, diags := Compile(source.NewFile("auth.rules", "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{document=**} {\n      allow read, write: if request.auth != null;\n    }\n  }\n}\n"))
	if signedIn == nil {
		b.Fatal(diags)
	}
	realistic, diags := Compile(source.NewFile("firestore.rules", realisticRules))
	if realistic == nil {
		b.Fatal(diags)
	}
	now := time.Now()
	room := value.Map{"members": value.List{value.String("alice"), value.String("bob")}}
	auth := &Auth{UID: "alice", Token: map[string]any{}}
	doc := &Doc{Path: "items/i1", Data: value.Map{"n": value.Int(1)}}
	create := &Request{Method: Create, Path: "rooms/r1/messages/m1", Time: now, Auth: auth,
		After: value.Map{"text": value.String("hello"), "author": value.String("alice"), "sent": value.Timestamp{Time: now}},
		Get:   LookupFunc(func(string) (value.Map, bool, error) { return room, true, nil })}
	denied := &Request{Method: Get, Path: "rooms/r2/messages/m1", Time: now, Auth: &Auth{UID: "carol", Token: map[string]any{}},
		Resource: &Doc{Path: "rooms/r2/messages/m1", Data: value.Map{"text": value.String("hi")}},
		Get:      LookupFunc(func(string) (value.Map, bool, error) { return room, true, nil })}
	for _, c := range []struct {
		name  string
		rs    *Ruleset
		req   *Request
		allow bool
	}{
		{"if-true-allowed", open, &Request{Method: Get, Path: "items/i1", Time: now, Auth: auth, Resource: doc}, true},
		{"auth-allowed", signedIn, &Request{Method: Get, Path: "items/i1", Time: now, Auth: auth, Resource: doc}, true},
		{"realistic-allowed", realistic, create, true},
		{"realistic-denied", realistic, denied, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if exp := c.rs.decideExplain(c.req); (exp.Decision.Failing == nil) != c.allow {
				b.Fatalf("unexpected decision %+v", exp.Decision)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.rs.decideExplain(c.req)
			}
		})
	}
}
