package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// realisticRules is a typical app ruleset (the file rules/firestore's own
// benchmark decides): ownership, membership through get(), field
// validation on writes.
var realisticRules = func() string {
	b, err := os.ReadFile("../firestore/testdata/realistic.rules")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func realistic(b testing.TB) (*firestore.Ruleset, *firestore.Request) {
	rs, diags := firestore.Compile(source.NewFile("firestore.rules", realisticRules))
	if rs == nil {
		b.Fatal(diags)
	}
	now := time.Now()
	room := value.Map{"members": value.List{value.String("alice"), value.String("bob")}}
	req := &firestore.Request{Method: firestore.Create, Path: "rooms/r1/messages/m1", Time: now,
		Auth:  &firestore.Auth{UID: "alice", Token: map[string]any{}},
		After: value.Map{"text": value.String("hello"), "author": value.String("alice"), "sent": value.Timestamp{Time: now}},
		Get:   firestore.LookupFunc(func(string) (value.Map, bool, error) { return room, true, nil })}
	if d := rs.DecideFast(req); !d.Allowed() {
		b.Fatalf("not allowed: %v", d.Notes)
	}
	return rs, req
}

// BenchmarkRealisticDecision decides a create against the realistic
// ruleset (path match, bindings, get(), two functions): untraced, with
// typed steps (what coverage and Studio read), and rendered for reports.
func BenchmarkRealisticDecision(b *testing.B) {
	rs, req := realistic(b)
	for _, m := range []struct {
		name   string
		decide func(*firestore.Request) *firestore.Decision
	}{{"untraced", rs.DecideFast}, {"typed-trace", rs.DecideSteps}, {"rendered-trace", rs.Decide}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				m.decide(req)
			}
		})
	}
}

// manyBlocks is a ruleset with n sibling match blocks (/c0/{id} … /cN/{id}).
func manyBlocks(n int) string {
	var sb strings.Builder
	sb.WriteString("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "    match /c%d/{id} {\n      allow get: if request.auth != null && id == 'x';\n    }\n", i)
	}
	sb.WriteString("  }\n}\n")
	return sb.String()
}

// BenchmarkManyBlocks decides a request for the last of n sibling blocks:
// 200 blocks cost about what 20 do.
func BenchmarkManyBlocks(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rs, diags := firestore.Compile(source.NewFile("firestore.rules", manyBlocks(n)))
			if rs == nil {
				b.Fatal(diags)
			}
			req := &firestore.Request{Method: firestore.Get, Path: fmt.Sprintf("c%d/x", n-1), Time: time.Now(),
				Auth: &firestore.Auth{UID: "u"}, Resource: &firestore.Doc{Path: fmt.Sprintf("c%d/x", n-1), Data: value.Map{}}}
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

// TestReport measures pyric and cel-go interleaved, several rounds, and
// prints each figure with its ratio to cel-go's measured in the same
// round, so a loaded machine shifts both sides alike. It runs only with
// PYRIC_BENCH_REPORT=1: `PYRIC_BENCH_REPORT=1 go test -run TestReport -v
// -test.benchtime 300ms` (each figure is one testing.Benchmark).
func TestReport(t *testing.T) {
	if os.Getenv("PYRIC_BENCH_REPORT") != "1" {
		t.Skip("set PYRIC_BENCH_REPORT=1 to print the benchmark report")
	}
	type fig struct {
		ns     float64
		allocs int64
	}
	bench := func(f func(*testing.B)) fig {
		r := testing.Benchmark(f)
		return fig{float64(r.T.Nanoseconds()) / float64(r.N), r.AllocsPerOp()}
	}
	cel := celProgram(t)
	six := pyricSix(t)
	rs, req := realistic(t)
	rows := []struct {
		name string
		f    func(*testing.B)
	}{
		{"pyric 6 comparisons", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				six()
			}
		}},
		{"realistic decision, untraced", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rs.DecideFast(req)
			}
		}},
		{"realistic decision, typed trace", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rs.DecideSteps(req)
			}
		}},
		{"realistic decision, rendered trace", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rs.Decide(req)
			}
		}},
	}
	const rounds = 5
	best := make([]fig, len(rows))
	ratios := make([][]float64, len(rows))
	var celBest fig
	for round := 0; round < rounds; round++ {
		c := bench(func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cel()
			}
		})
		if round == 0 || c.ns < celBest.ns {
			celBest = c
		}
		for i, r := range rows {
			f := bench(r.f)
			if round == 0 || f.ns < best[i].ns {
				best[i] = f
			}
			ratios[i] = append(ratios[i], f.ns/c.ns)
		}
	}
	median := func(xs []float64) float64 {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	t.Logf("best ns/op of %d interleaved rounds; ratio: median over the rounds of ns/op to cel-go's 6 comparisons in the same round", rounds)
	t.Logf("%-38s %10.0f ns/op %4d allocs/op", "cel-go 6 comparisons", celBest.ns, celBest.allocs)
	for i, r := range rows {
		t.Logf("%-38s %10.0f ns/op %4d allocs/op  %5.2f× cel-go", r.name, best[i].ns, best[i].allocs, median(ratios[i]))
	}
}
