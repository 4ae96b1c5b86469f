package priority

import (
	"runtime"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/await"
)

// LowerThread gives the calling goroutine's thread Lowered, and the thread
// ends with the goroutine: no lowered thread stays to run other work.
func TestLowerThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread priorities are Linux's")
	}
	base := ThreadNice()
	nice := make(chan [2]int)
	hold := make(chan struct{})
	go func() {
		before := ThreadNice()
		LowerThread()
		nice <- [2]int{before, ThreadNice()}
		<-hold
	}()
	got := <-nice
	if got[0] != base || got[1] != Lowered {
		t.Fatalf("nice %d before, %d after LowerThread; want %d, %d", got[0], got[1], base, Lowered)
	}
	if n := LoweredThreads(); n != 1 && !MainLowered() {
		t.Fatalf("%d lowered threads while the goroutine runs, want 1", n)
	}
	close(hold)
	if !await.Poll(10*time.Second, func() bool { return LoweredThreads() == 0 }) {
		t.Fatalf("%d lowered threads stayed after the goroutine ended", LoweredThreads())
	}
	if n := ThreadNice(); n != base {
		t.Fatalf("the test's own thread is at nice %d, want %d", n, base)
	}
}
