package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
)

func init() {
	register(command{
		path:    "capture save",
		args:    "NAME [--from F | --url URL] [--dir fixtures] [--description TEXT]",
		summary: "keep the captured session as a named fixture to commit (fixtures/NAME.json)",
		run:     runCaptureSave,
	})
}

func runCaptureSave(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("capture save", stdio)
	from := fs.String("from", defaultFixture, "the captured session to keep")
	url := fs.String("url", "", "the capture endpoint of a running server (e.g. http://127.0.0.1:4000/__pyric/capture)")
	dir := fs.String("dir", "fixtures", "where named fixtures go")
	desc := fs.String("description", "", "a description stored in the fixture")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, "usage: pyric capture save NAME (a plain file name, without directories)")
		return exitError
	}
	var data []byte
	var err error
	if *url != "" {
		data, err = httpDo(ctx, &http.Client{Timeout: time.Minute}, http.MethodGet, *url, nil)
	} else {
		data, err = os.ReadFile(*from)
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric capture save: %v\n", err)
		return exitError
	}
	f, err := capture.DecodeWith(data, backend.Services(&backend.Options{}))
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric capture save: %v\n", err)
		return exitError
	}
	if *desc != "" {
		f.Description = *desc
	}
	path, err := capture.SaveNamed(*dir, pos[0], f)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric capture save: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdio.Err, "pyric: %d events kept in %s (verify with: pyric verify --fixture %s --rules firestore.rules)\n", len(f.Events), path, path)
	return exitOK
}
