package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	engine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/config"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server"
	authserver "github.com/pyric/pyric/server/auth"
	fsserver "github.com/pyric/pyric/server/firestore"
)

func init() {
	register(command{path: "serve", args: "[flags]",
		summary: "run Firestore (gRPC + REST, port 8080) and Auth (port 9099) locally; the default command",
		run:     runServe})
}

// serveOptions is the resolved configuration of one `pyric serve`.
type serveOptions struct {
	host           string
	project        string
	firestorePort  int
	authPort       int
	rulesPath      string // the rules file to load and watch (it may not exist yet)
	dataDir        string // "" when in memory
	indexesPath    string // "" without --enforce-indexes
	enforceIndexes bool
	json           bool
}

const serveUsage = `Usage: pyric serve [flags]

Runs Firestore (gRPC, REST, WebChannel and the emulator endpoints on one
port) and Auth, as the Firebase Emulator Suite does, so the official SDKs
connect with FIRESTORE_EMULATOR_HOST / FIREBASE_AUTH_EMULATOR_HOST or
connectFirestoreEmulator / connectAuthEmulator.

Defaults come from firebase.json (found in this directory or a parent),
.firebaserc and GCLOUD_PROJECT. Rules hot-reload when the file changes; a
rules file that does not compile keeps the last good rules live. Without
any rules file every client request is denied (admin "Bearer owner"
bypasses rules). State persists in the data directory unless --in-memory.

Flags:
`

func parseServe(args []string, stdio Stdio, getenv func(string) string, cwd string) (*serveOptions, bool) {
	fs := newFlagSet("serve", stdio)
	fs.Usage = func() {
		fmt.Fprint(stdio.Err, serveUsage)
		fs.PrintDefaults()
	}
	host := fs.String("host", "", "interface to listen on (default firebase.json's, else 127.0.0.1)")
	project := fs.String("project", "", "default project id (default .firebaserc's, else $GCLOUD_PROJECT, else demo-pyric)")
	fsPort := fs.Int("firestore-port", -1, "Firestore port, 0 picks a free one (default firebase.json's, else 8080)")
	authPort := fs.Int("auth-port", -1, "Auth port, 0 picks a free one (default firebase.json's, else 9099)")
	rules := fs.String("rules", "", "firestore.rules path (default firebase.json's firestore.rules, else ./firestore.rules)")
	dataDir := fs.String("data-dir", "", "where state persists (default .pyric/ beside firebase.json, else in this directory)")
	inMemory := fs.Bool("in-memory", false, "keep state in memory only")
	enforce := fs.Bool("enforce-indexes", false, "fail queries that need a composite index firestore.indexes.json (firebase.json's firestore.indexes) does not declare, as production does")
	jsonOut := fs.Bool("json", false, `print one JSON line {"project","firestore","auth"} on stdout once every port accepts connections`)
	pos, ok := parseFlags(fs, args)
	if !ok {
		return nil, false
	}
	if len(pos) > 0 {
		fmt.Fprintf(stdio.Err, "pyric serve: unexpected argument %q\n", pos[0])
		return nil, false
	}
	cfg, err := config.Discover(cwd)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric serve: %v\n", err)
		return nil, false
	}
	base := cwd
	if cfg.Dir != "" {
		base = cfg.Dir
	}
	o := &serveOptions{host: *host, project: *project, firestorePort: *fsPort, authPort: *authPort,
		enforceIndexes: *enforce, json: *jsonOut}
	if o.host == "" {
		o.host = firstNonEmpty(cfg.FirestoreHost, "127.0.0.1")
	}
	if o.project == "" {
		o.project = firstNonEmpty(cfg.ID, getenv("GCLOUD_PROJECT"), sandbox.DefaultProject)
	}
	if o.firestorePort < 0 {
		o.firestorePort = 8080
		if cfg.FirestorePort > 0 {
			o.firestorePort = cfg.FirestorePort
		}
	}
	if o.authPort < 0 {
		o.authPort = 9099
		if cfg.AuthPort > 0 {
			o.authPort = cfg.AuthPort
		}
	}
	switch {
	case *rules != "":
		o.rulesPath = absFrom(cwd, *rules)
	case cfg.FirestoreRules != "":
		o.rulesPath = cfg.FirestoreRules
	default:
		o.rulesPath = filepath.Join(base, "firestore.rules")
	}
	if !*inMemory {
		o.dataDir = filepath.Join(base, ".pyric")
		if *dataDir != "" {
			o.dataDir = absFrom(cwd, *dataDir)
		}
	}
	if o.enforceIndexes {
		o.indexesPath = firstNonEmpty(cfg.FirestoreIndexes, filepath.Join(base, "firestore.indexes.json"))
	}
	return o, true
}

