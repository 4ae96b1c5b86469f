package cli

import (
	"context"

	"github.com/pyric/pyric/rules/lint"
)

func init() {
	register(command{
		path:    "storage rules lint",
		args:    "PATH [--previous OLD] [--tests CASES] [--format F]",
		summary: "lint Cloud Storage rules: production limits, runtime budget, security, common mistakes",
		run: func(ctx context.Context, args []string, stdio Stdio) int {
			return runRulesLint(ctx, "storage rules lint", lint.Storage, args, stdio)
		},
	})
}
