package cli

import (
	"context"
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
	return runValidate("firestore", func(f *source.File) source.Diagnostics {
		_, diags := firestore.Compile(f)
		return diags
	}, args, stdio)
}

func runFirestoreRulesSimulate(_ context.Context, args []string, stdio Stdio) int {
	return runSimulate(simulation{service: "firestore", load: func(b []byte) (*source.File, source.Diagnostics, func() (*sim.Report, error), *sim.Error) {
		in, err := firestore.ParseInput(b)
		if err != nil {
			return nil, nil, nil, inputError("%v", err)
		}
		if in.Source == "" {
			return nil, nil, nil, inputError(`missing "source": the text of firestore.rules`)
		}
		name := "firestore.rules"
		if in.Name != "" {
			name = in.Name // the Rules Test API's source.files[0].name
		}
		file := source.NewFile(name, in.Source)
		rs, diags := firestore.Compile(file)
		if rs == nil {
			return file, diags, nil, nil
		}
		return file, diags, func() (*sim.Report, error) { return rs.Simulate(in.TestCases, time.Now()) }, nil
	}}, args, stdio)
}