func runServe(ctx context.Context, args []string, stdio Stdio) int {
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric serve: %v\n", err)
		return exitError
	}
	o, ok := parseServe(args, stdio, os.Getenv, cwd)
	if !ok {
		return exitError
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The rules watcher reports from its own goroutine.
	stdio.Err = &lockedWriter{w: stdio.Err}
	if err := serve(ctx, o, stdio); err != nil {
		fmt.Fprintf(stdio.Err, "pyric serve: %v\n", err)
		return exitError
	}
	return exitOK
}

// serve runs until ctx ends, then shuts down cleanly: open streams end,
// in-flight requests finish (up to 10 s), the store closes.
func serve(ctx context.Context, o *serveOptions, stdio Stdio) error {
	sb, err := sandbox.Open(sandbox.Options{Project: o.project, DataDir: o.dataDir})
	if err != nil {
		return err
	}
	defer sb.Close()
	fs := fsserver.New(fsserver.Options{Engine: sb.Firestore(), DefaultProject: o.project})
	if o.enforceIndexes {
		cfg := &engine.IndexConfig{}
		if b, err := os.ReadFile(o.indexesPath); err == nil {
			if cfg, err = engine.ParseIndexConfig(b); err != nil {
				return fmt.Errorf("%s: %v", o.indexesPath, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		sb.Firestore().SetIndexes(cfg)
	}
	watcher := newRulesWatcher(o.rulesPath, fs.Rules(), stdio.Err)
	watcher.load()

	fsL, err := listen(o.host, o.firestorePort, "Firestore", "--firestore-port")
	if err != nil {
		return err
	}
	authL, err := listen(o.host, o.authPort, "Auth", "--auth-port")
	if err != nil {
		fsL.Close()
		return err
	}
	fsPort, grpcSvc := fsserver.NewPort(fsL, fs)
	authH := authserver.New(sb.Auth(), authserver.Options{DefaultProject: o.project})
	authPort := server.NewPort(authL, nil, persistAuth(sb, authH))

	errc := make(chan error, 2)
	go func() { errc <- fsPort.Serve() }()
	go func() { errc <- authPort.Serve() }()

	printBanner(stdio.Err, o, fsL.Addr().String(), authL.Addr().String(), watcher)
	if o.json {
		line, _ := json.Marshal(struct {
			Project   string `json:"project"`
			Firestore string `json:"firestore"`
			Auth      string `json:"auth"`
		}{o.project, fsL.Addr().String(), authL.Addr().String()})
		fmt.Fprintf(stdio.Out, "%s\n", line)
	}

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watcher.run(watchCtx, 500*time.Millisecond)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	stopWatch()
	fmt.Fprintln(stdio.Err, "pyric: shutting down")
	grpcSvc.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fsPort.Shutdown(sctx)
	authPort.Shutdown(sctx)
	if err := sb.SaveAuth(); err != nil && serveErr == nil {
		serveErr = err
	}
	return serveErr
}

func listen(host string, port int, what, flag string) (net.Listener, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s cannot listen on %s: %v (pick another port with %s, or 0 for a free one)", what, addr, err, flag)
	}
	return l, nil
}

// persistAuth saves the Auth state after every request and before the
// response leaves, so an acknowledged sign-up or update survives kill -9:
// the handler writes into a buffer that is sent only once the state is
// durable.
func persistAuth(sb *sandbox.Sandbox, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			h.ServeHTTP(w, r)
			return
		}
		rec := &bufferedResponse{header: w.Header()}
		h.ServeHTTP(rec, r)
		if err := sb.SaveAuth(); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error":{"code":500,"message":%q,"status":"INTERNAL"}}`, "could not persist the change: "+err.Error())
			return
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		w.WriteHeader(rec.status)
		w.Write(rec.body)
	})
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type bufferedResponse struct {
	header http.Header
	status int
	body   []byte
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.body = append(b.body, p...)
	return len(p), nil
}

func printBanner(w io.Writer, o *serveOptions, fsAddr, authAddr string, rules *rulesWatcher) {
	fmt.Fprintf(w, "pyric %s: project %s\n", Version, o.project)
	fmt.Fprintf(w, "  Firestore  %-22s gRPC + REST + WebChannel   FIRESTORE_EMULATOR_HOST=%s\n", fsAddr, fsAddr)
	fmt.Fprintf(w, "  Auth       %-22s Identity Toolkit REST      FIREBASE_AUTH_EMULATOR_HOST=%s\n", authAddr, authAddr)
	fmt.Fprintf(w, "  Rules      %s\n", rules.status())
	if o.enforceIndexes {
		fmt.Fprintf(w, "  Indexes    enforced from %s\n", o.indexesPath)
	}
	if o.dataDir == "" {
		fmt.Fprintf(w, "  Data       in memory (lost on exit)\n")
	} else {
		fmt.Fprintf(w, "  Data       %s (persistent)\n", o.dataDir)
	}
	if !rules.loaded() {
		fmt.Fprintln(w, noRulesWarning(rules.path))
	}
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}
