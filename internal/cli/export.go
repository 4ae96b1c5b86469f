package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/snapshot"
)

func init() {
	register(command{
		path:    "export",
		args:    "DIR [--data-dir D | --url URL]",
		summary: "write the state in the Firebase Emulator Suite's export layout (firebase-export-metadata.json, firestore_export/, auth_export/, database_export/, storage_export/)",
		run:     runExport,
	})
}

func runExport(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("export", stdio)
	dataDir := fs.String("data-dir", ".pyric", "the data directory of a stopped server")
	url := fs.String("url", "", "the export endpoint of a running server (e.g. http://127.0.0.1:4000/__pyric/export)")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, "usage: pyric export DIR [--data-dir D | --url URL]")
		return exitError
	}
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric export: %v\n", err)
		return exitError
	}
	if *url != "" {
		body, _ := json.Marshal(map[string]string{"dir": dir})
		_, err = httpDo(ctx, &http.Client{Timeout: 5 * time.Minute}, http.MethodPost, *url, body)
	} else {
		err = snapshot.ExportDataDir(*dataDir, dir, backend.Services(&backend.Options{}))
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric export: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdio.Err, "pyric: exported to %s\n", dir)
	return exitOK
}
