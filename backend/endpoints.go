package backend

import (
	"fmt"
	"net"

	"github.com/pyric/pyric/ai"
	engine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	aiserver "github.com/pyric/pyric/server/ai"
	authserver "github.com/pyric/pyric/server/auth"
	fsserver "github.com/pyric/pyric/server/firestore"
)

// Service names: the keys of Options.Ports, Addr and `--json`.
const (
	Firestore = "firestore"
	Auth      = "auth"
	AI        = "ai"
)

// endpoint is one row of the table of services the backend serves.
type endpoint struct {
	name        string
	defaultPort int // the Emulator Suite's port, used by `pyric serve`
	what        string
	envVars     []string
	url         bool // clients take the address as a base URL (http://host:port)
	// registration adds the service to the sandbox; nil for the services
	// every sandbox holds (Firestore, Auth).
	registration func(opts *Options) service.Registration
	start        func(b *Backend, opts *Options, l net.Listener) (*running, error)
}

// endpoints is the table: one row per service, in banner order.
var endpoints = []*endpoint{
	{name: Firestore, defaultPort: 8080, what: "gRPC + REST + WebChannel", envVars: []string{"FIRESTORE_EMULATOR_HOST"}, start: startFirestore},
	{name: Auth, defaultPort: 9099, what: "Identity Toolkit REST", envVars: []string{"FIREBASE_AUTH_EMULATOR_HOST"}, start: startAuth},
	{name: AI, defaultPort: 9988, what: "Gemini REST (AI Logic)", envVars: []string{"PYRIC_AI_BASE_URL"}, url: true,
		registration: func(o *Options) service.Registration { return ai.Registration(o.AI) }, start: startAI},
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
	Indexes *engine.IndexConfig
}

// FirestoreEndpoint is the running Firestore adapter.
type FirestoreEndpoint struct {
	Server *fsserver.Server
	GRPC   *fsserver.GRPC
	Port   *server.Port
}

func startFirestore(b *Backend, opts *Options, l net.Listener) (*running, error) {
	sb := b.Sandbox
	if opts.Firestore.Indexes != nil {
		sb.Firestore().SetIndexes(opts.Firestore.Indexes)
	}
	fs := fsserver.New(fsserver.Options{Engine: sb.Firestore(), DefaultProject: b.Project})
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
	h := authserver.New(b.Sandbox.Auth(), authserver.Options{DefaultProject: b.Project})
	return &running{port: server.NewPort(l, nil, h), state: h}, nil
}

func startAI(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng, ok := sandbox.Lookup[*ai.Engine](b.Sandbox)
	if !ok {
		return nil, errNotInSandbox(AI)
	}
	return &running{port: server.NewPort(l, nil, aiserver.NewHandler(eng, aiserver.Options{DefaultProject: b.Project})), state: eng}, nil
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
