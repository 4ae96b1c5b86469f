package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pyric/pyric/backend"
)

func init() {
	register(command{path: "exec", args: "[serve flags] -- CMD [ARG...]",
		summary: "start everything like serve, run CMD with the emulator env vars set, stop when it exits and exit with its status",
		run:     runExec})
}

const execUsage = `Usage: pyric exec [flags] -- CMD [ARG...]

Starts every service as pyric serve does (same flags and firebase.json),
plus the Emulator Suite hub (--hub-port, default 4400) and the Studio
(--studio-port, default 4000; 0 picks a free port, -1 leaves it off), runs
CMD with FIRESTORE_EMULATOR_HOST, FIREBASE_AUTH_EMULATOR_HOST,
FIREBASE_DATABASE_EMULATOR_HOST, FIREBASE_STORAGE_EMULATOR_HOST,
STORAGE_EMULATOR_HOST, FIREBASE_EMULATOR_HUB and GCLOUD_PROJECT set (and
every service's own variables), stops everything when CMD exits and exits
with CMD's status — what firebase emulators:exec does in CI.
`

// execHelp prints exec's help: what it does, then every flag it takes
// (serve's, grouped as serve lists them, with exec's own defaults for the
// hub and the Studio).
func execHelp(stdio Stdio) {
	fs, _ := defineServeFlags("exec", stdio)
	if f := fs.Lookup("hub-port"); f != nil {
		f.Usage = "Emulator Suite hub port (GET /emulators), 0 picks a free one, -1 leaves it off"
		f.DefValue = strconv.Itoa(defaultHubPort)
	}
	if f := fs.Lookup("studio-port"); f != nil {
		f.Usage = "Studio, event API and /mcp port, 0 picks a free one, -1 leaves it off"
		f.DefValue = strconv.Itoa(defaultStudioPort)
	}
	fmt.Fprint(stdio.Err, execUsage)
	printFlags(stdio.Err, fs, serveFlagGroups)
	fmt.Fprint(stdio.Err, "\nEverything after -- is the command and its arguments, passed unchanged.\n")
}

// execFlags are the flags exec takes beyond serve's.
type execFlags struct {
	hubPort, studioPort int
}

// splitExec separates exec's own flags and CMD from serve's flags.
func splitExec(args []string) (serveArgs, cmd []string, f execFlags, err error) {
	f = execFlags{hubPort: defaultHubPort, studioPort: defaultStudioPort}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cmd = args[i+1:]
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "hub-port" || name == "studio-port") {
			if !hasVal {
				if i+1 >= len(args) {
					return nil, nil, f, fmt.Errorf("flag --%s needs a port", name)
				}
				i++
				val = args[i]
			}
			n, perr := strconv.Atoi(val)
			if perr != nil || n < -1 || n > 65535 {
				return nil, nil, f, fmt.Errorf("--%s: %q is not a port (0 picks a free one, -1 leaves it off)", name, val)
			}
			if name == "hub-port" {
				f.hubPort = n
			} else {
				f.studioPort = n
			}
			continue
		}
		serveArgs = append(serveArgs, a)
	}
	if len(cmd) == 0 {
		return nil, nil, f, errors.New("no command: pyric exec [flags] -- CMD [ARG...]")
	}
	return serveArgs, cmd, f, nil
}

func runExec(ctx context.Context, args []string, stdio Stdio) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || a == "-help" {
			execHelp(stdio)
			return exitOK
		}
	}
	serveArgs, cmd, xf, err := splitExec(args)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric exec: %v\n", err)
		return exitError
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric exec: %v\n", err)
		return exitError
	}
	o, ok := parseServe(serveArgs, stdio, os.Getenv, cwd)
	if !ok {
		return exitError
	}
	stdio.Err = &lockedWriter{w: stdio.Err}
	code, err := execWith(ctx, o, xf, cmd, stdio)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric exec: %v\n", err)
		return exitError
	}
	return code
}

// execWith starts the backend, hub and Studio, runs cmd and returns its
// exit status.
func execWith(ctx context.Context, o *serveOptions, xf execFlags, cmd []string, stdio Stdio) (int, error) {
	b, watchers, iw, err := startBackend(o, stdio) // serve's startup
	if err != nil {
		return 0, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Shutdown(sctx)
	}()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	for _, w := range watchers {
		go w.run(watchCtx, 500*time.Millisecond)
	}
	go iw.run(watchCtx, 500*time.Millisecond)

	o.hubPort, o.studioPort = xf.hubPort, xf.studioPort
	fe, err := startFrontends(ctx, b, o, stdio)
	if err != nil {
		return 0, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = fe.close(sctx)
	}()
	hubAddr := fe.hubAddr
	printBanner(stdio.Err, o, b, fe, watchers)
	// CMD starts while the functions load, its own start-up beside
	// theirs, and sees what firebase emulators:exec's CMD, started once
	// they loaded, sees: a call waits for its function's load; a write,
	// upload, publish or event it makes at once is held and fires the
	// triggers that load; Auth waits for the blocking functions, Pub/Sub
	// for the functions' topics and Cloud Tasks for their queues.
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Env = append(os.Environ(), execEnv(b, o.project, hubAddr)...)
	c.Stdin, c.Stdout, c.Stderr = stdio.In, stdio.Out, stdio.Err
	if err := c.Start(); err != nil {
		return 0, fmt.Errorf("cannot run %s: %v", cmd[0], err)
	}
	// Signals go to CMD; pyric stops when CMD exits.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = c.Process.Signal(s)
		case <-ctx.Done():
			_ = c.Process.Signal(syscall.SIGTERM)
			ctx = context.Background()
		case err := <-b.Err():
			fmt.Fprintf(stdio.Err, "pyric exec: %v; stopping %s\n", err, cmd[0])
			_ = c.Process.Signal(syscall.SIGTERM)
		case err := <-done:
			fmt.Fprintln(stdio.Err, "pyric: shutting down")
			return exitStatus(c, err), nil
		}
	}
}

// exitStatus is CMD's exit code; a signal death maps to 128+signal as a
// shell reports it.
func exitStatus(c *exec.Cmd, err error) int {
	if c.ProcessState == nil {
		return exitError
	}
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return c.ProcessState.ExitCode()
}

// execEnv is the environment CMD gets: every endpoint's own variables,
// the Emulator Suite's standard names, the hub and the project.
func execEnv(b *backend.Backend, project, hubAddr string) []string {
	env := map[string]string{"GCLOUD_PROJECT": project}
	for _, e := range b.Endpoints() { // each service's own variables (backend/endpoints.go)
		for _, v := range e.Env {
			env[v.Name] = v.Value
		}
	}
	if hubAddr != "" {
		env["FIREBASE_EMULATOR_HUB"] = hubAddr
	}
	// As emulators:exec does when GCLOUD_PROJECT is set (the script may
	// be a test that runs functions code with firebase-functions-test).
	if os.Getenv("FIREBASE_CONFIG") == "" {
		cfg, _ := json.Marshal(map[string]string{"projectId": project, "storageBucket": project + ".appspot.com",
			"databaseURL": "https://" + project + ".firebaseio.com"})
		env["FIREBASE_CONFIG"] = string(cfg)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
