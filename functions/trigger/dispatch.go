package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/pubsub"
)

// Defaults for Options.
const (
	// DefaultQueueLimit bounds the changes and deliveries waiting.
	DefaultQueueLimit = 100_000
	// DefaultRetryAttempts is how often a function with retry set is
	// called for one event before the event is given up (production
	// retries for up to 7 days; a local run wants the failure shown).
	DefaultRetryAttempts = 5
	// DefaultRetryBackoff is the wait before the first retry; it doubles
	// up to DefaultRetryMaxBackoff.
	DefaultRetryBackoff    = 200 * time.Millisecond
	DefaultRetryMaxBackoff = 5 * time.Second
)

// Cause is what led to a delivery, in the context DeliverFunc receives
// (CauseOf): the event of the change, the params the function's
// wildcards captured and the attempt (1, then 2… for retries), so an
// invocation can be shown as caused by the write.
type Cause struct {
	EventID string // the event's ID ("evt-<seq>")
	Seq     uint64
	Service string
	Path    string
	Params  map[string]string
	Attempt int
}

type causeKey struct{}

// CauseOf returns the cause of the delivery ctx was made for.
func CauseOf(ctx context.Context) (Cause, bool) {
	c, ok := ctx.Value(causeKey{}).(Cause)
	return c, ok
}

// DeliverFunc invokes function fnID with one payload and returns when
// the invocation finished; an error is a failed invocation (the function
// threw, timed out, or could not be reached).
type DeliverFunc func(ctx context.Context, fnID string, payload []byte) error

// Options configure a Dispatcher.
type Options struct {
	Env     Env
	Deliver DeliverFunc
	// QueueLimit bounds the changes not yet matched plus the deliveries
	// not yet made; past it a change is dropped and reported through
	// Logf (and counted in Stats.Dropped). 0 means DefaultQueueLimit.
	QueueLimit int
	// RetryAttempts, RetryBackoff and RetryMaxBackoff shape the retries
	// of functions with Retry set; zero values mean the defaults.
	RetryAttempts   int
	RetryBackoff    time.Duration
	RetryMaxBackoff time.Duration
	// Logf reports failures and drops; nil means log.Printf.
	Logf func(format string, args ...any)
	// Held starts the dispatcher holding the changes it takes, matched
	// against nothing, until Release: the changes committed while the
	// functions first load (the ports serve before they do) fire the
	// functions that load instead of none. While held the Realtime
	// Database's event scope is its root (DatabaseScope), since any
	// location may turn out to be watched.
	Held bool
	// Journal, when set, durably records each delivery once its change
	// is matched and until it is made or given up, so that deliveries a
	// crash interrupted are made after the next start (Redeliver): at
	// least once, as production delivers. A change held in the sandbox's
	// outbox (event.Event.Held; see Wants) is taken in the same record
	// as its deliveries.
	Journal Journal
}

// Journal keeps the deliveries matched and not yet made, across a crash
// of the process.
type Journal interface {
	// Pending durably records deliveries before any is made and, in the
	// same durable write, that the held changes (their event.Event.Held
	// keys) they were matched from are taken.
	Pending(ps []Pending, taken []string) error
	// Settled records that the delivery of key was made, or given up.
	Settled(key string)
}

// Pending is a delivery a Journal keeps: the function, its payload and
// what caused it, under a key unique across the process's runs that
// sorts in the order the deliveries were matched.
type Pending struct {
	Key      string            `json:"-"`
	Function string            `json:"function"`
	Params   map[string]string `json:"params,omitempty"`
	Payload  json.RawMessage   `json:"payload"`
	Cause    Cause             `json:"cause"`
}

// Stats counts what a Dispatcher did.
type Stats struct {
	Matched   uint64 // deliveries created
	Delivered uint64 // invocations that succeeded
	Failed    uint64 // deliveries given up (after their retries)
	Retried   uint64 // invocations repeated
	Dropped   uint64 // changes or deliveries dropped past QueueLimit
	Errors    uint64 // changes whose payload could not be built
}

