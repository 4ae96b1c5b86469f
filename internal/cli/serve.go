package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/internal/config"
	"github.com/pyric/pyric/internal/memlimit"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/snapshot"
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
	ports          map[string]int    // by service name; 0 picks a free port
	rulesPaths     map[string]string // by service: the rules file to load and watch (it may not exist yet)
	dataDir        string            // "" when in memory
	indexesPath    string            // the index file, declared when it exists (enforced with enforceIndexes)
	enforceIndexes bool
	aiScript       string // AI Logic script file loaded into the default project
	sync           sandbox.SyncMode
	studioPort     int    // -1: off
	hubPort        int    // -1: off
	logJSON, quiet bool   // the denial log's format; quiet prints none
	capture        string // the session fixture file ("": no capture)
	// previousSession keeps the previous session at capture, started
	// before the store loads (nil: the recorder's start does it).
	previousSession *capture.Previous
	seed            string // a snapshot or {"collection/doc": fields} applied when the data dir is new
	fresh           bool   // start empty
	importDir       string // an Emulator Suite export to import at start
	exportOnExit    string // where to write an Emulator Suite export on exit
	json            bool
	functions       []functions.Codebase    // firebase.json's codebases (or --functions-source's)
	inspectPort     int                     // --inspect-functions: the Node inspector's port, 0 off
	hosting         *backend.HostingOptions // firebase.json's hosting sites; nil: none
	policy          *server.Policy          // who may call the ports from a browser
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
`

// serveFlagVals are serve's flags (exec takes them too).
type serveFlagVals struct {
	host, project                     *string
	portFlags                         map[string]*int
	rulesFlags                        map[string]*string
	dataDir                           *string
	inMemory, enforce                 *bool
	syncFlag                          *string
	studioPort, hubPort               *int
	logFormat                         *string
	quiet                             *bool
	captureFile                       *string
	noCapture                         *bool
	seed                              *string
	fresh                             *bool
	importDir, exportOnExit, aiScript *string
	functionsSource                   *string
	inspect                           *int
	allowOrigins                      *[]string
	jsonOut                           *bool
}

// defineServeFlags is the flag set of serve (and of exec, which takes the
// same flags), named name.
func defineServeFlags(name string, stdio Stdio) (*flag.FlagSet, *serveFlagVals) {
	fs := newFlagSet(name, stdio)
	v := &serveFlagVals{}
	v.host = fs.String("host", "", "interface to listen on (default firebase.json's, else 127.0.0.1)")
	v.project = fs.String("project", "", "default project id (default .firebaserc's, else $GCLOUD_PROJECT, else demo-pyric)")
	v.portFlags = map[string]*int{}
	for _, s := range backend.Catalog() {
		v.portFlags[s.Service] = fs.Int(s.Service+"-port", -1,
			fmt.Sprintf("%s port, 0 picks a free one (default firebase.json's emulators.%s.port, else %d)", displayName(s.Service), s.Service, s.DefaultPort))
	}
	v.rulesFlags = map[string]*string{}
	for _, rf := range rulesFiles {
		v.rulesFlags[rf.service] = fs.String(strings.TrimPrefix(rf.flag, "--"), "",
			fmt.Sprintf("%s path (default firebase.json's %s.rules, else ./%s)", rf.file, rf.config, rf.file))
	}
	v.dataDir = fs.String("data-dir", "", "where state persists (default .pyric/ beside firebase.json, else in this directory)")
	v.inMemory = fs.Bool("in-memory", false, "keep state in memory only")
	v.enforce = fs.Bool("enforce-indexes", false, "fail queries that need a composite index firestore.indexes.json (firebase.json's firestore.indexes) does not declare, as production does")
	v.syncFlag = fs.String("sync", "", "when durable writes reach the disk: batch (default: in the OS before every acknowledgement, so they survive kill -9; forced to disk every second) or always (fsync before every acknowledgement: survives power loss too, slower)")
	v.studioPort = fs.Int("studio-port", -2, "Studio, event API and /mcp port, 0 picks a free one, -1 leaves it off (default firebase.json's emulators.ui.port, else 4000)")
	v.hubPort = fs.Int("hub-port", -2, "Emulator Suite hub port (GET /emulators), 0 picks a free one, -1 leaves it off (default firebase.json's emulators.hub.port, else 4400)")
	v.logFormat = fs.String("log-format", "text", "the denial log on stderr: text or json (one object a line)")
	v.quiet = fs.Bool("quiet", false, "print no line per denied request")
	v.captureFile = fs.String("capture", "", "capture the session into this fixture file (default <data-dir>/last-session.json; in memory only when named)")
	v.noCapture = fs.Bool("no-capture", false, "do not capture the session")
	v.seed = fs.String("seed", "", "a snapshot or a {\"collection/doc\": fields} map applied when the data dir is new")
	v.fresh = fs.Bool("fresh", false, "discard the data dir's state and start empty")
	v.importDir = fs.String("import", "", "import an Emulator Suite export directory (firebase-export-metadata.json) at start")
	v.exportOnExit = fs.String("export-on-exit", "", "write an Emulator Suite export directory on exit")
	v.aiScript = fs.String("ai-script", "", "AI Logic script of canned answers (JSON) for the default project")
	v.functionsSource = fs.String("functions-source", "", "run the Cloud Functions codebase in this directory (default firebase.json's \"functions\"; without either, no functions run)")
	v.inspect = fs.Int("inspect-functions", 0, "run the functions under the Node inspector on this port (9229 when given without a port; further codebases on the next free ports, each named at start), one invocation at a time per codebase, without timeouts")
	v.allowOrigins = new([]string)
	fs.Func("allow-origin", "an origin (scheme://host:port) whose web pages may call the emulators besides loopback ones; repeatable; * allows every page (default firebase.json's emulators.allowOrigins)", func(s string) error {
		o, err := server.ParseOrigin(s)
		if err == nil {
			*v.allowOrigins = append(*v.allowOrigins, o)
		}
		return err
	})
	v.jsonOut = fs.Bool("json", false, `print one JSON line {"project", and host:port by service} on stdout once every port accepts connections`)
	return fs, v
}

// serveFlagGroups are the groups serve's and exec's help list the flags in.
var serveFlagGroups = []flagGroup{
	{"Project and network", []string{"project", "host", "allow-origin", "firestore-port", "auth-port", "database-port", "storage-port", "ai-port", "messaging-port", "pubsub-port", "functions-port", "tasks-port", "eventarc-port", "hosting-port", "studio-port", "hub-port", "json"}},
	{"Rules and indexes", []string{"rules", "database-rules", "storage-rules", "enforce-indexes"}},
	{"State and durability", []string{"data-dir", "in-memory", "sync", "fresh", "seed", "import", "export-on-exit"}},
	{"Capture and logs", []string{"capture", "no-capture", "log-format", "quiet"}},
	{"AI Logic", []string{"ai-script"}},
	{"Cloud Functions", []string{"functions-source", "inspect-functions"}},
}

func parseServe(args []string, stdio Stdio, getenv func(string) string, cwd string) (*serveOptions, bool) {
	fs, v := defineServeFlags("serve", stdio)
	fs.Usage = func() {
		fmt.Fprint(stdio.Err, serveUsage)
		printFlags(stdio.Err, fs, serveFlagGroups)
	}
	host, project, portFlags, rulesFlags := v.host, v.project, v.portFlags, v.rulesFlags
	dataDir, inMemory, enforce, syncFlag := v.dataDir, v.inMemory, v.enforce, v.syncFlag
	studioPort, hubPort, logFormat, quiet := v.studioPort, v.hubPort, v.logFormat, v.quiet
	captureFile, noCapture, seed, fresh := v.captureFile, v.noCapture, v.seed, v.fresh
	importDir, exportOnExit, aiScript, jsonOut := v.importDir, v.exportOnExit, v.aiScript, v.jsonOut
	functionsSource, inspect := v.functionsSource, v.inspect
	args = inspectDefault(args)
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
	o := &serveOptions{host: *host, project: *project, ports: map[string]int{},
		enforceIndexes: *enforce, json: *jsonOut}
	if o.host == "" {
		o.host = firstNonEmpty(cfg.FirestoreHost, "127.0.0.1")
	}
	if o.project == "" {
		o.project = firstNonEmpty(cfg.ID, getenv("GCLOUD_PROJECT"), sandbox.DefaultProject)
	}
	for _, s := range backend.Catalog() {
		switch p := *portFlags[s.Service]; {
		case p >= 0:
			o.ports[s.Service] = p
		case cfg.Ports[s.Service] > 0:
			o.ports[s.Service] = cfg.Ports[s.Service]
		default:
			o.ports[s.Service] = s.DefaultPort
		}
	}
	o.rulesPaths = map[string]string{}
	configured := map[string]string{backend.Firestore: cfg.FirestoreRules, backend.Storage: cfg.StorageRules, backend.Database: cfg.DatabaseRules}
	for _, rf := range rulesFiles {
		switch {
		case *rulesFlags[rf.service] != "":
			o.rulesPaths[rf.service] = absFrom(cwd, *rulesFlags[rf.service])
		case configured[rf.service] != "":
			o.rulesPaths[rf.service] = configured[rf.service]
		default:
			o.rulesPaths[rf.service] = filepath.Join(base, rf.file)
		}
	}
	if !*inMemory {
		o.dataDir = filepath.Join(base, ".pyric")
		if *dataDir != "" {
			o.dataDir = absFrom(cwd, *dataDir)
		}
	}
	o.studioPort, o.hubPort = defaultStudioPort, defaultHubPort
	if p := cfg.Ports["ui"]; p > 0 {
		o.studioPort = p
	}
	if p := cfg.Ports["hub"]; p > 0 {
		o.hubPort = p
	}
	if *studioPort > -2 {
		o.studioPort = *studioPort
	}
	if *hubPort > -2 {
		o.hubPort = *hubPort
	}
	switch *logFormat {
	case "text":
	case "json":
		o.logJSON = true
	default:
		fmt.Fprintf(stdio.Err, "pyric serve: --log-format: want text or json, got %q\n", *logFormat)
		return nil, false
	}
	o.quiet = *quiet
	switch {
	case *noCapture:
	case *captureFile != "":
		o.capture = absFrom(cwd, *captureFile)
	default:
		o.capture = defaultCapture(o.dataDir)
	}
	if *seed != "" {
		o.seed = absFrom(cwd, *seed)
	}
	o.fresh = *fresh
	if *importDir != "" {
		o.importDir = absFrom(cwd, *importDir)
	}
	if *exportOnExit != "" {
		o.exportOnExit = absFrom(cwd, *exportOnExit)
	}
	mode, err := sandbox.ParseSyncMode(*syncFlag)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric serve: --sync: %v\n", err)
		return nil, false
	}
	o.sync = mode
	if *aiScript != "" {
		o.aiScript = absFrom(cwd, *aiScript)
	}
	allowOrigins := *v.allowOrigins // filled as the flags were parsed
	if len(allowOrigins) == 0 {
		for _, v := range cfg.AllowOrigins {
			ov, err := server.ParseOrigin(v)
			if err != nil {
				fmt.Fprintf(stdio.Err, "pyric serve: firebase.json's %s: %v\n", server.ConfigKey, err)
				return nil, false
			}
			allowOrigins = append(allowOrigins, ov)
		}
	}
	o.policy = &server.Policy{Origins: allowOrigins, Hosts: append([]string{o.host}, cfg.Hosts...)}
	o.indexesPath = firstNonEmpty(cfg.FirestoreIndexes, filepath.Join(base, "firestore.indexes.json"))
	fnConfig, fnDir := cfg.Functions, base
	if *functionsSource != "" {
		fnConfig, _ = json.Marshal(map[string]string{"source": absFrom(cwd, *functionsSource)})
	}
	if o.functions, err = functions.ParseConfig(fnConfig, fnDir); err != nil {
		fmt.Fprintf(stdio.Err, "pyric serve: firebase.json: %v\n", err)
		return nil, false
	}
	o.inspectPort = *inspect
	if cfg.Hosting != nil {
		sites, err := hosting.ParseConfig(cfg.Hosting, base, o.project)
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric serve: firebase.json: %v\n", err)
			return nil, false
		}
		o.hosting = &backend.HostingOptions{Sites: sites, SDKDirs: backend.DefaultSDKDirs(base)}
	}
	return o, true
}

// inspectDefault gives a bare --inspect-functions its default port, as
// the Emulator Suite's flag takes an optional one.
func inspectDefault(args []string) []string {
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		out = append(out, a)
		if a == "--inspect-functions" || a == "-inspect-functions" {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				out = append(out, "9229")
			}
		}
	}
	return out
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
	startDebugPprof(os.Getenv, stdio.Err)
	if err := serve(ctx, o, stdio); err != nil {
		fmt.Fprintf(stdio.Err, "pyric serve: %v\n", err)
		return exitError
	}
	return exitOK
}

// warnTo writes the data dir's one-line notices (a torn write dropped, a
// damaged object or capture file found) to w.
func warnTo(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintln(w, "pyric: "+msg) }
}

// startBackend starts every service and loads each rules file and the
// index file: the startup serve and exec share.
func startBackend(o *serveOptions, stdio Stdio) (*backend.Backend, []*rulesWatcher, *indexesWatcher, error) {
	iw := &indexesWatcher{path: o.indexesPath, enforce: o.enforceIndexes, w: stdio.Err}
	indexes, declared, err := iw.start()
	if err != nil {
		return nil, nil, nil, err
	}
	if o.dataDir != "" && (o.seed != "" || o.fresh) {
		if err := snapshot.Prepare(context.Background(), o.dataDir, o.project, o.seed, o.fresh, backend.Services(&backend.Options{})); err != nil {
			return nil, nil, nil, err
		}
	}
	b, err := backend.Start(backend.Options{
		Sandbox:   sandbox.Options{Project: o.project, DataDir: o.dataDir, Sync: o.sync, Warn: warnTo(stdio.Err)},
		Host:      o.host,
		Ports:     o.ports,
		Firestore: backend.FirestoreOptions{Indexes: indexes},
		AI:        ai.Options{ScriptFile: o.aiScript},
		Functions: functionsOptions(o, stdio),
		Hosting:   hostingOptions(o),
		Policy:    o.policy,
	})
	var le *backend.ListenError
	if errors.As(err, &le) {
		return nil, nil, nil, fmt.Errorf("%v (pick another port with --%s-port, or 0 for a free one)", le, le.Service)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	iw.e, _ = sandbox.Lookup[*firestore.Engine](b.Sandbox) // backend.Services registers it
	if declared != nil {
		iw.e.DeclareIndexes(declared) // built over the data the sandbox loaded
	}
	var watchers []*rulesWatcher
	for _, rf := range rulesFiles {
		if target := b.Rules(rf.service); target != nil {
			w := newRulesWatcher(displayName(rf.service), rf.flag, o.rulesPaths[rf.service], target, stdio.Err)
			w.load()
			watchers = append(watchers, w)
		}
	}
	return b, watchers, iw, nil
}

// functionsOptions configure Cloud Functions: the codebases, the terminal
// for their logs, and the hub's address when it is known before start.
func functionsOptions(o *serveOptions, stdio Stdio) backend.FunctionsOptions {
	// The functions port serves while the codebases load: a call
	// arriving meanwhile waits for the load (its cold start).
	fo := backend.FunctionsOptions{Options: functions.Options{Codebases: o.functions, Log: stdio.Err, InspectPort: o.inspectPort},
		LoadInBackground: true}
	if o.hubPort > 0 {
		fo.Env = map[string]string{"FIREBASE_EMULATOR_HUB": net.JoinHostPort(connectHost(o.host), strconv.Itoa(o.hubPort))}
	}
	return fo
}

// connectHost is the address a client connects to for a listening host.
func connectHost(host string) string {
	switch host {
	case "", "0.0.0.0", "::":
		return "127.0.0.1"
	}
	return host
}

// serve runs until ctx ends, then shuts down cleanly: open streams end,
// in-flight requests finish (up to 10 s), the store closes.
func serve(ctx context.Context, o *serveOptions, stdio Stdio) error {
	// The collector waits until every port serves (see memlimit.PauseGC),
	// unless the start imports or seeds a first state, which makes
	// garbage in proportion to the data: then only the sandbox's open
	// pauses it, and the collector runs while they do. Capture's start
	// makes little: it writes an empty session and leaves the state to a
	// background flush, which starts as the ports open and runs mostly
	// after the pause.
	resumeGC := func() {}
	if o.importDir == "" && o.seed == "" {
		resumeGC = memlimit.PauseGC()
	}
	defer resumeGC()
	if o.capture != "" && o.seed == "" && !o.fresh {
		// The previous session (~10 MB at 100k documents) is checked
		// beside the store's load rather than after it. A seed or
		// --fresh rewrites the data dir first: then the recorder's start
		// keeps it, after them.
		o.previousSession = capture.KeepPrevious(o.capture)
	}
	b, watchers, iw, err := startBackend(o, stdio)
	if err != nil {
		return err
	}
	for _, w := range o.policy.Warnings() {
		fmt.Fprintln(stdio.Err, w)
	}
	if !isLoopback(o.host) {
		fmt.Fprintf(stdio.Err, "WARNING: listening on %s: anyone who can reach these ports can read and change all data (the emulator endpoints have no authentication, as in the Emulator Suite)\n", o.host)
	}
	// Light requests keep as many of the runtime's processors as there
	// are CPUs beside the heavy work the gate admits.
	server.SpareProcessor(os.Getenv)
	// A long-running server: resident memory follows the live heap, from
	// the end of the pause on (the start's data is collected once).
	memoryPolicy := sync.OnceFunc(func() {
		resumeGC()
		memlimit.Start()
	})
	if o.importDir != "" || o.seed != "" {
		memoryPolicy()
	}
	fe, err := startFrontends(ctx, b, o, stdio)
	if err != nil {
		b.Shutdown(context.Background())
		return err
	}
	printBanner(stdio.Err, o, b, fe, watchers)
	if o.json {
		line := map[string]string{"project": o.project}
		for _, e := range b.Endpoints() {
			line[e.Service] = e.Addr
		}
		hostingJSONKeys(line, b.Hosting())
		fe.jsonKeys(line)
		out, _ := json.Marshal(line)
		fmt.Fprintf(stdio.Out, "%s\n", out)
	}
	memoryPolicy() // beside the first requests, when not before

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	for _, w := range watchers {
		go w.run(watchCtx, 500*time.Millisecond)
	}
	go iw.run(watchCtx, 500*time.Millisecond)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-b.Err():
	}
	stopWatch()
	fmt.Fprintln(stdio.Err, "pyric: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o.exportOnExit != "" {
		if err := snapshot.ExportDir(b.Sandbox, o.exportOnExit); err != nil && serveErr == nil {
			serveErr = fmt.Errorf("--export-on-exit: %v", err)
		} else if err == nil {
			fmt.Fprintf(stdio.Err, "pyric: exported to %s\n", o.exportOnExit)
		}
	}
	if err := fe.close(sctx); err != nil && serveErr == nil {
		serveErr = fmt.Errorf("capture: %v", err)
	}
	if err := b.Shutdown(sctx); err != nil && serveErr == nil {
		serveErr = err
	}
	return serveErr
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

// rulesFiles are the services whose rules `pyric serve` loads from a file
// and hot-reloads: the flag, the default file name, and firebase.json's
// section naming it.
var rulesFiles = []struct{ service, flag, file, config string }{
	{backend.Firestore, "--rules", "firestore.rules", "firestore"},
	{backend.Storage, "--storage-rules", "storage.rules", "storage"},
	{backend.Database, "--database-rules", "database.rules.json", "database"},
}

func printBanner(w io.Writer, o *serveOptions, b *backend.Backend, fe *frontends, watchers []*rulesWatcher) {
	fmt.Fprintf(w, "pyric %s: project %s\n", Version, o.project)
	for _, e := range b.Endpoints() {
		env := ""
		for _, v := range e.Env {
			env += " " + v.Name + "=" + v.Value
		}
		fmt.Fprintf(w, "  %-10s %-22s %-35s%s\n", displayName(e.Service), e.Addr, e.What, env)
		if e.Service == backend.Hosting {
			printHostingSites(w, b.Hosting())
		}
	}
	fe.printBanner(w)
	for _, rw := range watchers {
		fmt.Fprintf(w, "  Rules      %-10s %s\n", rw.service, rw.status())
	}
	if o.enforceIndexes {
		fmt.Fprintf(w, "  Indexes    enforced from %s\n", o.indexesPath)
	} else if _, err := os.Stat(o.indexesPath); err == nil {
		fmt.Fprintf(w, "  Indexes    declared from %s (maintained on commit, not enforced)\n", o.indexesPath)
	}
	if o.dataDir == "" {
		fmt.Fprintf(w, "  Data       in memory (lost on exit)\n")
	} else {
		fmt.Fprintf(w, "  Data       %s (persistent)\n", o.dataDir)
	}
	for _, rw := range watchers {
		if !rw.loaded() {
			fmt.Fprintln(w, rw.noRulesWarning())
		}
	}
}

// isLoopback reports whether host only accepts connections from this
// machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// displayName is a service's name in the banner.
func displayName(service string) string {
	switch service {
	case backend.Firestore:
		return "Firestore"
	case backend.Auth:
		return "Auth"
	case backend.Database:
		return "Database"
	case backend.Storage:
		return "Storage"
	case backend.Messaging:
		return "Messaging"
	case backend.AI:
		return "AI Logic"
	case backend.Functions:
		return "Functions"
	case backend.Hosting:
		return "Hosting"
	case backend.PubSub:
		return "Pub/Sub"
	case backend.Tasks:
		return "Cloud Tasks"
	case backend.Eventarc:
		return "Eventarc"
	}
	return service
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
