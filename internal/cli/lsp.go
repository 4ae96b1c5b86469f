package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/lsp"
)

func init() {
	register(command{
		path:    "lsp",
		args:    "[--debounce D]",
		summary: "language server for firestore.rules, storage.rules and database.rules.json (LSP over stdio)",
		run:     runLSP,
	})
}

// runLSP is `pyric lsp`: the language server on standard input and
// output, its log on standard error.
func runLSP(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("lsp", stdio)
	debounce := fs.Duration("debounce", lsp.DefaultDebounce, "pause after an edit before diagnostics run")
	fs.Bool("stdio", true, "speak the protocol on standard input and output (the only transport; editors pass it)")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 0 {
		fmt.Fprintln(stdio.Err, "usage: pyric lsp [--debounce D]")
		return exitError
	}
	d := *debounce
	if d == 0 {
		d = -time.Nanosecond // explicit 0: no pause
	}
	in := io.Reader(stdio.In)
	if in == nil {
		in = os.Stdin
	}
	srv := lsp.New(lsp.Options{Debounce: d, Log: stdio.Err, Registrations: backend.Services(&backend.Options{})})
	if err := srv.Serve(ctx, io.NopCloser(in), stdio.Out); err != nil {
		fmt.Fprintf(stdio.Err, "pyric lsp: %v\n", err)
		return exitError
	}
	return exitOK
}
