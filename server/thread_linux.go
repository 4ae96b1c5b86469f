package server

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// heavyNice is the nice value of a thread running admitted heavy work, so
// the kernel runs a light request's thread first whenever both want a
// processor: its weight is a ninth of a normal thread's (110 against
// 1024). Not the lowest (19, a weight of 15): that would leave heavy work
// about 1.5% of a processor beside any busy process of normal priority —
// a test runner's workers, say, the very client waiting for it. With the gate alone, the one admitted
// heavy request (a Firestore create of a 100,000-element list checked by
// hasAll) still kept a light read waiting for a processor at the
// operating system's level on two cores (#34: the light read's p99 went
// from 1.9× to 8× its quiet p99 from run to run).
const heavyNice = 10

// lowerThread locks the calling goroutine to its thread and gives the
// thread heavyNice (Linux's nice is per thread). The thread stays locked:
// an unprivileged process may raise a thread's nice value but not lower
// it again (RLIMIT_NICE is 0 by default), so the thread cannot be given
// back to the runtime as it was; the runtime discards a thread whose
// locked goroutine ends, which is why heavy work runs on a goroutine of
// its own (OwnGoroutine); the main thread, which the runtime cannot end,
// it parks for good instead. A thread inherits its creator's nice, but the
// runtime never creates threads from a locked one (it asks its template
// thread), so the lowered priority spreads no further. Work the goroutine hands to others (a group
// commit's flush led by another commit, the collector's background
// workers) keeps normal priority; its own allocations' collector assists
// run on the lowered thread.
func lowerThread() {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), heavyNice) // at worst, the work runs at normal priority
}

// threadNice is the calling thread's nice value (for tests).
func threadNice() int {
	// getpriority(2) returns 20 - nice for PRIO_PROCESS on Linux.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		return 0
	}
	return 20 - p
}
