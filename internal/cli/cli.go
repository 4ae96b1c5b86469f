// Package cli implements the pyric command line: one file per command, each
// with a Run function that tests call with buffers instead of a terminal.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Version is the pyric version printed by `pyric version`.
var Version = "0.1.0-dev"

// Stdio is the process's standard streams, replaceable in tests.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Terminal reports whether Out is an interactive terminal; commands use
	// it to pick their default output format.
	Terminal bool
}

// OSStdio returns the real standard streams.
func OSStdio() Stdio {
	return Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Terminal: isTerminal(os.Stdout)}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and found a problem (failed case, lint error)
	exitError   = 2 // the command could not run (bad usage, unreadable input, rules that don't compile)
)

// command is one leaf of the command tree, e.g. "firestore rules simulate".
type command struct {
	path    string // space separated words
	args    string // argument synopsis for help
	summary string
	run     func(ctx context.Context, args []string, stdio Stdio) int
}

// commands lists every command. Keep it sorted by path.
var commands = []command{}

func register(c command) { commands = append(commands, c) }

// Run executes the command line args (without the program name) and returns
// the process exit code.
func Run(ctx context.Context, args []string, stdio Stdio) int {
	// `pyric` alone, or with only flags (`pyric --firestore-port 0`),
	// serves.
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" && args[0] != "--version") {
		if c := lookup([]string{"serve"}); c != nil {
			return c.run(ctx, args, stdio)
		}
		usage(stdio.Out)
		return exitOK
	}
	switch args[0] {
	case "help", "-h", "--help":
		usage(stdio.Out)
		return exitOK
	case "version", "--version":
		fmt.Fprintf(stdio.Out, "pyric %s\n", Version)
		return exitOK
	}
	// Longest command path that prefixes args wins.
	best, bestLen := (*command)(nil), 0
	for i := range commands {
		words := strings.Fields(commands[i].path)
		if len(words) > len(args) || len(words) <= bestLen {
			continue
		}
		match := true
		for j, w := range words {
			if args[j] != w {
				match = false
				break
			}
		}
		if match {
			best, bestLen = &commands[i], len(words)
		}
	}
	if best == nil {
		fmt.Fprintf(stdio.Err, "pyric: unknown command %q\n\n", strings.Join(args, " "))
		usage(stdio.Err)
		return exitError
	}
	return best.run(ctx, args[bestLen:], stdio)
}

func lookup(words []string) *command {
	want := strings.Join(words, " ")
	for i := range commands {
		if commands[i].path == want {
			return &commands[i]
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "pyric %s — a local Firebase backend for people and coding agents\n\nUsage:\n", Version)
	sorted := append([]command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	for _, c := range sorted {
		synopsis := c.path
		if c.args != "" {
			synopsis += " " + c.args
		}
		fmt.Fprintf(w, "  pyric %-48s %s\n", synopsis, c.summary)
	}
	fmt.Fprintf(w, "  pyric %-48s %s\n", "version", "print the version")
	fmt.Fprintf(w, "  pyric %-48s %s\n", "help", "print this help")
	fmt.Fprintf(w, "\nRun `pyric <command> -h` for a command's flags.\n")
}
