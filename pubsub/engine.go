package pubsub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/btree"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// ServiceName is the engine's key in the sandbox.
const ServiceName = "pubsub"

// Defaults of Options.
const (
	// DefaultWindow is how many messages of one subscription's backlog
	// memory holds; the rest wait in the bucket.
	DefaultWindow = 10000
	// DefaultMaxMemoryBytes bounds an in-memory engine's records.
	DefaultMaxMemoryBytes = 1 << 30
	// DefaultPushConcurrency is how many pushes to one endpoint may be in
	// flight at once.
	DefaultPushConcurrency = 16
	// DefaultMaxPullWait is how long a Pull without return_immediately
	// waits for a message (the official emulator holds an empty pull
	// about 90 s).
	DefaultMaxPullWait = 90 * time.Second
	// DefaultPushTimeout bounds one push request.
	DefaultPushTimeout = 60 * time.Second
)

// Options tune an engine beyond its Env.
type Options struct {
	// Window is the per-subscription in-memory window; 0 means
	// DefaultWindow.
	Window int
	// MaxMemoryBytes bounds the records of an engine without a Bucket;
	// publishing past it fails with RESOURCE_EXHAUSTED. 0 means
	// DefaultMaxMemoryBytes.
	MaxMemoryBytes int64
	// PushClient sends push deliveries; nil means a client with
	// DefaultPushTimeout.
	PushClient *http.Client
	// PushConcurrency bounds the pushes in flight per subscription; 0
	// means DefaultPushConcurrency.
	PushConcurrency int
	// MaxPullWait bounds how long a waiting Pull blocks; 0 means
	// DefaultMaxPullWait.
	MaxPullWait time.Duration
}

// Engine is the Pub/Sub engine. It is safe for concurrent use.
type Engine struct {
	env    service.Env
	opts   Options
	bucket service.Bucket
	mem    *memBucket // the bucket when the sandbox is in memory
	com    *committer

	mu     sync.Mutex
	topics map[string]*topicState
	subs   map[string]*subState
	snaps  map[string]*snapState
	// schemas are the registered schemas by name.
	schemas map[string]*schemaState
	lastID  uint64
	epoch   uint64
	ackSeq  uint64
	timers  timerHeap
	// timerCompactAt is the heap size that triggers dropping stale items.
	timerCompactAt int
	wake           chan struct{}

	stop   chan struct{}
	wg     sync.WaitGroup
	closed bool

	// topicsReady, when set, is closed once the topics that functions
	// create are made (AwaitTopics); until then a publish to, or a get
	// of, a missing topic waits for it.
	topicsReady <-chan struct{}
}

// topicsWait bounds how long a publish waits for AwaitTopics' topics.
const topicsWait = time.Minute

// AwaitTopics makes a publish to a missing topic, and a get of one, wait
// until ready is closed (at most a minute) and look again: the functions
// whose Pub/Sub triggers create their topics are still loading. pyric
// serve's ports answer while the functions load, and a publish then must
// still reach the onMessagePublished the app defines.
func (e *Engine) AwaitTopics(ready <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.topicsReady = ready
}

// awaitTopics waits for AwaitTopics' topics; it reports whether it had
// to, that is whether a missing topic is worth looking up again.
func (e *Engine) awaitTopics() bool {
	e.mu.Lock()
	ready := e.topicsReady
	e.mu.Unlock()
	if ready == nil {
		return false
	}
	select {
	case <-ready:
		return false
	default:
	}
	t := time.NewTimer(topicsWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	case <-e.stop:
	}
	return true
}

type topicState struct {
	cfg   *Topic
	subs  map[string]*subState
	snaps map[string]*snapState
}

type snapState struct {
	cfg *Snapshot
	uid string
}

// Registration joins the engine to a sandbox with default Options.
var Registration = service.Registration{Name: ServiceName, New: New}

// New is the service.Factory of the engine with default Options.
func New(env service.Env) (service.Service, error) { return NewEngine(env, Options{}) }

// Factory returns a service.Factory building engines with opts.
func Factory(opts Options) service.Factory {
	return func(env service.Env) (service.Service, error) { return NewEngine(env, opts) }
}

