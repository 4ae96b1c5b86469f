// Package sandbox owns Pyric's engines for one running backend: the
// services registered through Options.Services (the backend registers
// Firestore, Auth, the Realtime Database, Cloud Storage, Messaging, AI
// Logic, Pub/Sub and Functions, one row each), the injectable clock, id
// and random sources, the event bus with its history, reset, JSON
// snapshots and crash-safe persistence in one embedded store.
//
// A new service is a package implementing service.Service with a
// service.Registration (see package sandbox/service). Given to Open in
// Options.Services, it gets: the sandbox clock, ids and random source
// (deterministic when asked), the event stream, its own durable Bucket
// and write-ahead-logged Log in the data directory's store (nil in
// memory; an acknowledged write survives kill -9), reset with the rest of
// the backend (bucket and log cleared, then Reset), and a key in every
// snapshot ({"services": {name: state}}). By implementing the optional
// capabilities of sandbox/service it also gets a part in Emulator Suite
// exports and imports (Exporter, Importer), its own state in session
// captures (Capturer, or Records appended one by one), a checked
// snapshot load (StateChecker), a state resource in the MCP server
// (Describer), pages in the Studio's navigation (Studio) and its recorded
// requests decided again by verify (Replayer). Nothing in this package,
// in snapshot, in capture's state, in the Studio's route table or in the
// MCP server changes for it; servicetest.Run is the contract it is
// tested against. Lookup finds it, or the engine it wraps, by type.
package sandbox

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/memlimit"
	"github.com/pyric/pyric/sandbox/service"
)

// DefaultProject is the project id used when Options.Project is empty.
const DefaultProject = service.DefaultProject

// Options configure a Sandbox.
type Options struct {
	// Project is the default project for the admin plane and snapshots.
	Project string
	// DataDir keeps state in DataDir/pyric.db (bbolt); empty keeps it in
	// memory only.
	DataDir string
	// Sync is when the store forces writes to disk (SyncBatch, the
	// default: survive kill -9, sync every SyncInterval; SyncAlways: sync
	// every commit batch). See ParseSyncMode for the flag values.
	Sync SyncMode
	// Deterministic replaces the clock and the id source with seeded ones,
	// so that the same sequence of calls yields bit-identical state, events
	// and snapshots.
	Deterministic bool
	// Seed seeds the deterministic id source.
	Seed uint64
	// Start is the deterministic clock's first instant (default 2026-01-01).
	Start time.Time
	// Now overrides the clock (ignored when Deterministic).
	Now func() time.Time
	// History bounds the event history (0: event.DefaultHistory).
	History int
	// Warn receives one-line notices about the data dir: a torn last
	// write dropped at start, a damaged object found; nil writes them to
	// standard error.
	Warn func(string)
	// Services are the sandbox's services, created in order (the
	// backend's are backend.Services); each name must be unique. The
	// sandbox adds none of its own: without Services it holds none.
	Services []service.Registration
}

// Sandbox is one backend: engines, events, clock, ids and storage.
type Sandbox struct {
	opts  Options
	now   func() time.Time
	newID func() string
	bus   *event.Bus
	store *Store
	// outbox is the store's Outbox (nil in memory).
	outbox *outbox
	mu     sync.Mutex

	// services in creation order (Options.Services).
	services []service.Service
}