// Dispatcher turns committed changes into function invocations: Tap
// receives every event (register it with event.Bus.Tap), a matcher
// goroutine builds the deliveries of the current functions, and each
// function's deliveries run one after another, in the order the changes
// were committed, so a function sees a document's versions in order. A
// failed invocation never blocks or loses the next event.
type Dispatcher struct {
	opts Options

	mu      sync.Mutex
	cond    *sync.Cond
	fns     []Function
	events  []event.Event
	queues  map[string]*fnQueue
	pending int // events + queued deliveries + taken
	// taken are the Held keys of changes dropped or matched to nothing
	// whose taking the matcher has not yet recorded.
	taken   []string
	stats   Stats
	closed  bool
	held    atomic.Bool                // the changes wait for Release
	current atomic.Pointer[[]Function] // fns, for DatabaseScope
	// services are the services whose changes fns can fire on, for Wants.
	services atomic.Pointer[map[string]bool]
	// topics are the Pub/Sub topics (full names) the functions listen on:
	// a publish to another is not held.
	topics atomic.Pointer[map[string]bool]
	// run0 and keys make Journal keys: the dispatcher's start time (in
	// ns, zero-padded so keys sort) and a counter.
	run0   int64
	keys   atomic.Uint64
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// queued is a delivery waiting in its function's queue; key is its
// Journal key ("" without a Journal).
type queued struct {
	Delivery
	cause Cause
	key   string
}

type fnQueue struct {
	items   []queued
	retry   bool
	running bool
}

// NewDispatcher starts a dispatcher with no functions; Close stops it.
func NewDispatcher(opts Options) *Dispatcher {
	if opts.QueueLimit <= 0 {
		opts.QueueLimit = DefaultQueueLimit
	}
	if opts.RetryAttempts <= 0 {
		opts.RetryAttempts = DefaultRetryAttempts
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = DefaultRetryBackoff
	}
	if opts.RetryMaxBackoff <= 0 {
		opts.RetryMaxBackoff = DefaultRetryMaxBackoff
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	d := &Dispatcher{opts: opts, queues: map[string]*fnQueue{}, run0: time.Now().UnixNano()}
	d.held.Store(opts.Held)
	d.cond = sync.NewCond(&d.mu)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.wg.Add(1)
	go d.match()
	return d
}

// SetFunctions replaces the functions changes are matched against (a
// reload). Changes already matched keep their deliveries.
func (d *Dispatcher) SetFunctions(fns []Function) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fns = append([]Function(nil), fns...)
	snapshot := d.fns
	d.current.Store(&snapshot)
	services, topics := map[string]bool{}, map[string]bool{}
	for _, f := range d.fns {
		services[serviceOf(f)] = true
		if t := PubSubTopic(f, d.opts.Env.Project); t != "" {
			topics[t] = true
		}
	}
	d.services.Store(&services)
	d.topics.Store(&topics)
	for _, f := range d.fns {
		if q := d.queues[f.ID]; q != nil {
			q.retry = f.Retry
		}
	}
}

// Release ends the hold of Options.Held: the changes taken meanwhile are
// matched against the functions set now (dropped when there are none).
func (d *Dispatcher) Release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.held.Swap(false) {
		return
	}
	if len(d.fns) == 0 {
		d.pending -= len(d.events)
		for _, ev := range d.events {
			d.takeLocked(ev)
		}
		clear(d.events)
		d.events = d.events[:0]
	}
	d.cond.Broadcast()
}

// takeLocked notes that a held change was dealt with without deliveries
// (d.mu held): the matcher records it taken.
func (d *Dispatcher) takeLocked(ev event.Event) {
	if ev.Held != "" && d.opts.Journal != nil {
		d.taken = append(d.taken, ev.Held)
		d.pending++
		d.cond.Signal()
	}
}

// Wants reports whether ev is a change the dispatcher may deliver, for
// the sandbox's outbox to hold with its commit (service.Outbox.Want):
// one that can fire a trigger while the dispatcher holds the changes,
// else a change of a service some function watches (of Pub/Sub, a
// publish to a topic some function listens on). It takes no lock, since
// the outbox asks on the committing goroutine.
func (d *Dispatcher) Wants(ev *event.Event) bool {
	if !relevant(*ev) {
		return false
	}
	if d.held.Load() {
		return true
	}
	services := d.services.Load()
	if services == nil || !(*services)[ev.Service] {
		return false
	}
	if ev.Service == pubsub.ServiceName {
		// A publish fires only the functions on its topic (the
		// event's Path).
		topics := d.topics.Load()
		return topics != nil && (*topics)[ev.Path]
	}
	return true
}

// serviceOf is the service whose changes f fires on (the Service of
// their events).
func serviceOf(f Function) string {
	if f.Channel != "" || OnGoogleChannel(f) {
		return EventarcService
	}
	switch kindOf(f.EventType) {
	case kindFirestoreV1, kindFirestoreV2:
		return "firestore"
	case kindDatabaseV1, kindDatabaseV2:
		return "database"
	case kindStorageV1, kindStorageV2:
		return "storage"
	case kindAuthV1, kindAuthV2:
		return "auth"
	case kindPubSubV1, kindPubSubV2:
		return pubsub.ServiceName
	}
	return ""
}

// Resume takes the changes an earlier run held in the outbox and never
// took (service.Outbox.Left), before any change of this run: they are
// matched once the functions are set, as if just committed. Their
// causes name no event: the earlier run's event ids name other events
// in this run.
func (d *Dispatcher) Resume(evs []event.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || len(evs) == 0 {
		return
	}
	old := make([]event.Event, 0, len(evs)+len(d.events))
	for _, ev := range evs {
		ev.ID, ev.Seq = "", 0
		old = append(old, ev)
	}
	d.events = append(old, d.events...)
	d.pending += len(evs)
	d.cond.Broadcast()
}

