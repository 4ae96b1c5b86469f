// Package functions is the Cloud Functions engine: it runs the app's own
// functions, from the codebases firebase.json lists, with the node on
// PATH, the way the Emulator Suite runs them. Each codebase runs in
// supervised worker processes executing a small embedded JavaScript
// harness, an adapter that only loads the module, reports each export's
// __endpoint and calls the function a request names. The engine owns
// discovery, the environment (.env files, secrets, the emulator hosts),
// dispatch with each function's concurrency and timeout, replacing
// workers that crash, hang or exit, hot reload, logs and the invocation
// events. Trigger matching lives beside it and delivers through
// DeliverEvent; HTTP adapters call ServeFunction.
package functions

import (
	"context"
	crand "crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions/trigger"
	"github.com/pyric/pyric/sandbox/service"
)

//go:embed harness.js
var harnessJS []byte

// Name is the service's name in the sandbox.
const Name = "functions"

// DefaultMaxWorkers bounds the worker processes of one codebase: a
// function whose instances are all at their concurrency waits for one
// (production scales instances out; locally a few bound the cost).
const DefaultMaxWorkers = 4

// Options configure the engine.
type Options struct {
	// Codebases are firebase.json's "functions" codebases.
	Codebases []Codebase
	// Node is the node binary; empty looks "node" up on PATH.
	Node string
	// Log is where function logs and worker reports are printed (the
	// terminal); nil discards them.
	Log io.Writer
	// MaxWorkers bounds the worker processes per codebase (default
	// DefaultMaxWorkers).
	MaxWorkers int
	// InspectPort, when positive, runs the workers under the Node
	// inspector: the first codebase's on that port, each next one's on
	// the first free port after the previous one (firebase-tools gives
	// each codebase a port of its own too, and refuses one port for
	// several codebases), one worker per codebase and one invocation at
	// a time in it, without timeouts, so breakpoints are usable
	// (--inspect-functions). InspectPorts tells which port is whose.
	InspectPort int
	// Clock drives the scheduled functions' schedules; nil means the
	// sandbox's clock with real timers.
	Clock Clock
	// NoSchedules keeps scheduled functions from running on their
	// schedules (RunScheduled and RunTicks still run them).
	NoSchedules bool
	// Poll is how often codebase directories are checked for changes (hot
	// reload); 0 means 500 ms, negative turns reloading off.
	Poll time.Duration
}

// Registration returns the sandbox registration of a functions engine
// with these options.
func Registration(opts Options) service.Registration {
	return service.Registration{Name: Name, New: func(env service.Env) (service.Service, error) {
		return New(opts, env)
	}}
}

// Engine runs the app's functions. It is safe for concurrent use.
type Engine struct {
	opts    Options
	project string
	events  event.Emitter
	now     func() time.Time
	newID   func() string
	rand    io.Reader // the sandbox's random source (service.Env.Rand)
	node    string
	dir     string // the harness and the workers' sockets
	// compileCache is node's compile cache directory (the user's cache
	// directory, else dir).
	compileCache string

	workerSeq atomic.Int64

	// bucket keeps the task queues' tasks (nil in memory).
	bucket service.Bucket
	tasks  taskQueues
	invSeq atomic.Int64
	// running are the invocations in flight by id, which the writes
	// their functions make are attributed to (noteWrite).
	running sync.Map
	// finishing counts the invocations answered whose event is still
	// to be emitted; Close waits for them.
	finishing sync.WaitGroup
	logMu     sync.Mutex

	mu        sync.Mutex
	codebases []*codebase
	env       map[string]string
	started   bool
	closed    bool
	changed   chan struct{} // closed and replaced when the endpoints change
	stopWatch context.CancelFunc

	kept       payloads            // the last payload of each event function
	dispatcher *trigger.Dispatcher // delivers changes to event functions
	// log journals the trigger deliveries not yet made (nil in memory);
	// recovered are those an earlier run left, delivered once the
	// codebases loaded.
	log       service.Log
	recovered []trigger.Pending
	// outbox holds the changes the dispatcher may deliver with their
	// commits (nil in memory); left are those an earlier run held and
	// never took, matched once the codebases loaded.
	outbox service.Outbox
	left   []event.Event
	// registered are the Eventarc triggers registered through the
	// Eventarc port (RegisterEventarcTrigger), in order.
	registered []eventarcRegistration
	sched      scheduler
	done       chan struct{} // closed by Close
	// loaded is closed once every codebase's first load has ended
	// (loaded or failed); StartLoading's loading goroutine closes it,
	// and Close waits for that goroutine (loading).
	loaded  chan struct{}
	loading sync.WaitGroup
}

