package firestore

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// sameDecision reports how an untraced decision (the compiled
// evaluation) differs from the traced one (the tree walk), "" when it
// does not: outcome, notes, every rule's verdict and message, the
// expressions counted and the documents read must agree.
func sameDecision(fast, traced *Decision) string {
	show := func(d *Decision) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s deciding=%d expressions=%d lookups=%d notes=%q", d.Outcome, d.Deciding, d.Expressions, d.Lookups, d.Notes)
		for _, r := range d.Trace {
			fmt.Fprintf(&b, "\n  %s %s %q", r.Verdict, r.Condition, r.Message)
		}
		for _, r := range d.Rules {
			fmt.Fprintf(&b, "\n  value %s", value.Show(r.Value))
		}
		return b.String()
	}
	if f, t := show(fast), show(traced); f != t {
		return "untraced: " + f + "\ntraced:   " + t
	}
	return ""
}

// TestCompiledAgreesWithTreeWalk decides every recorded conformance case
// and the differential test's expressions (curated, past verdict
// differences and generated ones) both untraced, which evaluates the
// compiled closures, and traced, which walks the tree: the decisions
// must be the same.
func TestCompiledAgreesWithTreeWalk(t *testing.T) {
	t.Parallel()
	scenarios, err := conformance.Load("firestore")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	cases := 0
	for _, s := range scenarios {
		rs, _ := Compile(source.NewFile("firestore.rules", s.Rules))
		if rs == nil {
			continue
		}
		for _, raw := range s.Cases {
			var c Case
			if err := conformance.Decode(raw, &c); err != nil {
				t.Fatal(err)
			}
			req, err := c.request(now)
			if err != nil {
				continue
			}
			cases++
			if diff := sameDecision(rs.DecideFast(req), rs.Decide(req)); diff != "" {
				t.Errorf("%s / %s:\n%s", s.ID, c.Description, diff)
			}
		}
	}
	if cases == 0 {
		t.Fatal("no conformance cases decided")
	}

	g := &exprGen{r: rand.New(rand.NewSource(20261202))}
	exprs := append(append([]string(nil), verdictCases...), curated...)
	for len(exprs) < len(verdictCases)+len(curated)+1500 {
		exprs = append(exprs, g.boolean(3))
	}
	// Functions with params, lets (used, unused, shadowed, erroring) and
	// calls between them, read by extra expressions.
	const funcs = `
    function signedIn() { return request.auth != null; }
    function owns(uid) { return signedIn() && request.auth.uid == uid; }
    function pick(a, b) { let x = a; let y = 1 / 0; let z = b; return z; }
    function deep(n) { return n <= 0 || deep2(n - 1); }
    function deep2(n) { return n > 2 && signedIn(); }
    function viaLet(d) { let k = d.keys(); return k.hasAll(['i']) && k.size() > 0; }
    function onlyKeys(d) { let e = d; return e.keys().hasOnly(['i', 's', 1]) || d.keys().hasAll(['i', 'zz']); }
`
	exprs = append(exprs, "owns('alice')", "owns(resource.data.s)", "pick(1, 2) == 2", "pick(1/0, 'b') == 'b'",
		"deep(3)", "viaLet(resource.data)", "viaLet(request.resource.data) || viaLet(resource.data)",
		"get(/databases/$(database)/documents/seed/s1).data.v == 7", "exists(/databases/$(database)/documents/seed/$(request.auth.uid))",
		"request.auth.token.firebase.sign_in_provider.size() > 0", "(request.auth).uid == 'alice'", "(request.auth.token).role == 'admin'",
		// keys().hasOnly/hasAll answered from the map: every error and
		// edge the sorted list would give.
		"resource.data.keys().hasOnly(resource.data.keys())", "resource.data.keys().hasAll([])", "resource.data.keys().hasAll(['i', 1])",
		"resource.data.keys().hasOnly(['i', 1, 'x'])", "resource.data.keys().hasOnly(1)", "resource.data.keys().hasAll('i')",
		"resource.data.l.keys().hasAll(['i'])", "resource.data.nothere.keys().hasOnly([])", "request.auth.keys().hasOnly(['uid', 'token'])",
		"(resource.data).keys().hasAll(['i'].toSet())", "(resource.data.keys()).hasOnly(['i'].toSet())", "{}.keys().hasOnly([])", "{}.keys().hasOnly(1)",
		"request.resource.data.keys().hasOnly(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's'])",
		"math.keys().hasAll([])", "onlyKeys(resource.data)", "onlyKeys(request.resource.data)", "onlyKeys(1)", "resource.data.keys().hasAll([1/0])",
		"resource.data.keys().hasOnly([resource.data.s, 'i', 's', 'f', 'b', 'l', 'm', 'n', 't'])", "{'a': 1, 'b': 2}.keys().hasOnly(['a', 'a'])", "{'a': 1}.keys().hasOnly(['a', 'a', 'b'])",
		"request.resource.keys().hasAll(['data', 'id'])")
	lookup := LookupFunc(func(path string) (value.Map, bool, error) {
		if path == "seed/s1" {
			return value.Map{"v": value.Int(7)}, true, nil
		}
		return nil, false, nil
	})
	decided := 0
	for start := 0; start < len(exprs); start += 100 {
		part := exprs[start:min(start+100, len(exprs))]
		for _, method := range []string{Get, Update} {
			src := rulesFor(method, part)
			src = strings.Replace(src, "match /databases/{database}/documents {\n", "match /databases/{database}/documents {\n"+funcs, 1)
			rs, diags := Compile(source.NewFile("firestore.rules", src))
			if rs == nil {
				// One expression the checker rejects: decide each alone.
				for i, e := range part {
					one := strings.Replace(rulesFor(method, []string{e}), "match /databases/{database}/documents {\n", "match /databases/{database}/documents {\n"+funcs, 1)
					one = strings.Replace(one, "/t0/", fmt.Sprintf("/t%d/", i), 1)
					if rs1, _ := Compile(source.NewFile("firestore.rules", one)); rs1 != nil {
						agree(t, rs1, method, i, e, lookup)
						decided++
					}
				}
				_ = diags
				continue
			}
			for i, e := range part {
				agree(t, rs, method, i, e, lookup)
			}
			decided += len(part)
		}
	}
	// The expressions only count if the functions compile: a checker
	// error in them would leave each expression undecided.
	if decided < len(exprs) {
		t.Errorf("decided %d expressions of %d for two methods", decided, len(exprs))
	}
}

