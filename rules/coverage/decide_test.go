package coverage_test

import (
	"testing"
	"time"

	"github.com/pyric/pyric/rules/coverage"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

const rulesText = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /a/{id} {
      allow get: if request.auth != null && resource.data.n > 3;
    }
  }
}`

func compile(t *testing.T) *fsrules.Ruleset {
	t.Helper()
	rs, diags := fsrules.Compile(source.NewFile("firestore.rules", rulesText))
	if rs == nil {
		t.Fatal(diags)
	}
	return rs
}

func request(n int64, uid string) *fsrules.Request {
	r := &fsrules.Request{Method: "get", Path: "a/x", Resource: &fsrules.Doc{Path: "a/x", Data: value.Map{"n": value.Int(n)}}, Time: time.Now()}
	if uid != "" {
		r.Auth = &fsrules.Auth{UID: uid}
	}
	return r
}

func TestCoverageCountsTracedDecisions(t *testing.T) {
	rs := compile(t)
	cov := fsrules.NewCoverage(rs)
	for _, n := range []int64{5, 1} {
		cov.Record(rs.Decide(request(n, "u")).Rules)
	}
	rep := cov.Report()
	if len(rep) != 1 || len(rep[0].Values) != 2 || rep[0].Values[0].Count != 1 {
		t.Fatalf("report = %+v", rep)
	}
	cmp := rep[0].Children[1] // resource.data.n > 3
	if cmp.Source != "resource.data.n > 3" || len(cmp.Values) != 2 || string(cmp.Values[0].Value) != `{"boolValue":true}` {
		t.Fatalf("comparison node = %+v", cmp)
	}
}

// The cheap path (a Tally on an untraced decision) counts exactly what the
// traced path counts, allowed decisions included.
func TestTallyMatchesTrace(t *testing.T) {
	rs := compile(t)
	traced, counted := fsrules.NewCoverage(rs), fsrules.NewCoverage(rs)
	for _, req := range []*fsrules.Request{request(5, "u"), request(1, "u"), request(7, ""), request(9, "v")} {
		traced.Record(rs.Decide(req).Rules)
		req.Coverage = counted
		if d := rs.DecideFast(req); len(d.Rules) == 0 || d.Rules[0].Steps != nil {
			t.Fatalf("DecideFast traced: %+v", d.Rules)
		}
	}
	if a, b := shape(traced.Report()), shape(counted.Report()); a != b {
		t.Fatalf("tally differs from trace:\ntrace %s\ntally %s", a, b)
	}
	sum := counted.Summary()
	want := map[string]coverage.Expr{
		"request.auth != null && resource.data.n > 3": {True: 2, False: 2},
		"request.auth != null":                        {True: 3, False: 1},
		"resource.data.n > 3":                         {True: 2, False: 1, Skipped: 1},
	}
	seen := 0
	for _, x := range sum {
		w, ok := want[x.Text]
		if !ok {
			continue
		}
		seen++
		if x.True != w.True || x.False != w.False || x.Skipped != w.Skipped || x.Error != 0 {
			t.Errorf("%s: %+v, want %+v", x.Text, x, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("summary %+v lacks some of %v", sum, want)
	}
}

func shape(ns []*coverage.Node) string {
	s := ""
	for _, n := range ns {
		s += n.Source + "["
		for _, v := range n.Values {
			s += string(v.Value) + "×" + string(rune('0'+v.Count)) + " "
		}
		s += shape(n.Children) + "]"
	}
	return s
}

func BenchmarkDecide(b *testing.B) {
	rs, _ := fsrules.Compile(source.NewFile("firestore.rules", rulesText))
	req := request(5, "u")
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			rs.DecideFast(req)
		}
	})
	b.Run("fast+tally", func(b *testing.B) {
		cov := fsrules.NewCoverage(rs)
		r := *req
		r.Coverage = cov
		b.ReportAllocs()
		for range b.N {
			rs.DecideFast(&r)
		}
	})
	b.Run("traced+record", func(b *testing.B) {
		cov := fsrules.NewCoverage(rs)
		b.ReportAllocs()
		for range b.N {
			cov.Record(rs.Decide(req).Rules)
		}
	})
}
