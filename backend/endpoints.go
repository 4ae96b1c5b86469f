package backend

import (
	"context"
	"fmt"
	"net"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	aiserver "github.com/pyric/pyric/server/ai"
	authserver "github.com/pyric/pyric/server/auth"
	databaseserver "github.com/pyric/pyric/server/database"
	fsserver "github.com/pyric/pyric/server/firestore"
	functionsserver "github.com/pyric/pyric/server/functions"
	messagingserver "github.com/pyric/pyric/server/messaging"
	pubsubserver "github.com/pyric/pyric/server/pubsub"
	storageserver "github.com/pyric/pyric/server/storage"
	"github.com/pyric/pyric/storage"
)

// Service names: the keys of Options.Ports, Addr and `--json`.
const (
	Firestore = "firestore"
	Auth      = "auth"
	Database  = "database"
	Storage   = "storage"
	AI        = "ai"
	Messaging = "messaging"
	Functions = "functions"
	Hosting   = "hosting"
	PubSub    = "pubsub"
	Tasks     = "tasks"
	Eventarc  = "eventarc"
)

// endpoint is one row of the table of services the backend serves.
type endpoint struct {
	name        string
	defaultPort int // the Emulator Suite's port, used by `pyric serve`
	what        string
	env         []envVar
	// registration adds the service to the sandbox; nil for an endpoint
	// that is no service of its own (Hosting).
	registration func(opts *Options) service.Registration
	start        func(b *Backend, opts *Options, l net.Listener) (*running, error)
	// off, when set, leaves the endpoint off for these options (Hosting
	// without sites).
	off func(opts *Options) bool
}

// envVar is an environment variable pointing clients at an endpoint; url
// says its value is a base URL (http://host:port), not host:port.
type envVar struct {
	name string
	url  bool
}

func hostVar(name string) envVar { return envVar{name: name} }
func urlVar(name string) envVar  { return envVar{name: name, url: true} }

// endpoints is the table: one row per service, in banner order.
var endpoints = []*endpoint{
	{name: Firestore, defaultPort: 8080, what: "gRPC + REST + WebChannel", env: []envVar{hostVar("FIRESTORE_EMULATOR_HOST")},
		registration: func(o *Options) service.Registration {
			return firestore.Registration(firestore.Options{})
		}, start: startFirestore},
	{name: Auth, defaultPort: 9099, what: "Identity Toolkit REST", env: []envVar{hostVar("FIREBASE_AUTH_EMULATOR_HOST")},
		registration: func(*Options) service.Registration { return auth.Registration }, start: startAuth},
	{name: Database, defaultPort: 9000, what: "Realtime Database WebSocket + REST", env: []envVar{hostVar("FIREBASE_DATABASE_EMULATOR_HOST")},
		registration: func(o *Options) service.Registration {
			return database.Registration(database.Options{Rules: o.DatabaseRules, RulesName: "database.rules.json"})
		}, start: startDatabase},
	{name: Storage, defaultPort: 9199, what: "Firebase v0 REST + GCS JSON/XML",
		env:          []envVar{hostVar("FIREBASE_STORAGE_EMULATOR_HOST"), urlVar("STORAGE_EMULATOR_HOST")},
		registration: func(o *Options) service.Registration { return storage.Registration(o.Storage) }, start: startStorage},
	{name: AI, defaultPort: 9988, what: "Gemini REST (AI Logic)", env: []envVar{urlVar("PYRIC_AI_BASE_URL")},
		registration: func(o *Options) service.Registration { return ai.Registration(o.AI) }, start: startAI},
	{name: Messaging, defaultPort: 9599, what: "FCM HTTP v1 + topics + inbox", env: []envVar{urlVar("PYRIC_MESSAGING_URL")},
		registration: func(*Options) service.Registration { return messaging.Registration }, start: startMessaging},
	{name: PubSub, defaultPort: 8085, what: "Pub/Sub gRPC + REST", env: []envVar{hostVar("PUBSUB_EMULATOR_HOST")},
		registration: func(*Options) service.Registration { return pubsub.Registration }, start: startPubSub},
	// Functions comes last: its workers start with every other service's
	// address in their environment. It exists only when firebase.json
	// lists codebases.
	// Tasks serves the queues of the task functions; it starts before
	// Functions so the workers' CLOUD_TASKS_EMULATOR_HOST names it.
	{name: Tasks, defaultPort: 9499, what: "Cloud Tasks queues of task functions", env: []envVar{hostVar("CLOUD_TASKS_EMULATOR_HOST")},
		off: func(o *Options) bool { return len(o.Functions.Codebases) == 0 }, start: startTasks},
	// Eventarc takes the custom events that onCustomEventPublished
	// functions receive; it starts before Functions so the workers'
	// CLOUD_EVENTARC_EMULATOR_HOST names it.
	{name: Eventarc, defaultPort: 9299, what: "Eventarc custom events of event functions", env: []envVar{urlVar("CLOUD_EVENTARC_EMULATOR_HOST")},
		off: func(o *Options) bool { return len(o.Functions.Codebases) == 0 }, start: startEventarc},
	{name: Functions, defaultPort: 5001, what: "Cloud Functions (HTTPS, callable)", env: []envVar{urlVar("PYRIC_FUNCTIONS_URL")},
		registration: func(o *Options) service.Registration { return functions.Registration(o.Functions.Options) },
		off:          func(o *Options) bool { return len(o.Functions.Codebases) == 0 }, start: startFunctions},
	// Hosting stays last: its pages name the other endpoints, and its
	// function rewrites reach the Functions endpoint's state, which must
	// not change while it serves.
	{name: Hosting, defaultPort: 5000, what: "Hosting (firebase.json sites)", start: startHosting,
		off: func(o *Options) bool { return len(o.Hosting.Sites) == 0 }},
}

