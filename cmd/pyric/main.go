// Command pyric is a local Firebase backend for people and coding agents.
//
// Everything happens in package cli; main only wires the process to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pyric/pyric/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.OSStdio())
	stop()
	os.Exit(code)
}
