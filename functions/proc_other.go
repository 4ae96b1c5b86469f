//go:build !unix

package functions

import "os/exec"

// setProcAttr leaves the worker's attributes as they are; the worker
// exits when its stdin (held by pyric) ends.
func setProcAttr(cmd *exec.Cmd) {}

func killProc(cmd *exec.Cmd) { cmd.Process.Kill() }