// Spec describes a service the backend can serve.
type Spec struct {
	Service     string // the service name: the --json key, --<name>-port
	DefaultPort int    // the Emulator Suite's port for it
	What        string
}

// Catalog lists every service the backend serves, in banner order.
func Catalog() []Spec {
	out := make([]Spec, len(endpoints))
	for i, e := range endpoints {
		out[i] = Spec{Service: e.name, DefaultPort: e.defaultPort, What: e.what}
	}
	return out
}

// FirestoreOptions configure the Firestore endpoint.
type FirestoreOptions struct {
	// Rules is firestore.rules source loaded before serving; empty loads
	// none, so every client request is denied (admin bypasses rules).
	Rules string
	// RulesFile names the source in diagnostics (default firestore.rules).
	RulesFile string
	// Indexes turns on index enforcement with these declared indexes; nil
	// leaves every query allowed, as on the emulator.
	Indexes *firestore.IndexConfig
}

// FirestoreEndpoint is the running Firestore adapter.
type FirestoreEndpoint struct {
	Server *fsserver.Server
	GRPC   *fsserver.GRPC
	Port   *server.Port
}

func startFirestore(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*firestore.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Firestore)
	}
	if opts.Firestore.Indexes != nil {
		eng.SetIndexes(opts.Firestore.Indexes)
	}
	fs := fsserver.New(fsserver.Options{Engine: eng, DefaultProject: b.Project})
	if opts.Firestore.Rules != "" {
		name := opts.Firestore.RulesFile
		if name == "" {
			name = "firestore.rules"
		}
		if _, err := fs.Rules().Set(name, opts.Firestore.Rules); err != nil {
			return nil, fmt.Errorf("rules: %w", err)
		}
	}
	port, grpc := fsserver.NewPort(l, fs)
	return &running{port: port, drain: grpc.Drain, state: &FirestoreEndpoint{Server: fs, GRPC: grpc, Port: port}}, nil
}

// Firestore returns the running Firestore endpoint, or nil.
func (b *Backend) Firestore() *FirestoreEndpoint {
	fe, _ := b.state(Firestore).(*FirestoreEndpoint)
	return fe
}

func startAuth(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*auth.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Auth)
	}
	h := authserver.New(eng, authserver.Options{DefaultProject: b.Project})
	return &running{port: server.NewPort(l, nil, h), state: h}, nil
}

func startAI(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*ai.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(AI)
	}
	return &running{port: server.NewPort(l, nil, aiserver.NewHandler(eng, aiserver.Options{DefaultProject: b.Project})), state: eng}, nil
}