// New creates an engine; workers start with Start, once the other
// services listen (their addresses go into the workers' environment).
func New(opts Options, env service.Env) (*Engine, error) {
	if opts.MaxWorkers <= 0 {
		opts.MaxWorkers = DefaultMaxWorkers
	}
	if opts.InspectPort > 0 {
		opts.MaxWorkers = 1
	}
	if opts.Poll == 0 {
		opts.Poll = 500 * time.Millisecond
	}
	e := &Engine{opts: opts, project: env.Project, events: env.Events, now: env.Now, newID: env.NewID, rand: env.Rand,
		changed: make(chan struct{}), done: make(chan struct{}), loaded: make(chan struct{}),
		sched: scheduler{next: map[string]time.Time{}, spec: map[string]string{}, running: map[string]bool{}, wake: make(chan struct{}, 1)}}
	if e.project == "" {
		e.project = service.DefaultProject
	}
	if e.events == nil {
		e.events = event.Discard
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.rand == nil {
		e.rand = crand.Reader
	}
	port := opts.InspectPort
	for i, c := range opts.Codebases {
		cb := &codebase{e: e, cfg: c, endpoints: map[string]*Endpoint{}}
		if opts.InspectPort > 0 {
			// One inspector per codebase's worker: the first on the
			// port asked for, the next ones on free ports after it.
			if i > 0 {
				port = freePortAfter(port)
			}
			cb.inspectPort = port
		}
		e.codebases = append(e.codebases, cb)
	}
	e.bucket = env.Bucket
	if env.Log != nil {
		e.log = env.Log
		if err := e.loadPendingDeliveries(); err != nil {
			return nil, err
		}
	}
	if env.Outbox != nil {
		e.outbox = env.Outbox
		left, err := env.Outbox.Left()
		if err != nil {
			return nil, err
		}
		e.left = left
	}
	if err := e.loadTasks(); err != nil {
		return nil, err
	}
	return e, nil
}

// Name is the service's name.
func (e *Engine) Name() string { return Name }

// freePortAfter is the first port after p that nothing listens on at
// 127.0.0.1 now (p+1 when none is found, which the worker's Node then
// reports).
func freePortAfter(p int) int {
	for q := p + 1; q <= 65535; q++ {
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q)); err == nil {
			l.Close()
			return q
		}
	}
	return p + 1
}

// InspectPorts is the Node inspector's port of each codebase's worker
// (by codebase name), empty unless Options.InspectPort is set.
func (e *Engine) InspectPorts() map[string]int {
	out := map[string]int{}
	for _, cb := range e.codebases {
		if cb.inspectPort > 0 {
			out[cb.cfg.Name] = cb.inspectPort
		}
	}
	return out
}

// Reset keeps the functions running: they are code, not data. Their
// task queues' tasks are data, and are dropped.
func (e *Engine) Reset() error {
	e.resetTasks()
	return nil
}

// Snapshot is empty: the engine holds no data.
func (e *Engine) Snapshot() (json.RawMessage, error) { return json.RawMessage(`{}`), nil }

// Restore accepts the engine's one state, Snapshot's empty object (or
// null), and refuses anything else: there is nothing to restore, but a
// state that is not the engine's is a mistake to report, not to drop.
func (e *Engine) Restore(state json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(state, &m); err != nil {
		return fmt.Errorf("functions state: %w", err)
	}
	if len(m) != 0 {
		return fmt.Errorf("functions state: the engine holds no data, got %s", state)
	}
	return nil
}

// Project is the project the functions run in.
func (e *Engine) Project() string { return e.project }

// Codebases returns the configured codebases.
func (e *Engine) Codebases() []Codebase {
	out := make([]Codebase, len(e.codebases))
	for i, cb := range e.codebases {
		out[i] = cb.cfg
	}
	return out
}

// Start loads every codebase in workers whose environment is the
// Emulator Suite's plus env (the emulator host variables pointing at the
// running services, FIREBASE_CONFIG, …; see RuntimeEnv), and starts
// watching the codebases for changes. It waits for each codebase's first
// load; a codebase that fails to load is reported on Log and retried
// when its files change, and the others serve. Only a missing node is an
// error.
func (e *Engine) Start(env map[string]string) error {
	if err := e.StartLoading(env); err != nil {
		return err
	}
	<-e.loaded
	return nil
}

