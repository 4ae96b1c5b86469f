package memlimit

import (
	"github.com/pyric/pyric/internal/await"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		live, other uint64
		want        int64
	}{
		{"small heap gets the minimum headroom", 8 << 20, 4 << 20, (8 + 4 + 24) << 20},
		{"large heap gets a quarter", 400 << 20, 10 << 20, (400 + 10 + 100) << 20},
		{"at the crossover", 96 << 20, 0, (96 + 24) << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Limit(c.live, c.other); got != c.want {
				t.Errorf("Limit(%d, %d) = %d, want %d", c.live, c.other, got, c.want)
			}
		})
	}
}

// Start sets a limit and moves it after each collection to follow the
// live heap.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	if !Start() {
		t.Skip("GOMEMLIMIT or GOGC=off is set: the policy is off")
	}
	waitPrefaulted(t)
	defer debug.SetMemoryLimit(math.MaxInt64)
	if os.Getenv("GOGC") == "" {
		// The limit decides when to collect; GOGC is the backstop.
		if prev := debug.SetGCPercent(100); prev != GCPercent {
			t.Errorf("GOGC after Start = %d, want %d", prev, GCPercent)
		}
		defer debug.SetGCPercent(100)
	}
	runtime.GC()
	before := waitLimit(t, func(int64) bool { return true })
	if before == math.MaxInt64 {
		t.Fatalf("no limit set")
	}
	// Hold 64 MiB live: the next collections raise the limit past it.
	hold := make([][]byte, 64)
	for i := range hold {
		hold[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	after := waitLimit(t, func(l int64) bool { return l >= before+64<<20 })
	runtime.KeepAlive(hold)
	if after < before+64<<20 {
		t.Errorf("limit %d MiB after holding 64 MiB more, was %d MiB", after>>20, before>>20)
	}
}

// waitLimit polls the limit (set from a finalizer, asynchronously) until
// ok accepts it or a few seconds pass, and returns it.
func waitLimit(t *testing.T, ok func(int64) bool) int64 {
	t.Helper()
	var l int64
	await.Poll(2*time.Second, func() bool {
		if l = debug.SetMemoryLimit(-1); l != math.MaxInt64 && ok(l) {
			return true
		}
		runtime.GC() // the finalizer that sets the limit runs after a GC
		return false
	})
	return l
}

// Reserve raises the limit at once by what it reserves, at most
// MaxReserved for all reservations together, and release takes it back.
func TestReserveRaisesTheLimitUntilReleased(t *testing.T) {
	if !Start() {
		t.Skip("GOMEMLIMIT or GOGC=off is set: the policy is off")
	}
	waitPrefaulted(t)
	defer debug.SetMemoryLimit(math.MaxInt64)
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	// The live heap moves the limit a little between two readings.
	near := func(got, want int64) bool { return got > want-8<<20 && got < want+8<<20 }
	reapply()
	before := limit()
	release := Reserve(64 << 20)
	if l := limit(); !near(l, before+64<<20) {
		t.Errorf("limit %d MiB with 64 MiB reserved, was %d MiB", l>>20, before>>20)
	}
	more := Reserve(MaxReserved)
	if l := limit(); !near(l, before+MaxReserved) {
		t.Errorf("limit %d MiB with more than MaxReserved reserved, was %d MiB (MaxReserved %d MiB)", l>>20, before>>20, MaxReserved>>20)
	}
	more()
	release()
	release() // a second release gives nothing back twice
	if reserved.Load() != 0 {
		t.Errorf("%d bytes still reserved after every release", reserved.Load())
	}
	if l := limit(); !near(l, before) {
		t.Errorf("limit %d MiB after the releases, was %d MiB", l>>20, before>>20)
	}
}

// TestBudget: bytes are taken up to Max and no further (a refused Take
// reserves nothing), and given back.
func TestBudget(t *testing.T) {
	b := &Budget{Max: 10}
	if !b.Take(6) || b.Take(5) || b.Used() != 6 {
		t.Fatalf("after 6 of 10 taken and 5 refused: used %d", b.Used())
	}
	if !b.Take(4) || b.Used() != 10 {
		t.Fatalf("the last 4 bytes: used %d", b.Used())
	}
	b.Give(6)
	b.Give(4)
	if b.Used() != 0 || !b.Take(10) {
		t.Fatalf("given back: used %d", b.Used())
	}
}
