package cli

import (
	"fmt"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// simulation is one service's simulator as `pyric <service> rules
// simulate --stdin` drives it. load decodes the input, compiles the rules
// and returns the rules file with a function running the cases; an input
// problem is an INVALID_INPUT error naming the field, and rules that don't
// compile come back as diagnostics with a nil run.
type simulation struct {
	service string // firestore, storage or database
	load    func(input []byte) (file *source.File, diags source.Diagnostics, run func() (*sim.Report, error), bad *sim.Error)
}

// runSimulate is the shared body of the simulate commands. Exit codes: 0
// every case passed, 1 a case failed, 2 the input or the rules could not
// be used.
func runSimulate(s simulation, args []string, stdio Stdio) int {
	usage := "usage: pyric " + s.service + " rules simulate --stdin [--format text|json] [-v]"
	fs := newFlagSet(s.service+" rules simulate", stdio)
	useStdin := fs.Bool("stdin", false, `read {"source": rules, "testCases": [...]} from standard input`)
	format := formatFlag(fs, stdio, "text or json")
	verbose := fs.Bool("v", false, "text: print every rule's step-by-step trace, the lookups and the budget used")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 0 || !*useStdin {
		fmt.Fprintln(stdio.Err, usage)
		return exitError
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stdio.Err, "pyric: unknown --format %q (want text or json)\n", *format)
		return exitError
	}
	b, err := readAllStdin(stdio)
	if err != nil {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: "read standard input: " + err.Error()})
	}
	file, diags, run, bad := s.load(b)
	if bad != nil {
		return writeSimulationError(stdio, *format, *bad)
	}
	if run == nil {
		for _, d := range diags {
			if d.Severity != source.Error {
				continue
			}
			if *format == "text" {
				source.WriteText(stdio.Err, file, diags)
			}
			code := d.Code
			if code == "" {
				code = "COMPILE_ERROR"
			}
			return writeSimulationError(stdio, *format, sim.Error{Code: code, Message: d.Message, Line: d.Span.Start.Line, Column: d.Span.Start.Column})
		}
		return writeSimulationError(stdio, *format, sim.Error{Code: "COMPILE_ERROR", Message: "the rules do not compile"})
	}
	rep, err := run()
	if err != nil {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: err.Error()})
	}
	return writeSimulation(stdio, *format, file, rep, sim.TextOptions{Verbose: *verbose})
}

// runValidate is the shared body of the validate commands: it compiles
// PATH and prints every diagnostic; exit 0 when the rules compile, 2 when
// they don't or the file can't be read.
func runValidate(service string, compile func(*source.File) source.Diagnostics, args []string, stdio Stdio) int {
	fs := newFlagSet(service+" rules validate", stdio)
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintf(stdio.Err, "usage: pyric %s rules validate PATH\n", service)
		return exitError
	}
	f, err := readSource(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	return writeValidate(stdio, f, compile(f))
}

// inputError is an INVALID_INPUT simulation error.
func inputError(format string, args ...any) *sim.Error {
	return &sim.Error{Code: "INVALID_INPUT", Message: fmt.Sprintf(format, args...)}
}