// StartLoading is Start without the wait: the workers start loading the
// codebases and it returns; Loaded tells when the first loads ended. An
// invocation routed meanwhile waits for them (WaitLoaded), as a cold
// start in production or the Emulator Suite waits for the instance.
// The changes committed meanwhile are held and fire the functions that
// load, once they loaded (the Emulator Suite's functions emulator drops
// them: it registers its triggers only once they loaded).
func (e *Engine) StartLoading(env map[string]string) error {
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("functions: already started")
	}
	if e.closed {
		e.mu.Unlock()
		return errors.New("functions: the engine is closed")
	}
	e.started = true
	e.env = env
	e.loading.Add(1)
	e.mu.Unlock()
	started := false
	defer func() {
		if !started {
			close(e.loaded)
			e.loading.Done()
		}
	}()
	node := e.opts.Node
	if node == "" {
		node = "node"
	}
	path, err := exec.LookPath(node)
	if err != nil {
		return fmt.Errorf("functions: %w (install Node.js to run the functions)", err)
	}
	e.node = path
	if e.dir, err = os.MkdirTemp("", "pyric-functions-"); err != nil {
		return fmt.Errorf("functions: %w", err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "harness.js"), harnessJS, 0o600); err != nil {
		return fmt.Errorf("functions: %w", err)
	}
	e.compileCache = filepath.Join(e.dir, "compile-cache")
	if d, err := os.UserCacheDir(); err == nil {
		e.compileCache = filepath.Join(d, "pyric", "node-compile-cache")
	}
	for _, cb := range e.codebases {
		if cb.inspectPort > 0 {
			e.printf("functions: %s runs under the Node inspector at 127.0.0.1:%d (chrome://inspect, or attach VS Code there)\n", cb.label(), cb.inspectPort)
		}
	}
	// The workers start first: node's start and the module's load are
	// most of the time to the first answer, and everything else here
	// happens while they run.
	var wg sync.WaitGroup
	for _, cb := range e.codebases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The fingerprint the watcher compares with is taken
			// while the worker starts, not before.
			fp := make(chan string, 1)
			go func() {
				f, _ := cb.scan()
				fp <- f
			}()
			cb.load()
			f := <-fp
			cb.loadMu.Lock()
			cb.fingerprint = f
			cb.loadMu.Unlock()
		}()
	}
	e.startTriggers(env)
	started = true
	go func() {
		defer e.loading.Done()
		wg.Wait()
		e.mu.Lock()
		d := e.dispatcher
		e.mu.Unlock()
		if d != nil {
			d.Release()
		}
		close(e.loaded)
		e.redeliver()
		if !e.opts.NoSchedules {
			go e.runSchedules()
		}
		if e.opts.Poll > 0 {
			ctx, cancel := context.WithCancel(context.Background())
			e.mu.Lock()
			if e.closed {
				e.mu.Unlock()
				cancel()
				return
			}
			e.stopWatch = cancel
			e.mu.Unlock()
			for _, cb := range e.codebases {
				go cb.watch(ctx, e.opts.Poll)
			}
		}
	}()
	return nil
}

// Loaded is closed once every codebase's first load has ended, loaded
// or failed, when loading could not start (no node), or when the engine
// closed without starting.
func (e *Engine) Loaded() <-chan struct{} { return e.loaded }

// firstLoadWait bounds how long a request for a function the first load
// may bring waits for it (awaitFirstLoad).
const firstLoadWait = 2 * time.Minute

// awaitFirstLoad waits, at most firstLoadWait, for the codebases' first
// load to end; it reports whether it had to (a lookup that failed is then
// worth making again). The ports serve while the codebases load: a task
// enqueued then to a queue the load brings waits for it, as a call does.
func (e *Engine) awaitFirstLoad() bool {
	select {
	case <-e.loaded:
		return false
	default:
	}
	t := time.NewTimer(firstLoadWait)
	defer t.Stop()
	select {
	case <-e.loaded:
	case <-e.done:
	case <-t.C:
	}
	return true
}

// WaitLoaded waits until every codebase's first load has ended, or ctx
// ends.
func (e *Engine) WaitLoaded(ctx context.Context) error {
	select {
	case <-e.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the workers.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.done)
	if e.outbox != nil {
		e.outbox.Want(nil) // what is held from now on waits for the next run
	}
	if !e.started {
		close(e.loaded) // nothing will load
	}
	if e.stopWatch != nil {
		e.stopWatch()
	}
	d := e.dispatcher
	e.mu.Unlock()
	if d != nil {
		d.Close()
	}
	for _, cb := range e.codebases {
		cb.stop()
	}
	e.loading.Wait()
	e.closeTasks()
	e.finishing.Wait()
	if e.dir != "" {
		os.RemoveAll(e.dir)
	}
	return nil
}

