package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

func init() {
	register(command{
		path:    "firestore rules simulate",
		args:    "--stdin [--format text|json]",
		summary: "run Firestore rules test cases read from stdin",
		run:     runFirestoreRulesSimulate,
	})
	register(command{
		path:    "firestore rules validate",
		args:    "PATH",
		summary: "check that Firestore rules compile, as production would",
		run:     runFirestoreRulesValidate,
	})
}

func runFirestoreRulesValidate(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("firestore rules validate", stdio)
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, "usage: pyric firestore rules validate PATH")
		return exitError
	}
	f, err := readSource(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	_, diags := firestore.Compile(f)
	return writeValidate(stdio, f, diags)
}

func runFirestoreRulesSimulate(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("firestore rules simulate", stdio)
	useStdin := fs.Bool("stdin", false, `read {"source": rules, "testCases": [...]} from standard input`)
	format := formatFlag(fs, stdio, "text or json")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 0 || !*useStdin {
		fmt.Fprintln(stdio.Err, "usage: pyric firestore rules simulate --stdin [--format text|json]")
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
	in, err := firestore.ParseInput(b)
	if err != nil {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: err.Error()})
	}
	if in.Source == "" {
		return writeSimulationError(stdio, *format, sim.Error{Code: "INVALID_INPUT", Message: `missing "source": the text of firestore.rules`})
	}
	file := source.NewFile("firestore.rules", in.Source)
	rs, diags := firestore.Compile(file)
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
