package cli

import (
	"context"
	"fmt"

	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

func init() {
	register(command{
		path:    "database rules lint",
		args:    "PATH [--format text|json|sarif]",
		summary: "lint Realtime Database rules (database.rules.json)",
		run:     runDatabaseRulesLint,
	})
	register(command{
		path:    "database rules simulate",
		args:    "--stdin [--format text|json]",
		summary: "run Realtime Database rules test cases read from stdin",
		run:     runDatabaseRulesSimulate,
	})
	register(command{
		path:    "database rules validate",
		args:    "PATH",
		summary: "check that Realtime Database rules compile",
		run:     runDatabaseRulesValidate,
	})
}

// rtdbTool describes the RTDB rules checker for SARIF output.
var rtdbTool = source.Tool{Name: "pyric database rules lint", Rules: rtdb.Codes}

func runDatabaseRulesLint(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("database rules lint", stdio)
	format := formatFlag(fs, stdio, "text, json or sarif")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, "usage: pyric database rules lint PATH [--format text|json|sarif]")
		return exitError
	}
	f, err := readSource(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	res := rtdb.Lint(f)
	code := writeLint(stdio, *format, f, res.Diagnostics, res.Metrics, rtdbTool)
	if res.Unparseable {
		// Not JSON at all: nothing could be checked.
		return exitError
	}
	return code
}

func runDatabaseRulesValidate(_ context.Context, args []string, stdio Stdio) int {
	return runValidate("database", func(f *source.File) source.Diagnostics {
		_, diags := rtdb.Compile(f)
		return diags
	}, args, stdio)
}

func runDatabaseRulesSimulate(_ context.Context, args []string, stdio Stdio) int {
	return runSimulate(simulation{service: "database", load: func(b []byte) (*source.File, source.Diagnostics, func() (*sim.Report, error), *sim.Error) {
		in, err := rtdb.ParseInput(b)
		if err != nil {
			return nil, nil, nil, inputError("%v", err)
		}
		file := source.NewFile(in.Name, in.Source)
		rs, diags := rtdb.Compile(file)
		if rs == nil {
			return file, diags, nil, nil
		}
		return file, diags, func() (*sim.Report, error) { return rs.Simulate(in.TestCases), nil }, nil
	}}, args, stdio)
}
