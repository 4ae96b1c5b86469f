//go:build unix

package functions

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the worker in its own process group, so a kill ends
// what it spawned too. (No Pdeathsig: it fires when the spawning OS
// thread exits, not the process; the worker leaves when its stdin ends.)
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProc(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Process.Kill()
}
