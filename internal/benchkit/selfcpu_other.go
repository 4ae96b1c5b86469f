//go:build !unix

package benchkit

import "time"

// SelfCPU is zero here: the process's CPU time is read on Unix systems
// only (selfcpu_unix.go).
func SelfCPU() time.Duration { return 0 }
