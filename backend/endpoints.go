package backend

import (
	"fmt"
	"net"

	engine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	authserver "github.com/pyric/pyric/server/auth"
	fsserver "github.com/pyric/pyric/server/firestore"
)

// Service names: the keys of Options.Ports, Addr and `--json`.
const (
	Firestore = "firestore"
	Auth      = "auth"
)

// endpoint is one row of the table of services the backend serves.
type endpoint struct {
	name        string
	defaultPort int // the Emulator Suite's port, used by `pyric serve`
	what        string
	envVars     []string
	// registration adds the service to the sandbox; nil for the services
	// every sandbox holds (Firestore, Auth).
	registration *service.Registration
	start        func(b *Backend, opts *Options, l net.Listener) (*running, error)
}

// endpoints is the table: one row per service, in banner order.
var endpoints = []*endpoint{
	{name: Firestore, defaultPort: 8080, what: "gRPC + REST + WebChannel", envVars: []string{"FIRESTORE_EMULATOR_HOST"}, start: startFirestore},
	{name: Auth, defaultPort: 9099, what: "Identity Toolkit REST", envVars: []string{"FIREBASE_AUTH_EMULATOR_HOST"}, start: startAuth},
}

// DefaultPorts are the Emulator Suite's ports, by service.
func DefaultPorts() map[string]int {
	out := map[string]int{}
	for _, e := range endpoints {
		out[e.name] = e.defaultPort
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

func (b *Backend) state(name string) any {
	for _, r := range b.endpoints {
		if r.spec.name == name {
			return r.state
		}
	}
	return nil
}
