package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

func init() {
	register(command{
		path:    "functions run",
		args:    "NAME [--functions URL] [--project P]",
		summary: "run a scheduled function now on a running pyric serve (POST /functions/projects/P/schedules/NAME:run on the functions port)",
		run:     runFunctionsRun,
	})
}

func runFunctionsRun(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("functions run", stdio)
	base := os.Getenv("PYRIC_FUNCTIONS_URL")
	if base == "" {
		base = "http://127.0.0.1:5001"
	}
	addr := fs.String("functions", base, "the functions port of the running server ($PYRIC_FUNCTIONS_URL, as `pyric exec` sets it)")
	project := fs.String("project", os.Getenv("GCLOUD_PROJECT"), "the project (default: whichever the server runs)")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 || pos[0] == "" {
		fmt.Fprintln(stdio.Err, "usage: pyric functions run NAME [--functions URL] [--project P]")
		return exitError
	}
	p := *project
	if p == "" {
		p = "-"
	}
	u := strings.TrimRight(*addr, "/")
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	u += "/functions/projects/" + url.PathEscape(p) + "/schedules/" + url.PathEscape(pos[0]) + ":run"
	out, err := httpDo(ctx, &http.Client{Timeout: 10 * time.Minute}, http.MethodPost, u, nil)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric functions run: %v\n", err)
		return exitFailure
	}
	var res struct {
		Function     string `json:"function"`
		ScheduleTime string `json:"scheduleTime"`
	}
	_ = json.Unmarshal(out, &res)
	fmt.Fprintf(stdio.Out, "ran %s (schedule time %s)\n", res.Function, res.ScheduleTime)
	return exitOK
}
