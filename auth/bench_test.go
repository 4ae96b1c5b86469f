package auth_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server/auth/authtest"
)

// BenchmarkSignUpDurable measures an email/password sign-up on a durable
// log with 0 and 50,000 existing accounts: the cost must not grow with the
// account count. "fsync" syncs every commit (--sync always: what power-loss
// safety costs on this disk); "nosync" is the default (batch), which
// survives kill -9.
func BenchmarkSignUpDurable(b *testing.B) {
	for _, sync := range []bool{true, false} {
		for _, n := range []int{0, 50_000} {
			benchSignUp(b, sync, n)
		}
	}
}

func benchSignUp(b *testing.B, sync bool, n int) {
	mode := "nosync"
	if sync {
		mode = "fsync"
	}
	b.Run(fmt.Sprintf("%s/users=%d", mode, n), func(b *testing.B) {
		sm := sandbox.SyncBatch
		if sync {
			sm = sandbox.SyncAlways
		}
		st, err := sandbox.OpenStoreSync(b.TempDir(), sm)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		e, err := auth.Open(auth.Options{Log: st.Log("auth")})
		if err != nil {
			b.Fatal(err)
		}
		if n > 0 {
			snap := auth.Snapshot{Version: 1, Projects: map[string]auth.ProjectSnapshot{"p": {}}}
			ps := snap.Projects["p"]
			for i := range n {
				ps.Users = append(ps.Users, &auth.User{LocalID: fmt.Sprintf("seed%06d", i), Email: fmt.Sprintf("seed%d@example.com", i),
					PasswordHash: "fakeHash:salt=s:password=secret123", Salt: "s"})
			}
			snap.Projects["p"] = ps
			if err := e.RestoreState(snap); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp(fmt.Sprintf("bench%d@example.com", i)), Password: "secret123"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHotPaths measures the calls every app makes most, on the durable
// log `pyric serve` gives Auth by default (batch sync):
// sign-up, sign-in with a password, a token refresh and a lookup by ID
// token. On a loaded machine compare cpu-ns/op (the process's CPU time,
// its garbage collection included) and allocs/op, not ns/op.
func BenchmarkHotPaths(b *testing.B) {
	e, err := auth.Open(auth.Options{Log: authtest.TempLog(b)})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	refresh := make([]string, n)
	ids := make([]string, n)
	for i := range n {
		r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp(fmt.Sprintf("hot%d@example.com", i)), Password: "secret123"})
		if err != nil {
			b.Fatal(err)
		}
		refresh[i], ids[i] = r.RefreshToken, r.IDToken
	}
	made := 0 // sign-up runs more than once: every address is new
	b.Run("sign-up", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for range b.N {
			made++
			if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp(fmt.Sprintf("new%d@example.com", made)), Password: "secret123"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sign-in", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := range b.N {
			if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp(fmt.Sprintf("hot%d@example.com", i%n)), Password: "secret123"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refresh", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := range b.N {
			if _, err := e.GrantToken(dClient, auth.GrantTokenRequest{GrantType: "refresh_token", RefreshToken: refresh[i%n]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := range b.N {
			if _, err := e.Lookup(dClient, auth.LookupRequest{IDToken: ids[i%n]}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU reports the process's CPU time per op (user and system, every
// thread) from when it is called to when the function it returns is.
func reportCPU(b *testing.B) func() {
	start := benchkit.SelfCPU()
	return func() { b.ReportMetric(float64(benchkit.SelfCPU()-start)/float64(b.N), "cpu-ns/op") }
}

// BenchmarkSignInCaptured measures a sign-in with a password and the
// session capture's read of the records its events name (what a flush
// writes for it), on the durable log pyric serve gives Auth.
func BenchmarkSignInCaptured(b *testing.B) {
	evs := &eventList{}
	e, err := auth.Open(auth.Options{Log: authtest.TempLog(b), Events: evs})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	for i := range n {
		if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp(fmt.Sprintf("cap%d@example.com", i)), Password: "secret123"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.EachRecord(func([]string, json.RawMessage) error { return nil }); err != nil {
		b.Fatal(err)
	}
	evs.take()
	written := 0
	write := func(_ []string, v json.RawMessage) error { written += len(v); return nil }
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := range b.N {
		if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp(fmt.Sprintf("cap%d@example.com", i%n)), Password: "secret123"}); err != nil {
			b.Fatal(err)
		}
		for _, ev := range evs.take() {
			if tok, ok := e.RecordChange(ev); ok {
				if err := e.Records(tok, write); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
