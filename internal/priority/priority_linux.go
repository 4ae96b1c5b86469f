package priority

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LowerThread locks the calling goroutine to its thread and gives the
// thread Lowered (Linux's nice is per thread). The thread stays locked:
// an unprivileged process may raise a thread's nice value but not lower
// it again (RLIMIT_NICE is 0 by default), so the thread cannot be given
// back to the runtime as it was; the runtime discards a thread whose
// locked goroutine ends, which is why the caller must be a goroutine
// that ends with the work (the main thread, which the runtime cannot
// end, it parks for good instead). A thread inherits its creator's nice,
// but the runtime never creates threads from a locked one (it asks its
// template thread), so the lowered priority spreads no further. Work the
// goroutine hands to others (a group commit's flush led by another
// commit, the collector's background workers) keeps normal priority; its
// own allocations' collector assists run on the lowered thread.
func LowerThread() {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), Lowered) // at worst, the work runs at normal priority
}

// ThreadNice is the calling thread's nice value (for tests).
func ThreadNice() int {
	// getpriority(2) returns 20 - nice for PRIO_PROCESS on Linux.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		return 0
	}
	return 20 - p
}

// LoweredThreads counts the process's threads of nice Lowered but its
// main thread (which the runtime parks for good when lowered work
// happened to run on it: MainLowered), from /proc (for tests: a lowered
// thread must end with its work).
func LoweredThreads() int {
	n := 0
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if task.Name() != strconv.Itoa(os.Getpid()) && taskNice(task.Name()) == Lowered {
			n++
		}
	}
	return n
}

// MainLowered says whether the process's main thread is lowered.
func MainLowered() bool { return taskNice(strconv.Itoa(os.Getpid())) == Lowered }

// taskNice is the nice value of the process's thread tid, or 0 when it
// ended meanwhile.
func taskNice(tid string) int {
	stat, err := os.ReadFile("/proc/self/task/" + tid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// of stat(5), nice the 19th.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 17 {
		return 0
	}
	n, _ := strconv.Atoi(f[16])
	return n
}
