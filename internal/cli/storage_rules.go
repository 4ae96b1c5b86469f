package cli

import (
	"context"
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
	return runValidate("storage", func(f *source.File) source.Diagnostics {
		_, diags := storage.Compile(f)
		return diags
	}, args, stdio)
}

// runStorageRulesSimulate reads {"source", "testCases"} (or "rules" for
// "source") and runs each case with the Rules Test API's conventions.
func runStorageRulesSimulate(_ context.Context, args []string, stdio Stdio) int {
	return runSimulate(simulation{service: "storage", load: func(b []byte) (*source.File, source.Diagnostics, func() (*sim.Report, error), *sim.Error) {
		in, err := storage.ParseInput(b)
		if err != nil {
			return nil, nil, nil, inputError("%v", err)
		}
		if in.Source == "" {
			return nil, nil, nil, inputError(`missing "source": the text of storage.rules`)
		}
		name := "storage.rules"
		if in.Name != "" {
			name = in.Name // the Rules Test API's source.files[0].name
		}
		file := source.NewFile(name, in.Source)
		rs, diags := storage.Compile(file)
		if rs == nil {
			return file, diags, nil, nil
		}
		return file, diags, func() (*sim.Report, error) { return rs.Simulate(in.TestCases, time.Now()) }, nil
	}}, args, stdio)
}
