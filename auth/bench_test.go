package auth_test

import (
	"fmt"
	"testing"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// BenchmarkSignUpDurable measures an email/password sign-up on a durable
// bbolt bucket with 0 and 50,000 existing accounts: the cost must not grow
// with the account count. "fsync" syncs every commit (what kill -9 safety
// costs on this disk); "nosync" shows the engine's own share.
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
		bk := authtest.TempBolt(b)
		bk.DB.NoSync = !sync
		e, err := auth.Open(auth.Options{Bucket: bk})
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
