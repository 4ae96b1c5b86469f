package server

import (
	"runtime"
)

// processors is how many CPUs the process may use: the runtime's
// GOMAXPROCS as the process started (the machine's CPUs, a container's
// CPU limit, or the user's GOMAXPROCS), before SpareProcessor adds one.
var processors = runtime.GOMAXPROCS(0)

// Processors is how many CPUs the process may use (processors).
func Processors() int { return processors }

// SpareProcessor gives the Go runtime one processor (P) more than the
// process's CPUs, unless the user chose GOMAXPROCS (getenv reads the
// environment); it reports whether it did. pyric serve calls it at start.
//
// Admitted heavy work runs on threads of lower priority (priority.LowerThread), but
// the kernel only ever chooses between threads when more want a CPU than
// there are CPUs, and the runtime runs no more threads than it has Ps.
// With as many Ps as CPUs, the heavy request holding one, a quiet
// machine leaves its thread a CPU of its own whatever its priority, and
// the light requests share the remaining Ps, first come first served, with
// every goroutine that computes meanwhile — the collector's workers, the
// capture's compaction, an upload's hashing — each of which keeps its P
// for up to the runtime's 10 ms time slice, while no P is idle to poll
// the network for the next request. A runtime trace of #34's benchmark
// (e2e/safetybench, two CPUs) found the slow light reads waiting so —
// runnable, or their request not yet polled, with every P busy — for 58%
// of their time; the collector's assists and pauses were under 1%. With
// one P more, the light requests keep as many Ps as there are CPUs, and
// the kernel, choosing between their threads and the heavy one, lets the
// light ones run first; the gate's slots are counted on the CPUs, so the
// spare P never admits more heavy work.
func SpareProcessor(getenv func(string) string) bool {
	if getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) != processors {
		return false // the user's, or set already
	}
	runtime.GOMAXPROCS(processors + 1)
	return true
}
