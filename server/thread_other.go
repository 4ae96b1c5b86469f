//go:build !linux

package server

import "runtime"

// lowerThread locks the calling goroutine to its thread (discarded when
// the goroutine ends, as on Linux); only Linux has per-thread priorities,
// so the work runs at normal priority.
func lowerThread() { runtime.LockOSThread() }

func threadNice() int { return 0 }