// DatabaseScope is the Realtime Database engine's event scope
// (database.Database.SetEventScope(d.DatabaseScope)): for a write at keys
// in instance ns, the depth of the shallowest location above it that a
// current function watches, so the write's event carries that
// location's whole value; -1 when none does.
func (d *Dispatcher) DatabaseScope(ns string, keys []string) int {
	if d.held.Load() {
		return 0
	}
	fns := d.current.Load()
	if fns == nil {
		return -1
	}
	depth := -1
	for _, f := range *fns {
		k := kindOf(f.EventType)
		if k != kindDatabaseV1 && k != kindDatabaseV2 {
			continue
		}
		pat, _, ok := databaseFilter(f, d.opts.Env, ns)
		if !ok {
			continue
		}
		for n := 0; n < len(keys) && (depth < 0 || n < depth); n++ {
			if _, ok := pat.Match(keys[:n]); ok {
				depth = n
				break
			}
		}
	}
	return depth
}

// Functions returns the current functions.
func (d *Dispatcher) Functions() []Function {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Function(nil), d.fns...)
}

// relevant reports whether an event can fire a trigger at all.
func relevant(ev event.Event) bool {
	switch ev.Kind {
	case event.KindCommit:
		return ev.Service == "firestore" || ev.Service == "database"
	case event.KindMutation:
		// Of Auth's changes only a user's creation (not an import's)
		// and deletion fire: a sign-in, say, would only be held in the
		// outbox and taken for nothing.
		if ev.Service == "auth" {
			m := ev.Mutation
			return m != nil && (m.Op == authOpCreate && m.Note != authNoteImport || m.Op == authOpDelete)
		}
		return ev.Service == "storage" ||
			(ev.Service == pubsub.ServiceName && ev.Method == pubsub.OpPublish) ||
			(ev.Service == EventarcService && ev.Method == OpPublishEvents)
	}
	return false
}

// Tap takes one event; it only enqueues, so it may be called inside
// event.Bus.Emit (bus.Tap(d.Tap)).
func (d *Dispatcher) Tap(ev event.Event) {
	if !relevant(ev) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // a held change stays held, for the next run
	}
	if len(d.fns) == 0 && !d.held.Load() {
		d.takeLocked(ev)
		return // nothing can fire: no function is loaded
	}
	if d.pending >= d.opts.QueueLimit {
		d.stats.Dropped++
		if d.stats.Dropped == 1 || d.stats.Dropped%1000 == 0 {
			d.opts.Logf("functions: trigger queue full (%d waiting): dropped the %s change of %s (%d dropped so far)", d.pending, ev.Service, ev.Path, d.stats.Dropped)
		}
		return
	}
	d.pending++
	d.events = append(d.events, ev)
	d.cond.Signal()
}

// match is the matcher goroutine.
func (d *Dispatcher) match() {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		for (len(d.events) == 0 || d.held.Load()) && len(d.taken) == 0 && !d.closed {
			d.cond.Wait()
		}
		if d.closed {
			d.mu.Unlock()
			return
		}
		if taken := d.taken; len(taken) > 0 {
			d.taken = nil
			d.mu.Unlock()
			d.journal(nil, taken)
			d.mu.Lock()
			d.pending -= len(taken)
			d.cond.Broadcast()
			d.mu.Unlock()
			continue
		}
		ev := d.events[0]
		d.events[0] = event.Event{}
		d.events = d.events[1:]
		fns := d.fns
		d.mu.Unlock()

		var all []queued
		for _, f := range fns {
			ds, err := Deliveries(f, ev, d.opts.Env)
			if err != nil {
				d.mu.Lock()
				d.stats.Errors++
				d.mu.Unlock()
				d.opts.Logf("functions: %s: %v", f.ID, err)
			}
			for _, del := range ds {
				all = append(all, queued{Delivery: del, cause: Cause{EventID: ev.ID, Seq: ev.Seq, Service: ev.Service, Path: ev.Path, Params: del.Params}})
			}
		}
		var taken []string
		if ev.Held != "" {
			taken = []string{ev.Held}
		}
		d.journal(all, taken)
		d.mu.Lock()
		d.pending--
		d.enqueueLocked(all)
		d.cond.Broadcast()
		d.mu.Unlock()
	}
}

