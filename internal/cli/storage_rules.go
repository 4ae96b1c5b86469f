package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/storage"
)

func init() {
	register(command{
		path:    "storage rules simulate",
		args:    "--stdin [--format text|json]",
		summary: "run Cloud Storage rules test cases read from stdin",
		run:     runStorageRulesSimulate,
	})
	register(command{
		path:    "storage rules validate",
		args:    "PATH",
		summary: "check that Cloud Storage rules compile, as production would",
		run:     runStorageRulesValidate,
	})
}

func runStorageRulesValidate(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("storage rules validate", stdio)
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, "usage: pyric storage rules validate PATH")
		return exitError
	}
	f, err := readSource(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	_, diags := storage.Compile(f)
	return writeValidate(stdio, f, diags)
}

// runStorageRulesSimulate reads {"source", "testCases"} (or "rules" for
// "source") and runs each case with the Rules Test API's conventions. Exit
// codes: 0 every case passed, 1 a case failed, 2 the input or the rules
// could not be used.
func runStorageRulesSimulate(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("storage rules simulate", stdio)
	useStdin := fs.Bool("stdin", false, `read {"source": rules, "testCases": [...]} from standard input`)
	format := formatFlag(fs, stdio, "text or json")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 0 || !*useStdin {
		fmt.Fprintln(stdio.Err, "usage: pyric storage rules simulate --stdin [--format text|json]")
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
	in, err := storage.ParseInput(b)
	if err != nil {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: err.Error()})
	}
	if in.Source == "" {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: `missing "source": the text of storage.rules`})
	}
	file := source.NewFile("storage.rules", in.Source)
	rs, diags := storage.Compile(file)
	if rs == nil {
		for _, d := range diags {
			if d.Severity == source.Error {
				if *format == "text" {
					source.WriteText(stdio.Err, file, diags)
				}
				return writeSimulationError(stdio, *format, sim.Error{Code: "COMPILE_ERROR", Message: d.Message, Line: d.Span.Start.Line, Column: d.Span.Start.Column})
			}
		}
	}
	rep, err := rs.Simulate(in.TestCases, time.Now())
	if err != nil {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: err.Error()})
	}
	return writeSimulation(stdio, *format, file, rep)
}
