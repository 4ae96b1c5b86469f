// Package backend starts the whole of pyric in-process: a sandbox with
// every service, and every service's wire adapter on its own port, wired
// exactly as `pyric serve` wires them. It is the one entry point that
// `pyric serve`, the test helpers (fstest, authtest) and Go tests embedding
// pyric share:
//
//	b, err := backend.Start(backend.Options{}) // loopback, free ports, in memory
//	defer b.Shutdown(context.Background())
//	os.Setenv("FIRESTORE_EMULATOR_HOST", b.Addr(backend.Firestore))
//
// A new service is its package (an engine with a service.Registration),
// its wire adapter and one entry in the endpoints table (endpoints.go):
// its sandbox registration, default port and adapter. Nothing else has
// to change. Ports, banner addresses and shutdown follow from the table;
// the sandbox gives the service its clock, ids, events and durable
// storage, resets it and keeps it in snapshots; and the tools loop over
// the capabilities it implements (package sandbox/service): exports and
// imports (snapshot), session captures, the MCP server's state
// resources, the Studio's pages, verify's replays. TestServiceContract
// runs the shared contract suite (servicetest.Run: reset, snapshot and
// restore, export and import, reopening after kill -9, typed state,
// live rules, replay, Studio pages) on every registration of the table,
// with the sample state the new service adds there; TestToyServiceInEveryTool
// shows a service no tool knows appearing in each of them.
package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/storage"
)

// Options configure Start.
type Options struct {
	// Sandbox configures the sandbox Start opens (project, data directory,
	// clock, determinism). Its Services are added after the built-in ones.
	Sandbox sandbox.Options
	// Use serves an existing sandbox instead of opening one (Sandbox is
	// then ignored, and it must already hold every built-in service);
	// Shutdown does not close it.
	Use *sandbox.Sandbox
	// Host is the interface to listen on (default 127.0.0.1).
	Host string
	// Ports maps a service name (Firestore, Auth, ...) to its port: 0 or
	// absent picks a free port; Disabled does not start that endpoint.
	Ports map[string]int
	// Listeners maps a service name to a listener to serve on instead of
	// opening one (tests that restart a server on the same address).
	Listeners map[string]net.Listener
	// Firestore configures the Firestore endpoint.
	Firestore FirestoreOptions
	// DatabaseRules is database.rules.json source every namespace starts
	// with; empty loads none (everything but admin is denied).
	DatabaseRules string
	// StorageRules is storage.rules source loaded before serving; empty
	// loads none (every client request is denied; admin bypasses rules).
	StorageRules string
	// Storage configures the Cloud Storage engine.
	Storage storage.Options
	// AI configures the AI Logic engine (scripts, API keys, forwarding).
	AI ai.Options
	// Functions configures Cloud Functions: absent unless it lists
	// codebases.
	Functions FunctionsOptions
	// Hosting configures the Hosting sites (none: Hosting is off).
	Hosting HostingOptions
	// Policy is the origin and host policy of every port (nil: loopback
	// origins and hosts only).
	Policy *server.Policy
}

// Disabled as a port leaves that endpoint off.
const Disabled = -1

// Backend is a running pyric.
type Backend struct {
	// Sandbox owns every engine.
	Sandbox *sandbox.Sandbox
	// Project is the default project.
	Project string

	endpoints []*running
	addrs     map[string]string // every bound endpoint's address, by service
	ownsSB    bool
	errc      chan error
	once      sync.Once
	shutErr   error
}

// running is one started endpoint.
type running struct {
	spec  *endpoint
	port  *server.Port
	state any // the adapter's own handle (e.g. *FirestoreEndpoint)
	drain func()
	addr  string
}

