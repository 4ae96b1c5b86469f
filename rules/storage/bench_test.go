package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// benchRequests are typical requests against testdata/storage.rules: user
// uploads and reads, team reads through firestore.exists(), and public
// reads.
func benchRequests() []*Request {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	alice := &Auth{UID: "alice", Token: map[string]any{"email": "alice@example.com"}}
	teams := FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		switch path {
		case "teams/t1/members/alice":
			return value.Map{"role": value.String("member")}, true, nil
		case "teams/t1":
			return value.Map{"admins": value.List{value.String("bob")}}, true, nil
		}
		return nil, false, nil
	})
	photo := &Object{Name: "users/alice/p.png", Bucket: DefaultBucket, Size: 1 << 20, ContentType: "image/png",
		Metadata: map[string]string{"owner": "alice"}, TimeCreated: now.Add(-time.Hour), Updated: now.Add(-time.Hour), Generation: 1, Metageneration: 1}
	return []*Request{
		{Method: Create, Path: "users/alice/p.png", Auth: alice, Incoming: photo, Time: now},
		{Method: Get, Path: "users/alice/p.png", Auth: alice, Resource: photo, Time: now},
		{Method: Delete, Path: "users/alice/p.png", Auth: alice, Resource: photo, Time: now},
		{Method: Get, Path: "teams/t1/plan.png", Auth: alice, Resource: photo, Time: now, Firestore: teams},
		{Method: Update, Path: "teams/t1/plan.png", Auth: alice, Resource: photo, Incoming: photo, Time: now, Firestore: teams},
		{Method: List, Path: "public/banners", Time: now},
		{Method: Create, Path: "users/bob/x.png", Auth: alice, Incoming: photo, Time: now},
	}
}

func benchDecide(b *testing.B, trace bool) {
	rs := mustCompile(b, readTestdata(b, "storage.rules"))
	reqs := benchRequests()
	for _, r := range reqs {
		r.NoTrace = !trace
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rs.Decide(reqs[i%len(reqs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkDecide measures decisions per second with the explanation trace
// (what the simulator and Studio show).
func BenchmarkDecide(b *testing.B) { benchDecide(b, true) }

// BenchmarkDecideNoTrace measures the server's path: verdicts and notes
// only.
func BenchmarkDecideNoTrace(b *testing.B) { benchDecide(b, false) }

// BenchmarkCompile measures compiling the realistic ruleset.
func BenchmarkCompile(b *testing.B) {
	text := readTestdata(b, "storage.rules")
	for b.Loop() {
		if rs, diags := Compile(source.NewFile("storage.rules", text)); rs == nil {
			b.Fatal(diags)
		}
	}
}

func TestBenchRequestsDecide(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, readTestdata(t, "storage.rules"))
	var got []string
	for _, r := range benchRequests() {
		d := rs.Decide(r)
		got = append(got, fmt.Sprintf("%s %s=%s", r.Method, r.Path, d.Outcome))
	}
	want := []string{
		"create users/alice/p.png=ALLOW", "get users/alice/p.png=ALLOW", "delete users/alice/p.png=ALLOW",
		"get teams/t1/plan.png=ALLOW", "update teams/t1/plan.png=DENY", "list public/banners=ALLOW", "create users/bob/x.png=DENY",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestDecideConcurrent decides from many goroutines on one Ruleset, as a
// server does; run with -race.
func TestDecideConcurrent(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, readTestdata(t, "storage.rules"))
	reqs := benchRequests()
	want := make([]string, len(reqs))
	for i, r := range reqs {
		want[i] = string(rs.Decide(r).Outcome)
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				j := (g + i) % len(reqs)
				if got := string(rs.Decide(reqs[j]).Outcome); got != want[j] {
					done <- fmt.Errorf("request %d: %s, want %s", j, got, want[j])
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

// BenchmarkDecideExplain decides and explains as the Storage engine does
// per request: untraced, traced again when denied, then sim.Explain and
// the bindings: the user upload (allowed) and another user's (denied).
func BenchmarkDecideExplain(b *testing.B) {
	rs := mustCompile(b, readTestdata(b, "storage.rules"))
	reqs := benchRequests()
	for _, c := range []struct {
		name string
		req  *Request
	}{{"upload-allowed", reqs[0]}, {"upload-denied", reqs[len(reqs)-1]}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.req.NoTrace = true
				d := rs.Decide(c.req)
				if !d.Allowed() {
					c.req.NoTrace = false
					d = rs.Decide(c.req)
				}
				exp := sim.Explain("storage", "reason", d.Trace, d.Deciding, d.Notes, d.Expressions, d.Lookups)
				exp.Decision.Bindings = sim.Bound(d.Bindings.Map())
			}
		})
	}
}
