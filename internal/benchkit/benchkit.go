// Package benchkit is what the service benchmarks (e2e/*bench) share: a
// free loopback address or ports (also for the tests that start the
// Emulator Suite's emulators on ports of their own), waiting for a server to listen, running the
// do-nothing floor server as a child process of the test binary, and the
// table of figures with pyric's ratios. The harnesses measure; nothing
// here asserts about timing.
package benchkit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/freeport"
)

// FreeAddr returns a loopback host:port nothing listens on now, picked by
// freeport so that nothing else takes it before a child process binds it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreePorts(t, 1)[0])
}

// FreePorts returns n distinct loopback ports nothing listens on now,
// picked by freeport.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freeport.Pick(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// WaitListening waits until addr accepts connections (at most a minute).
func WaitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s", addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// StartFloor runs this test binary again as the floor server — its
// TestMain serves when envVar is set, at the address it names — stops
// it when the test ends, and returns its address and how long it took
// to listen.
func StartFloor(t testing.TB, envVar string) (string, time.Duration) {
	t.Helper()
	addr, took, _ := StartFloorProcess(t, envVar)
	return addr, took
}

// StartFloorProcess is StartFloor that also returns the floor's process
// id (for ProcCPU).
func StartFloorProcess(t testing.TB, envVar string) (string, time.Duration, int) {
	t.Helper()
	addr := FreeAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envVar+"="+addr)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	WaitListening(t, addr)
	return addr, time.Since(start), cmd.Process.Pid
}

// ProcCPU is the CPU time process pid (0: this process) used so far (0
// if unknown): the sum of its threads' run time in
// /proc/PID/task/*/schedstat (nanoseconds; Go keeps its threads), or else
// user and system time from /proc/PID/stat.
// With other work on the machine, a server's CPU time per operation
// compares servers better than throughput, which the load moves.
func ProcCPU(pid int) time.Duration {
	if tasks, err := filepath.Glob(procDir(pid) + "/task/*/schedstat"); err == nil && len(tasks) > 0 {
		var sum int64
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += ns
			}
		}
		if sum > 0 {
			return time.Duration(sum)
		}
	}
	// Fields 14 and 15: utime and stime, in clock ticks.
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procDir is /proc's directory of process pid (pid 0: this process).
func procDir(pid int) string {
	if pid > 0 {
		return "/proc/" + strconv.Itoa(pid)
	}
	return "/proc/self"
}

// procStat is the fields of process pid's /proc/PID/stat from the third
// (state) on, nil when it cannot be read: the command name, field 2, may
// hold spaces, so they are counted from after its closing parenthesis
// (field n is element n-3).
func procStat(pid int) []string {
	b, err := os.ReadFile(procDir(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// ContextSwitches is the sum of process pid's threads' context switches
// (pid 0: this process), voluntary (a thread blocking: a futex wait, an
// idle poll) and not, from /proc/PID/task/*/status; 0 where /proc has
// none. Unlike time, the count does not move with the machine's load.
func ContextSwitches(pid int) int64 {
	tasks, _ := filepath.Glob(procDir(pid) + "/task/*/status")
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			k, v, _ := strings.Cut(line, ":")
			if k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches" {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}

// PageFaults is process pid's page faults so far (pid 0: this process),
// minor and major (fields 10 and 12 of /proc/PID/stat); 0 where /proc has
// none. On a virtual machine a first touch of a page costs microseconds of
// CPU: a fresh server's heap growing into new pages shows here.
func PageFaults(pid int) int64 {
	f := procStat(pid)
	if len(f) < 10 {
		return 0
	}
	minor, _ := strconv.ParseInt(f[7], 10, 64)
	major, _ := strconv.ParseInt(f[9], 10, 64)
	return minor + major
}

// EnvInt is the integer in environment variable name, def when it is
// unset or not an integer: a harness's knob (operations, rounds).
func EnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// EnvList is the comma-separated list in environment variable name, def
// when it is unset: a harness's choice of setups.
func EnvList(name string, def []string) []string {
	if s := os.Getenv(name); s != "" {
		return strings.Split(s, ",")
	}
	return def
}

// Results are each target's figures by workload.
type Results map[string]map[string]float64

// Ratio is a column of the table: pyric's figure over another target's
// (Of), labelled "pyric/Of".
type Ratio struct{ Of string }

// ProcStatus reads a kB field of /proc/PID/status ("VmHWM:", the peak
// RSS; "VmRSS:"), in bytes (-1 if absent).
func ProcStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// LowerIsBetter reports whether a workload's figure is a cost — its name
// ends in " ms" (a time), "/op" or "/MiB" (a cost per operation or per
// MiB moved) or " MiB" (memory) — so that its ratio is the other's over
// pyric's.
func LowerIsBetter(workload string) bool {
	for _, unit := range []string{" ms", "/op", "/MiB", " MiB"} {
		if strings.HasSuffix(workload, unit) {
			return true
		}
	}
	return false
}

// Table renders the figures of targets (in order) for every workload,
// then pyric's ratio to each of ratios: higher is better for pyric on
// every row (for times, the other's time over pyric's).
func Table(targets []string, res Results, ratios ...Ratio) string {
	var rows []string
	seen := map[string]bool{}
	for _, tg := range targets {
		for k := range res[tg] {
			if !seen[k] {
				seen[k] = true
				rows = append(rows, k)
			}
		}
	}
	sort.Strings(rows)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-26s", "workload")
	for _, tg := range targets {
		fmt.Fprintf(&b, " %15s", tg)
	}
	for _, r := range ratios {
		fmt.Fprintf(&b, " %15s", "pyric/"+r.Of)
	}
	b.WriteByte('\n')
	for _, k := range rows {
		fmt.Fprintf(&b, "%-26s", k)
		for _, tg := range targets {
			fmt.Fprintf(&b, " %15.2f", res[tg][k])
		}
		for _, r := range ratios {
			p, o := res["pyric"][k], res[r.Of][k]
			switch {
			case p == 0 || o == 0:
				fmt.Fprintf(&b, " %15s", "-")
			case LowerIsBetter(k):
				fmt.Fprintf(&b, " %14.2fx", o/p)
			default:
				fmt.Fprintf(&b, " %14.2fx", p/o)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