func agree(t *testing.T, rs *Ruleset, method string, i int, e string, lookup Lookup) {
	t.Helper()
	coll := fmt.Sprintf("t%d", i)
	for _, auth := range []*Auth{{UID: "alice", Token: oracleClaims}, nil} {
		req := &Request{Method: method, Path: coll + "/doc", Auth: auth, Resource: &Doc{Path: coll + "/doc", Data: oracleDoc},
			Time: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Get: lookup}
		if method == Update {
			req.After = updatedDoc()
		}
		if diff := sameDecision(rs.DecideFast(req), rs.Decide(req)); diff != "" {
			t.Errorf("%s %q (auth %v):\n%s", method, e, auth != nil, diff)
		}
	}
}

// TestDecideFastConcurrent decides from many goroutines on one Ruleset,
// untraced and traced, as a server does: runs handed back for reuse
// (Run.Release) must never carry one decision's state into another.
// Run with -race.
func TestDecideFastConcurrent(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("testdata/realistic.rules")
	if err != nil {
		t.Fatal(err)
	}
	rs, diags := Compile(source.NewFile("firestore.rules", string(text)))
	if rs == nil {
		t.Fatal(diags)
	}
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	room := LookupFunc(func(p string) (value.Map, bool, error) {
		return value.Map{"members": value.List{value.String("alice")}}, p == "rooms/r1", nil
	})
	msg := value.Map{"text": value.String("hi"), "author": value.String("alice"), "sent": value.Timestamp{Time: now}}
	reqs := []*Request{
		{Method: Create, Path: "rooms/r1/messages/m1", Time: now, Auth: &Auth{UID: "alice"}, After: msg, Get: room},
		{Method: Create, Path: "rooms/r2/messages/m1", Time: now, Auth: &Auth{UID: "alice"}, After: msg, Get: room},
		{Method: Get, Path: "rooms/r1/messages/m2", Time: now, Auth: &Auth{UID: "bob"}, Get: room},
		{Method: Update, Path: "users/alice", Time: now, Auth: &Auth{UID: "alice"}, After: value.Map{"name": value.String("A")},
			Resource: &Doc{Path: "users/alice", Data: value.Map{}}},
		{Method: Update, Path: "users/bob", Time: now, Auth: &Auth{UID: "alice"}, After: value.Map{"name": value.Int(1)}},
		{Method: Get, Path: "users/x", Time: now},
	}
	want := make([]*Decision, len(reqs))
	for i, r := range reqs {
		want[i] = rs.Decide(r)
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				j := (g + i) % len(reqs)
				got := rs.DecideFast(reqs[j])
				if i%3 == 0 {
					got = rs.Decide(reqs[j])
				}
				if diff := sameDecision(got, want[j]); diff != "" {
					done <- fmt.Errorf("request %d:\n%s", j, diff)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
