// Package procgroup runs a child process in a process group of its own,
// so that a signal sent to it reaches whatever the child spawned too (a
// Node worker's own children, an emulator's JVM). On systems without
// process groups the signal reaches the child alone.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Own makes cmd, not yet started, lead a process group of its own.
func Own(cmd *exec.Cmd) { own(cmd) }

// Signal sends sig to the process group cmd leads (Own), or to cmd's
// process where there are no groups. cmd must have started.
func Signal(cmd *exec.Cmd, sig syscall.Signal) error { return signal(cmd, sig) }