// Open creates a sandbox, restoring persisted state when DataDir is set.
func Open(opts Options) (*Sandbox, error) {
	if opts.Project == "" {
		opts.Project = DefaultProject
	}
	if opts.Warn == nil {
		opts.Warn = func(msg string) { fmt.Fprintln(os.Stderr, "pyric: "+msg) }
	}
	sb := &Sandbox{opts: opts}
	switch {
	case opts.Deterministic:
		start := opts.Start
		if start.IsZero() {
			start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		clock := &stepClock{t: start}
		sb.now = clock.Now
		rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
		var mu sync.Mutex
		sb.newID = func() string {
			mu.Lock()
			defer mu.Unlock()
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			b := make([]byte, 20)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			return string(b)
		}
	default:
		sb.now = opts.Now
		if sb.now == nil {
			sb.now = time.Now
		}
		sb.newID = randomID
	}
	sb.bus = event.NewBus(event.Options{History: opts.History, Now: sb.now})
	defer memlimit.PauseGC()()
	if opts.DataDir != "" {
		st, err := OpenStoreWith(opts.DataDir, StoreOptions{Sync: opts.Sync, Warn: opts.Warn})
		if err != nil {
			return nil, err
		}
		sb.store = st
		sb.outbox = newOutbox(st, sb.now)
	}
	for _, r := range opts.Services {
		if err := sb.addService(r); err != nil {
			sb.Close()
			return nil, err
		}
	}
	if sb.store != nil {
		sb.store.Opened()
	}
	return sb, nil
}

// env is the environment a service created by this sandbox receives.
func (sb *Sandbox) env(name string) service.Env {
	env := service.Env{Project: sb.opts.Project, Now: sb.now, NewID: sb.newID, Events: sb.bus, Warn: sb.opts.Warn, Rand: crand.Reader}
	if sb.opts.Deterministic {
		env.Rand = seededRand(sb.opts.Seed, name)
	}
	if sb.store != nil {
		env.Bucket = sb.store.Bucket(name)
		env.Log = sb.store.Log(name)
		env.DataDir = sb.opts.DataDir
		env.SyncEach = sb.store.Mode() == SyncAlways
		env.Outbox = sb.outbox
	}
	return env
}

// addService creates a registered service with its own bucket.
func (sb *Sandbox) addService(r service.Registration) error {
	if r.Name == "" || r.New == nil {
		return errors.New("sandbox: a service registration needs a name and a factory")
	}
	if sb.Service(r.Name) != nil {
		return fmt.Errorf("sandbox: two services named %q", r.Name)
	}
	svc, err := r.New(sb.env(r.Name))
	var damaged *service.DamagedError
	if errors.As(err, &damaged) && sb.store != nil {
		return &DamagedStoreError{Path: sb.store.db.Path(), Problem: damaged.Problem}
	}
	if err != nil {
		return fmt.Errorf("sandbox: create %s: %w", r.Name, err)
	}
	if svc.Name() != r.Name {
		return fmt.Errorf("sandbox: service registered as %q names itself %q", r.Name, svc.Name())
	}
	sb.services = append(sb.services, svc)
	return nil
}

// Services returns every service in creation order.
func (sb *Sandbox) Services() []service.Service {
	return append([]service.Service(nil), sb.services...)
}

// Service returns the service with that name, or nil.
func (sb *Sandbox) Service(name string) service.Service {
	for _, s := range sb.services {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// Lookup returns the sandbox's service, or the engine a service wraps
// (service.Wrapper), of type T (e.g. sandbox.Lookup[*firestore.Service](sb),
// sandbox.Lookup[*database.Database](sb), sandbox.Lookup[*auth.Engine](sb)).
// It is how a caller reaches a service's own API: the sandbox names no
// service.
func Lookup[T any](sb *Sandbox) (T, bool) {
	for _, s := range sb.services {
		if t, ok := s.(T); ok {
			return t, true
		}
		if w, ok := s.(service.Wrapper); ok {
			if t, ok := w.Unwrap().(T); ok {
				return t, true
			}
		}
	}
	var zero T
	return zero, false
}

// randomID mints a 20-character id from crypto/rand (the alphabet of
// Firestore's auto ids).
func randomID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var r [20]byte
	_, _ = crand.Read(r[:])
	for i := range r {
		r[i] = alphabet[int(r[i])%len(alphabet)]
	}
	return string(r[:])
}

// Project is the sandbox's default project.
func (sb *Sandbox) Project() string { return sb.opts.Project }

// seededRand is a deterministic sandbox's random source for the service
// name: its own ChaCha8 stream from the seed and the name, so that one
// service's draws do not shift another's.
func seededRand(seed uint64, name string) io.Reader {
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	copy(key[8:], name)
	return &lockedReader{r: rand.NewChaCha8(key)}
}

// lockedReader makes a reader safe for concurrent use.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// stepClock is the deterministic clock: every reading advances it by 1 ms.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// Close closes every service that holds resources, then the persistent
// store. In-memory state stays readable.
func (sb *Sandbox) Close() error {
	var errs []error
	for i := len(sb.services) - 1; i >= 0; i-- {
		if c, ok := sb.services[i].(service.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	if sb.store != nil {
		errs = append(errs, sb.store.Close())
	}
	return errors.Join(errs...)
}

func (sb *Sandbox) closeStore() {
	if sb.store != nil {
		sb.store.Close()
	}
}

// Events returns the event bus (subscribe, history).
func (sb *Sandbox) Events() *event.Bus { return sb.bus }

// Now reads the sandbox clock.
func (sb *Sandbox) Now() time.Time { return sb.now() }

// NewID mints an id from the sandbox's id source.
func (sb *Sandbox) NewID() string { return sb.newID() }

// Reset wipes all data of every service (memory and disk) and the event
// history; the boundary event is emitted first and subscriptions survive.
func (sb *Sandbox) Reset() error {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.bus.Emit(event.Event{Kind: event.KindBoundary, Service: "sandbox", Actor: event.Actor{Kind: event.ActorSystem},
		Boundary: &event.Boundary{Boundary: event.Reset, PriorEvents: sb.bus.Len()}})
	if err := sb.resetServices(); err != nil {
		return err
	}
	sb.bus.Clear()
	return nil
}

// resetServices clears the store, then every service's memory.
func (sb *Sandbox) resetServices() error {
	if sb.store != nil {
		if err := sb.store.Clear(); err != nil {
			return err
		}
	}
	var errs []error
	for _, s := range sb.services {
		if err := s.Reset(); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: reset %s: %w", s.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// ErrSnapshot wraps every snapshot decoding error.
var ErrSnapshot = errors.New("invalid snapshot")