// Start opens the sandbox (unless Options.Use), creates every service and
// starts every endpoint. On error nothing is left running.
func Start(opts Options) (*Backend, error) {
	b := &Backend{errc: make(chan error, len(endpoints))}
	sb := opts.Use
	if sb == nil {
		so := opts.Sandbox
		so.Services = append(Services(&opts), so.Services...)
		var err error
		if sb, err = sandbox.Open(so); err != nil {
			return nil, err
		}
		b.ownsSB = true
	}
	b.Sandbox, b.Project = sb, sb.Project()
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	// Every port is bound first, so each service's start knows every
	// address (the functions' workers get them all in their
	// environment); then Functions starts first, its workers loading
	// while the other adapters set up, and the rest in table order.
	type bound struct {
		spec *endpoint
		l    net.Listener
	}
	var binds []bound
	closeFrom := func(i int) {
		for _, bd := range binds[i:] {
			bd.l.Close()
		}
	}
	b.addrs = map[string]string{}
	for _, spec := range endpoints {
		port, set := opts.Ports[spec.name]
		if port == Disabled || (spec.off != nil && spec.off(&opts)) {
			continue
		}
		if spec.registration != nil && sb.Service(spec.name) == nil {
			continue // a sandbox given in Options.Use without this service
		}
		if !set {
			port = 0
		}
		l := opts.Listeners[spec.name]
		if l == nil {
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			var err error
			if l, err = net.Listen("tcp", addr); err != nil {
				closeFrom(0)
				b.stop(context.Background())
				return nil, &ListenError{Service: spec.name, Addr: addr, Err: err}
			}
		}
		binds = append(binds, bound{spec: spec, l: l})
		b.addrs[spec.name] = l.Addr().String()
	}
	sort.SliceStable(binds, func(i, j int) bool { return binds[i].spec.name == Functions && binds[j].spec.name != Functions })
	for i, bd := range binds {
		spec, l := bd.spec, bd.l
		r, err := spec.start(b, &opts, l)
		if err != nil {
			closeFrom(i)
			b.stop(context.Background())
			return nil, fmt.Errorf("backend: start %s: %w", spec.name, err)
		}
		r.spec, r.addr = spec, l.Addr().String()
		r.port.SetPolicy(opts.Policy)
		b.endpoints = append(b.endpoints, r)
		go func() {
			if err := r.port.Serve(); err != nil {
				b.errc <- fmt.Errorf("%s: %w", spec.name, err)
			}
		}()
	}
	// The endpoints in table (banner) order.
	sort.SliceStable(b.endpoints, func(i, j int) bool {
		return slices.Index(endpoints, b.endpoints[i].spec) < slices.Index(endpoints, b.endpoints[j].spec)
	})
	return b, nil
}

// Services are the sandbox registrations of the services beyond Firestore
// and Auth (which every sandbox holds), configured from opts: a sandbox
// given in Options.Use is opened with them.
func Services(opts *Options) []service.Registration {
	var out []service.Registration
	for _, e := range endpoints {
		if e.registration != nil {
			if e.off == nil || !e.off(opts) {
				out = append(out, e.registration(opts))
			}
		}
	}
	return out
}

// ListenError is a port that could not be opened.
type ListenError struct {
	Service string
	Addr    string
	Err     error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s cannot listen on %s: %v", e.Service, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// Addr returns the host:port a service's endpoint listens on ("" when it
// is not running): the form FIRESTORE_EMULATOR_HOST and its siblings take.
func (b *Backend) Addr(service string) string {
	for _, r := range b.endpoints {
		if r.spec.name == service {
			return r.addr
		}
	}
	return ""
}

// Endpoint describes one running endpoint.
type Endpoint struct {
	Service string // the service name (the --json key)
	Addr    string
	What    string // what the port speaks, for the banner
	// Env are the environment variables that point clients here, with
	// their values (host:port, or a base URL for clients that take one).
	Env []EnvVar
}

// EnvVar is one environment variable and its value.
type EnvVar struct {
	Name, Value string
}

// Endpoints lists the running endpoints in a stable order.
func (b *Backend) Endpoints() []Endpoint {
	out := make([]Endpoint, 0, len(b.endpoints))
	for _, r := range b.endpoints {
		e := Endpoint{Service: r.spec.name, Addr: r.addr, What: r.spec.what}
		for _, v := range r.spec.env {
			val := r.addr
			if v.url {
				val = "http://" + r.addr
			}
			e.Env = append(e.Env, EnvVar{Name: v.name, Value: val})
		}
		out = append(out, e)
	}
	return out
}

// Rules returns the live rules of a running service that has rules
// (one implementing service.LiveRules: Firestore, Storage, the Realtime
// Database), or nil: what `pyric serve` hot-reloads from the service's
// rules file.
func (b *Backend) Rules(name string) service.LiveRules {
	for _, r := range b.endpoints {
		if r.spec.name == name {
			lr, _ := b.Sandbox.Service(name).(service.LiveRules)
			return lr
		}
	}
	return nil
}

// Err delivers the first error of an endpoint that stopped serving on
// its own.
func (b *Backend) Err() <-chan error { return b.errc }

// Shutdown stops every endpoint cleanly (open streams end, in-flight
// requests finish until ctx ends) and closes the sandbox when Start opened
// it. It is safe to call more than once.
func (b *Backend) Shutdown(ctx context.Context) error {
	b.once.Do(func() { b.shutErr = b.stop(ctx) })
	return b.shutErr
}

func (b *Backend) stop(ctx context.Context) error {
	for _, r := range b.endpoints {
		if r.drain != nil {
			r.drain()
		}
	}
	var errs []error
	for _, r := range b.endpoints {
		if err := r.port.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, err)
		}
	}
	if b.ownsSB {
		errs = append(errs, b.Sandbox.Close())
	}
	return errors.Join(errs...)
}
