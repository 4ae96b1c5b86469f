//go:build unix

package benchkit

import (
	"syscall"
	"time"
)

// SelfCPU is the CPU time (user and system) this process has used so
// far: a benchmark reports it per operation, which a shared machine's
// load moves less than the wall clock. Zero where it cannot be read.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
