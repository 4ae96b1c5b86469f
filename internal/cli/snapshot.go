package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/snapshot"
)

func init() {
	for _, verb := range []string{"save", "load"} {
		verb := verb
		register(command{
			path:    "snapshot " + verb,
			args:    "FILE [--data-dir DIR | --url URL]",
			summary: map[string]string{"save": "write the whole state to FILE (offline on a data dir, or from a running server)", "load": "replace the whole state with FILE's snapshot"}[verb],
			run: func(ctx context.Context, args []string, stdio Stdio) int {
				return runSnapshot(ctx, verb, args, stdio)
			},
		})
	}
}

func runSnapshot(ctx context.Context, verb string, args []string, stdio Stdio) int {
	fs := newFlagSet("snapshot "+verb, stdio)
	dir := fs.String("data-dir", ".pyric", "the data directory of a stopped server")
	url := fs.String("url", "", "the snapshot endpoint of a running server (e.g. http://127.0.0.1:4000/__pyric/snapshot)")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintf(stdio.Err, "usage: pyric snapshot %s FILE [--data-dir DIR | --url URL]\n", verb)
		return exitError
	}
	file := pos[0]
	fail := func(err error) int {
		fmt.Fprintf(stdio.Err, "pyric snapshot %s: %v\n", verb, err)
		return exitError
	}
	client := &http.Client{Timeout: 60 * time.Second}
	if verb == "save" {
		var data []byte
		var err error
		if *url != "" {
			data, err = httpDo(ctx, client, http.MethodGet, *url, nil)
		} else {
			data, err = snapshot.SaveDir(*dir, backend.Services(&backend.Options{}))
		}
		if err != nil {
			return fail(err)
		}
		if file == "-" {
			stdio.Out.Write(data)
			return exitOK
		}
		if err := capture.WriteFileAtomic(file, data); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdio.Err, "pyric: snapshot saved to %s\n", file)
		return exitOK
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fail(err)
	}
	if *url != "" {
		_, err = httpDo(ctx, client, http.MethodPut, *url, data)
	} else {
		err = snapshot.LoadDir(*dir, data, backend.Services(&backend.Options{}))
	}
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdio.Err, "pyric: snapshot %s loaded\n", file)
	return exitOK
}

func httpDo(ctx context.Context, c *http.Client, method, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, snapshot.MaxSize+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(string(out)))
	}
	return out, nil
}
