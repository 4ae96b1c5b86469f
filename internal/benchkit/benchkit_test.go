package benchkit

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// A thread that sleeps switches out: the count of this process grows,
// read as "self" or by its pid.
func TestContextSwitches(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc here")
	}
	before := ContextSwitches(0)
	for range 5 {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	self, byPid := ContextSwitches(0), ContextSwitches(os.Getpid())
	if self <= before || byPid < self {
		t.Errorf("switches before %d, after %d (self), %d (by pid)", before, self, byPid)
	}
}

// Touching fresh pages faults them in: the count of this process grows.
func TestPageFaults(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	before := PageFaults(0)
	b := make([]byte, 8<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)
	if after := PageFaults(os.Getpid()); after <= before {
		t.Errorf("page faults %d before touching 8 MiB, %d after", before, after)
	}
}
