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

func TestEnvKnobs(t *testing.T) {
	t.Setenv("PYRIC_TEST_KNOB", "42")
	t.Setenv("PYRIC_TEST_BAD", "x")
	t.Setenv("PYRIC_TEST_LIST", "a,b")
	if n := EnvInt("PYRIC_TEST_KNOB", 3); n != 42 {
		t.Errorf("EnvInt set = %d", n)
	}
	if n := EnvInt("PYRIC_TEST_BAD", 3); n != 3 {
		t.Errorf("EnvInt not an integer = %d", n)
	}
	if n := EnvInt("PYRIC_TEST_UNSET", 3); n != 3 {
		t.Errorf("EnvInt unset = %d", n)
	}
	if l := EnvList("PYRIC_TEST_LIST", nil); len(l) != 2 || l[0] != "a" || l[1] != "b" {
		t.Errorf("EnvList set = %q", l)
	}
	if l := EnvList("PYRIC_TEST_UNSET", []string{"d"}); len(l) != 1 || l[0] != "d" {
		t.Errorf("EnvList unset = %q", l)
	}
}

// This process's CPU time read by pid and as "self" agree, and grows with
// work.
func TestProcCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	before := ProcCPU(os.Getpid())
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	self, byPid := ProcCPU(0), ProcCPU(os.Getpid())
	if self <= before || byPid < self {
		t.Errorf("CPU before %v, after %v (self), %v (by pid)", before, self, byPid)
	}
	if f := procStat(os.Getpid()); len(f) < 13 || len(f[0]) != 1 {
		t.Errorf("procStat = %q, want fields from the state (one letter) on", f)
	}
}
