package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// newFlagSet returns a flag set that reports errors instead of exiting
// and whose help (-h) is the command's synopsis and every flag with its
// default.
func newFlagSet(name string, stdio Stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { commandUsage(stdio.Err, name, fs) }
	if flagSetCreated != nil {
		flagSetCreated(fs)
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// (`pyric firestore rules lint a.rules --format json`). It returns the
// positional arguments, or ok=false after printing the problem.
func parseFlags(fs *flag.FlagSet, args []string) (positional []string, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, false
		}
		rest := fs.Args()
		i := 0
		for i < len(rest) && (len(rest[i]) == 0 || rest[i][0] != '-' || rest[i] == "-") {
			i++
		}
		positional = append(positional, rest[:i]...)
		if i == len(rest) {
			return positional, true
		}
		if rest[i] == "--" {
			return append(positional, rest[i+1:]...), true
		}
		args = rest[i:]
	}
}

// formatFlag registers --format with the terminal-dependent default: text on
// a terminal, json otherwise, matching what each command documents.
func formatFlag(fs *flag.FlagSet, stdio Stdio, choices string) *string {
	def := "json"
	if stdio.Terminal {
		def = "text"
	}
	return fs.String("format", def, "output format: "+choices)
}

// readSource reads a rules file named on the command line.
func readSource(path string) (*source.File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return source.NewFile(path, string(b)), nil
}

// writeLint prints lint diagnostics in the chosen format and returns the exit
// code: 0 without error-severity diagnostics, 1 with one.
func writeLint(stdio Stdio, format string, f *source.File, ds source.Diagnostics, metrics any, tool source.Tool) int {
	ds.Sort()
	var err error
	switch format {
	case "text":
		err = source.WriteText(stdio.Out, f, ds)
		if err == nil && len(ds) == 0 {
			_, err = fmt.Fprintf(stdio.Out, "%s: no problems found\n", f.Name)
		}
	case "json":
		err = source.WriteJSON(stdio.Out, ds, metrics)
	case "sarif":
		tool.Version = Version
		err = source.WriteSARIF(stdio.Out, tool, f.Name, ds)
	default:
		fmt.Fprintf(stdio.Err, "pyric: unknown --format %q (want text, json or sarif)\n", format)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	if ds.HasErrors() {
		return exitFailure
	}
	return exitOK
}

// writeValidate prints compile diagnostics as text (file:line:col, the line
// and a caret) and returns 0 when the rules compile, 2 when they don't.
func writeValidate(stdio Stdio, f *source.File, ds source.Diagnostics) int {
	ds.Sort()
	source.WriteText(stdio.Out, f, ds)
	if ds.HasErrors() {
		return exitError
	}
	if len(ds) == 0 {
		fmt.Fprintf(stdio.Out, "%s: rules compile\n", f.Name)
	}
	return exitOK
}

// writeSimulation prints a simulation report in the chosen format and
// returns its exit code (0 all passed, 1 any failed).
func writeSimulation(stdio Stdio, format string, f *source.File, r *sim.Report, opts sim.TextOptions) int {
	switch format {
	case "text":
		sim.WriteTextWith(stdio.Out, f, r, opts)
	case "json":
		if err := sim.WriteJSON(stdio.Out, r); err != nil {
			fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
			return exitError
		}
	default:
		fmt.Fprintf(stdio.Err, "pyric: unknown --format %q (want text or json)\n", format)
		return exitError
	}
	return r.ExitCode()
}

// writeSimulationError prints the failure envelope (json) or a diagnostic
// line (text) for input that could not be simulated, and returns 2.
func writeSimulationError(stdio Stdio, format string, e sim.Error) int {
	if format == "text" {
		if e.Line > 0 {
			fmt.Fprintf(stdio.Out, "error: %s at %d:%d [%s]\n", e.Message, e.Line, e.Column, e.Code)
		} else {
			fmt.Fprintf(stdio.Out, "error: %s [%s]\n", e.Message, e.Code)
		}
		return exitError
	}
	sim.WriteErrorJSON(stdio.Out, e)
	return exitError
}

// readAllStdin reads the whole of standard input.
func readAllStdin(stdio Stdio) ([]byte, error) {
	if stdio.In == nil {
		return nil, fmt.Errorf("no standard input")
	}
	return io.ReadAll(stdio.In)
}
