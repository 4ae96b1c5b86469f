//go:build !unix

package procgroup

import (
	"os/exec"
	"syscall"
)

func own(cmd *exec.Cmd) {}

func signal(cmd *exec.Cmd, sig syscall.Signal) error { return cmd.Process.Signal(sig) }