// Endpoints lists every loaded function of every codebase, by codebase
// then id.
func (e *Engine) Endpoints() []Endpoint {
	var out []Endpoint
	for _, cb := range e.codebases {
		cb.mu.Lock()
		for _, ep := range cb.endpoints {
			out = append(out, *ep)
		}
		cb.mu.Unlock()
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Codebase != out[j].Codebase {
			return out[i].Codebase < out[j].Codebase
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Changed returns a channel closed the next time the endpoints change (a
// codebase loaded or reloaded); call it again for the change after.
func (e *Engine) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

func (e *Engine) notifyChanged() {
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	e.syncTriggers()
}

// Endpoint returns the function with the id, in whichever codebase.
func (e *Engine) Endpoint(id string) (Endpoint, bool) {
	cb, ep := e.lookup(id)
	if cb == nil {
		return Endpoint{}, false
	}
	return *ep, true
}

func (e *Engine) lookup(id string) (*codebase, *Endpoint) {
	for _, cb := range e.codebases {
		cb.mu.Lock()
		ep := cb.endpoints[id]
		cb.mu.Unlock()
		if ep != nil {
			return cb, ep
		}
	}
	return nil, nil
}

// Done is closed when the engine closes.
func (e *Engine) Done() <-chan struct{} { return e.done }

// Printf prints a report line on the engine's log (the terminal).
func (e *Engine) Printf(format string, args ...any) { e.printf(format, args...) }

func (e *Engine) printf(format string, args ...any) {
	if e.opts.Log == nil {
		return
	}
	e.logMu.Lock()
	defer e.logMu.Unlock()
	fmt.Fprintf(e.opts.Log, format, args...)
}

// RuntimeEnv is the environment the Emulator Suite gives functions,
// for a project whose services listen at the given host:port addresses
// (keys: firestore, auth, database, storage, hub, pubsub, eventarc,
// tasks; absent ones are left out): the emulator host variables,
// FUNCTIONS_EMULATOR, FIREBASE_DEBUG_MODE and its features, FIREBASE_CONFIG,
// GCLOUD_PROJECT, TZ. `pyric exec` gives the same to its command.
func RuntimeEnv(project string, addrs map[string]string) map[string]string {
	env := map[string]string{
		"GCLOUD_PROJECT":             project,
		"GOOGLE_CLOUD_QUOTA_PROJECT": project,
		"K_REVISION":                 "1",
		"PORT":                       "80",
		"FUNCTIONS_EMULATOR":         "true",
		"TZ":                         "UTC",
		"FIREBASE_DEBUG_MODE":        "true",
		// firebase-functions reads these (common/debug): callables skip
		// ID-token signature checks, HTTPS functions answer CORS.
		"FIREBASE_DEBUG_FEATURES": `{"skipTokenVerification":true,"enableCors":true}`,
	}
	for name, vars := range emulatorVars {
		if a := addrs[name]; a != "" {
			for _, v := range vars {
				if strings.HasSuffix(v, "=url") {
					env[strings.TrimSuffix(v, "=url")] = "http://" + a
				} else {
					env[v] = a
				}
			}
		}
	}
	cfg := map[string]string{"projectId": project, "storageBucket": project + ".appspot.com",
		"databaseURL": "https://" + project + ".firebaseio.com"}
	if a := addrs["database"]; a != "" {
		// The namespace the JS SDK and pyric's Realtime Database take
		// for a project's default instance (firebase-tools names it
		// after the bare project id only for demo projects, where no
		// client would use that name).
		cfg["databaseURL"] = "http://" + a + "/?ns=" + project + "-default-rtdb"
	}
	b, _ := json.Marshal(cfg)
	env["FIREBASE_CONFIG"] = string(b)
	return env
}

// emulatorVars are the variables firebase-tools sets for each running
// emulator (setEnvVarsForEmulators); "=url" marks an http:// value.
var emulatorVars = map[string][]string{
	"firestore": {"FIRESTORE_EMULATOR_HOST", "FIREBASE_FIRESTORE_EMULATOR_ADDRESS"},
	"database":  {"FIREBASE_DATABASE_EMULATOR_HOST"},
	"storage":   {"FIREBASE_STORAGE_EMULATOR_HOST", "STORAGE_EMULATOR_HOST=url"},
	"auth":      {"FIREBASE_AUTH_EMULATOR_HOST"},
	"hub":       {"FIREBASE_EMULATOR_HUB"},
	"pubsub":    {"PUBSUB_EMULATOR_HOST"},
	"eventarc":  {"CLOUD_EVENTARC_EMULATOR_HOST=url"},
	"tasks":     {"CLOUD_TASKS_EMULATOR_HOST"},
}

// LoadError is a codebase whose module could not be loaded.
type LoadError struct {
	Codebase string
	Dir      string
	Err      *ScriptError
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("functions codebase %s (%s) failed to load: %s", e.Codebase, e.Dir, e.Err.Message)
}
