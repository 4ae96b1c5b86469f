//go:build !linux

package priority

import "runtime"

// LowerThread locks the calling goroutine to its thread (discarded when
// the goroutine ends, as on Linux); only Linux has per-thread priorities,
// so the work runs at normal priority.
func LowerThread() { runtime.LockOSThread() }

// ThreadNice is 0: only Linux has per-thread priorities.
func ThreadNice() int { return 0 }

// LoweredThreads is 0: only Linux has per-thread priorities.
func LoweredThreads() int { return 0 }

// MainLowered is false: only Linux has per-thread priorities.
func MainLowered() bool { return false }
