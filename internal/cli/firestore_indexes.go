package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/firestore"
)

func init() {
	register(command{
		path:    "firestore indexes suggest",
		args:    "[--fixture F] [--out firestore.indexes.json] [--prune]",
		summary: "write the composite indexes a captured session's queries need into firestore.indexes.json",
		run:     runFirestoreIndexesSuggest,
	})
}

func runFirestoreIndexesSuggest(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("firestore indexes suggest", stdio)
	fixture := fs.String("fixture", defaultFixture, "the captured session")
	out := fs.String("out", "firestore.indexes.json", "the index file to merge into (- prints the merged file)")
	prune := fs.Bool("prune", false, "remove declared indexes no captured query needs")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) > 0 {
		fmt.Fprintf(stdio.Err, "pyric firestore indexes suggest: unexpected argument %q\n", pos[0])
		return exitError
	}
	data, err := os.ReadFile(*fixture)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	f, err := capture.DecodeWith(data, backend.Services(&backend.Options{}))
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %s: %v\n", *fixture, err)
		return exitError
	}
	var existing *firestore.IndexConfig
	if *out != "-" {
		b, err := os.ReadFile(*out)
		switch {
		case err == nil:
			if existing, err = firestore.ParseIndexFile(*out, b); err != nil {
				fmt.Fprintf(stdio.Err, "pyric: %v\n", err) // the error names the file
				return exitError
			}
		case !errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
			return exitError
		}
	}
	merged, added, removed := firestore.MergeIndexes(existing, firestore.SuggestIndexes(f.Events), *prune)
	js, _ := json.MarshalIndent(merged, "", "  ")
	js = append(js, '\n')
	if *out == "-" {
		stdio.Out.Write(js)
		return exitOK
	}
	if err := capture.WriteFileAtomic(*out, js); err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdio.Err, "pyric: %s: %d indexes added, %d removed, %d declared\n", *out, len(added), len(removed), len(merged.Indexes))
	return exitOK
}