// NewEngine creates an engine, restoring what env.Bucket holds.
func NewEngine(env service.Env, opts Options) (*Engine, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.NewID == nil {
		var n uint64
		var mu sync.Mutex
		env.NewID = func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("q%019d", n)
		}
	}
	if env.Events == nil {
		env.Events = event.Discard
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.MaxMemoryBytes <= 0 {
		opts.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if opts.PushConcurrency <= 0 {
		opts.PushConcurrency = DefaultPushConcurrency
	}
	if opts.MaxPullWait <= 0 {
		opts.MaxPullWait = DefaultMaxPullWait
	}
	if opts.PushClient == nil {
		opts.PushClient = &http.Client{Timeout: DefaultPushTimeout}
	}
	e := &Engine{env: env, opts: opts, bucket: env.Bucket, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if e.bucket == nil {
		e.mem = newMemBucket()
		e.bucket = e.mem
	}
	e.com = newCommitter(e.bucket)
	e.clear()
	if err := e.load(); err != nil {
		e.com.close()
		return nil, fmt.Errorf("pubsub: restore: %w", err)
	}
	e.wg.Add(1)
	go e.timerLoop()
	e.mu.Lock()
	for _, s := range e.subs {
		e.startPush(s)
	}
	e.mu.Unlock()
	return e, nil
}

// Name is the service's key.
func (e *Engine) Name() string { return ServiceName }

func (e *Engine) clear() {
	e.topics = map[string]*topicState{}
	e.subs = map[string]*subState{}
	e.snaps = map[string]*snapState{}
	e.schemas = map[string]*schemaState{}
	e.timers = nil
	e.timerCompactAt = minTimerCompact
}

// load rebuilds memory from the bucket: configurations, the id counters
// and each subscription's backlog count; the messages themselves are
// paged in on demand.
func (e *Engine) load() error {
	uids := map[string]bool{}
	err := e.bucket.View(func(tx service.Tx) error {
		if v := tx.Get(keyLastID); v != nil {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("lastId %q: %w", v, err)
			}
			e.lastID = n
		}
		if v := tx.Get(keyEpoch); v != nil {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("epoch %q: %w", v, err)
			}
			e.epoch = n
		}
		if err := tx.ForEach([]byte("x/"), func(k, v []byte) error {
			st, err := decodeSchemaRecord(v)
			if err != nil {
				return fmt.Errorf("schema %q: %w", k, err)
			}
			e.schemas[st.current().cfg.Name] = st
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ForEach([]byte("t/"), func(k, v []byte) error {
			var t Topic
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("topic %q: %w", k, err)
			}
			e.topics[t.Name] = &topicState{cfg: &t, subs: map[string]*subState{}, snaps: map[string]*snapState{}}
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ForEach([]byte("n/"), func(k, v []byte) error {
			var r snapRecord
			if err := json.Unmarshal(v, &r); err != nil || r.Config == nil {
				return fmt.Errorf("snapshot %q: %v", k, err)
			}
			ss := &snapState{cfg: r.Config, uid: r.UID}
			e.snaps[r.Config.Name] = ss
			uids[r.UID] = true
			if t := e.topics[r.Config.Topic]; t != nil {
				t.snaps[r.Config.Name] = ss
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.ForEach([]byte("s/"), func(k, v []byte) error {
			var r subRecord
			if err := json.Unmarshal(v, &r); err != nil || r.Config == nil {
				return fmt.Errorf("subscription %q: %v", k, err)
			}
			s := e.newSubState(r.Config, r.UID)
			s.spilled = true
			uids[r.UID] = true
			n := 0
			if err := forEachQueued(tx, r.UID, 0, func(q *queued) error {
				if !q.rec.Acked {
					n++
				}
				return nil
			}); err != nil {
				return err
			}
			s.backlog = n
			e.subs[r.Config.Name] = s
			if t := e.topics[r.Config.Topic]; t != nil {
				t.subs[r.Config.Name] = s
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	// A new epoch makes ack ids handed out before a restart unknown
	// rather than aliases of new deliveries; queues no configuration
	// names any more (a concurrent publish to a deleted or reseeked
	// queue) are dropped.
	e.epoch++
	return e.com.do(func(tx service.Tx) error {
		garbage := map[string]bool{}
		for _, p := range []string{"q/", "k/"} {
			if err := tx.ForEach([]byte(p), func(k, _ []byte) error {
				if uid := string(k[2 : len(k)-9]); !uids[uid] {
					garbage[uid] = true
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for uid := range garbage {
			if err := deleteQueue(tx, uid); err != nil {
				return err
			}
		}
		return tx.Put(keyEpoch, []byte(strconv.FormatUint(e.epoch, 10)))
	})
}

func (e *Engine) newSubState(cfg *Subscription, uid string) *subState {
	f, _ := ParseFilter(cfg.Filter) // checked when created
	return &subState{cfg: cfg, uid: uid, filter: f, entries: map[uint64]*entry{}, ready: btree.NewG(16, entryLess),
		leases: map[uint64]*entry{}, keys: map[string]*keyState{}, pending: map[uint64]bool{}, notify: make(chan struct{})}
}

// Close stops the engine's goroutines (timers, pushes).
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for _, s := range e.subs {
		e.stopPush(s)
		s.signal()
	}
	e.mu.Unlock()
	close(e.stop)
	e.wg.Wait()
	e.com.close()
	return nil
}

// Reset wipes every topic, subscription, snapshot and message. The
// sandbox has cleared the bucket already when there is one.
func (e *Engine) Reset() error {
	e.mu.Lock()
	for _, s := range e.subs {
		e.dropSub(s)
	}
	e.clear()
	e.lastID = 0
	e.mu.Unlock()
	if e.mem != nil {
		if err := e.com.do(func(tx service.Tx) error {
			for _, p := range []string{"t/", "s/", "n/", "q/", "k/"} {
				if err := tx.DeletePrefix([]byte(p)); err != nil {
					return err
				}
			}
			return tx.Delete(keyLastID)
		}); err != nil {
			return err
		}
	}
	e.emit(event.Event{Kind: event.KindMutation, Method: "pubsub.reset", Mutation: &event.Mutation{Op: "pubsub_reset"}})
	return nil
}

// now is the sandbox clock.
func (e *Engine) now() time.Time { return e.env.Now() }

// nextAck mints a delivery number: the epoch in the high bits, so a
// number handed out before a restart is never handed out again.
func (e *Engine) nextAck() uint64 {
	e.ackSeq++
	return e.epoch<<40 | e.ackSeq
}

func (e *Engine) full() error {
	if e.mem != nil && e.mem.bytes() > e.opts.MaxMemoryBytes {
		return &Error{Kind: ErrResourceExhausted, Msg: fmt.Sprintf(
			"The in-memory Pub/Sub store holds %d bytes, its limit; acknowledge messages, delete subscriptions or run with persistence.", e.mem.bytes())}
	}
	return nil
}
