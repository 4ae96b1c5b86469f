package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/source"
)

func init() {
	register(command{
		path:    "firestore rules lint",
		args:    "PATH [--previous OLD] [--tests CASES] [--format F]",
		summary: "lint Firestore rules: production limits, runtime budget, security, common mistakes",
		run: func(ctx context.Context, args []string, stdio Stdio) int {
			return runRulesLint(ctx, "firestore rules lint", lint.Firestore, args, stdio)
		},
	})
}

// runRulesLint is `pyric firestore rules lint` and `pyric storage rules
// lint`. Exit codes: 0 without error-severity diagnostics, 1 with one, 2
// when a file can't be read or the rules don't parse (their diagnostics are
// printed first).
func runRulesLint(_ context.Context, name, service string, args []string, stdio Stdio) int {
	fs := newFlagSet(name, stdio)
	format := formatFlag(fs, stdio, "text, json or sarif")
	previous := fs.String("previous", "", "the ruleset this one replaces: report match blocks, allows and conditions it dropped (RULES_WEAKENED)")
	tests := fs.String("tests", "", `simulator test cases (a JSON list, or {"testCases": [...]}): report cases that don't pin requestTime for rules reading request.time`)
	usage := fmt.Sprintf("usage: pyric %s PATH [--previous OLD_PATH] [--tests CASES.json] [--format text|json|sarif]", name)
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, usage)
		return exitError
	}
	switch *format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(stdio.Err, "pyric: unknown --format %q (want text, json or sarif)\n", *format)
		return exitError
	}
	f, err := readSource(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	opts := lint.Options{Service: service}
	if *previous != "" {
		if opts.Previous, err = readSource(*previous); err != nil {
			fmt.Fprintf(stdio.Err, "pyric: --previous: %v\n", err)
			return exitError
		}
	}
	if *tests != "" {
		if opts.Cases, err = readLintCases(*tests); err != nil {
			fmt.Fprintf(stdio.Err, "pyric: --tests: %v\n", err)
			return exitError
		}
	}
	res := lint.Lint(f, opts)
	tool := source.Tool{Name: "pyric " + name, URI: "https://github.com/pyric/pyric", Rules: lint.Codes}
	code := writeLint(stdio, *format, f, res.Diagnostics, res.Metrics, tool)
	if res.ParseFailed {
		return exitError
	}
	return code
}

// readLintCases reads simulator test cases: a JSON list of cases, or the
// simulator's input object {"testCases": [...]}.
func readLintCases(path string) ([]lint.Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var cases []lint.Case
		if err := json.Unmarshal(b, &cases); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return cases, nil
	}
	var in struct {
		TestCases []lint.Case `json:"testCases"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: want a list of test cases or {\"testCases\": [...]}: %w", path, err)
	}
	if in.TestCases == nil {
		return nil, fmt.Errorf("%s: no \"testCases\" list", path)
	}
	return in.TestCases, nil
}
