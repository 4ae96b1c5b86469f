package cli

import (
	"context"
	"fmt"

	"github.com/pyric/pyric/internal/compat"
)

func init() {
	register(command{
		path:    "conformance",
		args:    "[SERVICE] [--json|--markdown] [--write DIR [--readme FILE]]",
		summary: "print the conformance registry: each service's public behaviors, their status against production, the tests that prove them, and a score",
		run:     runConformance,
	})
}

// runConformance is `pyric conformance`: the registry of internal/compat
// as a table (every service's score, or one service's rows), as JSON, or
// as the markdown pages docs/conformance holds; --write DIR writes those
// pages (and --readme FILE refreshes that README's score section), which
// is what `go generate ./internal/compat` runs.
func runConformance(ctx context.Context, args []string, stdio Stdio) int {
	f := newFlagSet("conformance", stdio)
	asJSON := f.Bool("json", false, "print JSON")
	asMarkdown := f.Bool("markdown", false, "print the markdown page (with SERVICE) or the index")
	write := f.String("write", "", "with --markdown: write every page into this directory instead of printing")
	readme := f.String("readme", "", "with --write: also refresh this README's conformance section")
	pos, ok := parseFlags(f, args)
	if !ok {
		return exitError
	}
	if len(pos) > 1 || *asJSON && *asMarkdown || *write != "" && (!*asMarkdown || len(pos) != 0) || *readme != "" && *write == "" {
		fmt.Fprintln(stdio.Err, "usage: pyric conformance [SERVICE] [--json|--markdown]; pyric conformance --markdown --write DIR [--readme FILE]")
		return exitError
	}
	services, err := compat.Services()
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric conformance: %v\n", err)
		return exitFailure
	}
	if len(pos) == 1 {
		s, err := compat.Lookup(pos[0])
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric conformance: %v\n", err)
			return exitError
		}
		services = []*compat.Service{s}
	}
	switch {
	case *write != "":
		if err := compat.Write(*write, *readme, services); err != nil {
			fmt.Fprintf(stdio.Err, "pyric conformance: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdio.Out, "wrote %d pages to %s\n", len(services)+1, *write)
	case *asJSON:
		err = compat.WriteJSON(stdio.Out, services)
	case *asMarkdown && len(pos) == 1:
		_, err = fmt.Fprint(stdio.Out, compat.Markdown(services[0]))
	case *asMarkdown:
		_, err = fmt.Fprint(stdio.Out, compat.Index(services))
	default:
		err = compat.WriteText(stdio.Out, services)
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric conformance: %v\n", err)
		return exitFailure
	}
	return exitOK
}