func startDatabase(b *Backend, opts *Options, l net.Listener) (*running, error) {
	db, ok := sandbox.Lookup[*database.Database](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Database)
	}
	h := databaseserver.NewHandler(db, databaseserver.Options{})
	return &running{port: server.NewPort(l, nil, h), drain: h.Close, state: db}, nil
}

func startStorage(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*storage.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Storage)
	}
	if fs, ok := sandbox.Lookup[*firestore.Engine](b.Sandbox); ok {
		eng.SetFirestore(storageserver.FirestoreLookup(fs, b.Project))
	}
	if opts.StorageRules != "" {
		if _, err := eng.SetRules("storage.rules", opts.StorageRules); err != nil {
			return nil, fmt.Errorf("rules: %w", err)
		}
	}
	return &running{port: server.NewPort(l, nil, storageserver.NewHandler(eng)), state: eng}, nil
}

func startMessaging(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*messaging.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Messaging)
	}
	h := messagingserver.NewHandler(eng, messagingserver.Options{})
	return &running{port: server.NewPort(l, nil, h), drain: h.Drain, state: eng}, nil
}

// FunctionsOptions configure the Cloud Functions endpoint.
type FunctionsOptions struct {
	// Options are the engine's; without Codebases there is no functions
	// service.
	functions.Options
	// Env is added to the environment the functions run with (e.g.
	// FIREBASE_EMULATOR_HUB, known only to the CLI).
	Env map[string]string
	// LoadInBackground makes Start return while the codebases load: the
	// functions port serves at once, an invocation arriving during the
	// load waits for it (Backend.FunctionsLoaded). Without it Start
	// returns once every codebase's first load ended.
	LoadInBackground bool
}

// startFunctions starts the functions' workers, pointed at every
// endpoint started before, and serves their URLs.
func startFunctions(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*functions.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Functions)
	}
	env := functions.RuntimeEnv(b.Project, b.addrs)
	for k, v := range opts.Functions.Env {
		env[k] = v
	}
	if err := eng.StartLoading(env); err != nil {
		return nil, err
	}
	if !opts.Functions.LoadInBackground {
		<-eng.Loaded()
	}
	if a, ok := sandbox.Lookup[*auth.Engine](b.Sandbox); ok {
		linkBlockingFunctions(a, eng, b.Project, "http://"+l.Addr().String())
	}
	if ps, ok := sandbox.Lookup[*pubsub.Engine](b.Sandbox); ok {
		linkPubSubTopics(ps, eng)
	}
	if db, ok := sandbox.Lookup[*database.Database](b.Sandbox); ok {
		// A write below a location an RTDB function watches carries
		// that location's value, which the function's snapshot shows.
		db.SetEventScope(eng.DatabaseScope)
	}
	return &running{port: server.NewPort(l, nil, functionsserver.NewHandler(eng)), state: eng}, nil
}

// startTasks serves the task functions' queues (firebase-admin's
// taskQueue().enqueue() in emulator mode).
func startTasks(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*functions.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Functions)
	}
	return &running{port: server.NewPort(l, nil, functionsserver.NewTasksHandler(eng))}, nil
}

// startEventarc serves Eventarc's publishing API (firebase-admin's
// getEventarc().channel().publish() in emulator mode).
func startEventarc(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*functions.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(Functions)
	}
	return &running{port: server.NewPort(l, nil, functionsserver.NewEventarcHandler(eng))}, nil
}

// FunctionsLoaded waits until every functions codebase's first load
// ended (loaded or failed), or ctx ends; at once without functions.
func (b *Backend) FunctionsLoaded(ctx context.Context) error {
	if eng := b.Functions(); eng != nil {
		return eng.WaitLoaded(ctx)
	}
	return nil
}

// Functions returns the running functions engine, or nil.
func (b *Backend) Functions() *functions.Engine {
	e, _ := b.state(Functions).(*functions.Engine)
	return e
}

func startPubSub(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*pubsub.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(PubSub)
	}
	srv := pubsubserver.New(eng)
	return &running{port: pubsubserver.NewPort(l, srv), drain: srv.Drain, state: eng}, nil
}

func errNotInSandbox(name string) error {
	return fmt.Errorf("the sandbox has no %s service (a sandbox given in Options.Use must be opened with backend.Services)", name)
}

func (b *Backend) state(name string) any {
	for _, r := range b.endpoints {
		if r.spec.name == name {
			return r.state
		}
	}
	return nil
}