// journal gives each delivery its key and records them in the Journal
// (one record for a change's deliveries, and the taking of the held
// change they came from) before any is made. A Journal that fails is
// reported: the deliveries are still made, but a crash would lose them
// (a held change stays held, and is matched again at the next start).
func (d *Dispatcher) journal(qs []queued, taken []string) {
	if d.opts.Journal == nil || len(qs) == 0 && len(taken) == 0 {
		return
	}
	ps := make([]Pending, len(qs))
	for i := range qs {
		qs[i].key = fmt.Sprintf("%020d-%010d", d.run0, d.keys.Add(1))
		ps[i] = Pending{Key: qs[i].key, Function: qs[i].Function, Params: qs[i].Params, Payload: qs[i].Payload, Cause: qs[i].cause}
	}
	if err := d.opts.Journal.Pending(ps, taken); err != nil {
		if len(qs) == 0 {
			d.opts.Logf("functions: could not record that %d held change(s) were dealt with (the next start matches them again): %v", len(taken), err)
			return
		}
		d.opts.Logf("functions: could not record the pending deliveries of the %s change of %s (a crash now would lose them): %v", qs[0].cause.Service, qs[0].cause.Path, err)
		for i := range qs {
			qs[i].key = ""
		}
	}
}

// enqueueLocked appends deliveries to their functions' queues (d.mu
// held), starting a runner for each idle queue.
func (d *Dispatcher) enqueueLocked(qs []queued) {
	retry := map[string]bool{}
	for _, f := range d.fns {
		retry[f.ID] = f.Retry
	}
	for _, del := range qs {
		if d.pending >= d.opts.QueueLimit {
			d.stats.Dropped++
			d.opts.Logf("functions: trigger queue full: dropped a delivery to %s", del.Function)
			continue
		}
		q := d.queues[del.Function]
		if q == nil {
			q = &fnQueue{}
			d.queues[del.Function] = q
		}
		q.retry = retry[del.Function]
		q.items = append(q.items, del)
		d.pending++
		d.stats.Matched++
		if !q.running {
			q.running = true
			d.wg.Add(1)
			go d.run(del.Function, q)
		}
	}
}

// Redeliver queues deliveries a Journal kept from an earlier run (in
// key order), under their keys: each is made once more and then
// settled. Their causes keep the earlier run's service and path but no
// event: the earlier run's event ids name other events in this run.
func (d *Dispatcher) Redeliver(ps []Pending) {
	qs := make([]queued, 0, len(ps))
	for _, p := range ps {
		c := p.Cause
		c.EventID, c.Seq, c.Attempt = "", 0, 0
		qs = append(qs, queued{Delivery: Delivery{Function: p.Function, Params: p.Params, Payload: p.Payload}, cause: c, key: p.Key})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.enqueueLocked(qs)
	d.cond.Broadcast()
}

// run delivers one function's queue in order; it exits when the queue is
// empty (the matcher starts it again).
func (d *Dispatcher) run(id string, q *fnQueue) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		if len(q.items) == 0 || d.closed {
			q.running = false
			d.cond.Broadcast()
			d.mu.Unlock()
			return
		}
		del := q.items[0]
		q.items[0] = queued{}
		q.items = q.items[1:]
		retry := q.retry
		d.mu.Unlock()

		err := d.deliver(id, del, retry)
		// Made or given up: settled. A delivery the dispatcher's Close
		// interrupted stays pending for the next run.
		if del.key != "" && d.ctx.Err() == nil {
			d.opts.Journal.Settled(del.key)
		}

		d.mu.Lock()
		d.pending--
		if err != nil {
			d.stats.Failed++
		} else {
			d.stats.Delivered++
		}
		d.cond.Broadcast()
		d.mu.Unlock()
	}
}

// deliver makes one delivery, retrying while allowed.
func (d *Dispatcher) deliver(id string, del queued, retry bool) error {
	backoff := d.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		c := del.cause
		c.Attempt = attempt
		err := d.opts.Deliver(event.WithCause(context.WithValue(d.ctx, causeKey{}, c), c.EventID), id, del.Payload)
		if err == nil {
			return nil
		}
		if d.ctx.Err() != nil {
			return err
		}
		if !retry || attempt >= d.opts.RetryAttempts {
			if retry {
				err = fmt.Errorf("giving up after %d attempts: %w", attempt, err)
			}
			d.opts.Logf("functions: %s failed: %v", id, err)
			return err
		}
		d.mu.Lock()
		d.stats.Retried++
		d.mu.Unlock()
		select {
		case <-time.After(backoff):
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
		backoff = min(2*backoff, d.opts.RetryMaxBackoff)
	}
}

// Stats returns the counters so far.
func (d *Dispatcher) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// Idle waits until every change taken so far has been delivered (or
// given up), or ctx ends.
func (d *Dispatcher) Idle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	})
	defer stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.pending > 0 && !d.closed {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.cond.Wait()
	}
	if d.closed {
		return errors.New("trigger: dispatcher closed")
	}
	return nil
}

// Close stops the dispatcher: invocations in flight are cancelled and
// changes not yet delivered are abandoned.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}
