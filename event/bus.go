package event

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Emitter is what engines need from the bus. Emit fills ID and At when they
// are zero and never blocks on subscribers.
type Emitter interface {
	Emit(e Event)
}

// Discard is an Emitter that drops every event.
var Discard Emitter = discard{}

type discard struct{}

func (discard) Emit(Event) {}

// DefaultHistory is the number of events a Bus keeps when Options.History is 0.
const DefaultHistory = 10000

// Options configure a Bus.
type Options struct {
	// History bounds the events kept for History(); 0 means DefaultHistory.
	History int
	// Now is the clock stamping events; nil means time.Now.
	Now func() time.Time
}

// Bus fans events out to subscribers and keeps a bounded history. It is safe
// for concurrent use.
type Bus struct {
	now    func() time.Time
	seq    atomic.Uint64
	mu     sync.Mutex
	ring   []Event
	start  int // index of the oldest event in ring
	count  int
	subs   map[int]*Subscription
	nextID int
}

// NewBus returns an empty bus.
func NewBus(opts Options) *Bus {
	n := opts.History
	if n <= 0 {
		n = DefaultHistory
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now, ring: make([]Event, n), subs: map[int]*Subscription{}}
}

// Emit stamps e, records it and offers it to every subscriber. A subscriber
// whose buffer is full misses the event (and counts it in Dropped) rather
// than slowing the operation that emitted it.
func (b *Bus) Emit(e Event) {
	if e.ID == "" {
		e.ID = fmt.Sprintf("evt-%d", b.seq.Add(1))
	}
	if e.At == 0 {
		e.At = b.now().UnixMilli()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.count < len(b.ring) {
		b.ring[(b.start+b.count)%len(b.ring)] = e
		b.count++
	} else {
		b.ring[b.start] = e
		b.start = (b.start + 1) % len(b.ring)
	}
	for _, s := range b.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
		}
	}
}

// History returns a copy of the kept events, oldest first.
func (b *Bus) History() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Event, b.count)
	for i := 0; i < b.count; i++ {
		out[i] = b.ring[(b.start+i)%len(b.ring)]
	}
	return out
}

// Clear empties the history; subscriptions survive.
func (b *Bus) Clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.ring)
	b.start, b.count = 0, 0
}

// Len returns the number of events in the history.
func (b *Bus) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count
}

// Subscription receives events emitted after it was created.
type Subscription struct {
	bus     *Bus
	id      int
	ch      chan Event
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe returns a subscription with a buffer of the given size (at least 1).
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer < 1 {
		buffer = 1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	s := &Subscription{bus: b, id: b.nextID, ch: make(chan Event, buffer)}
	b.subs[s.id] = s
	return s
}

// Events is the channel of delivered events; it is closed by Close.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Dropped counts events this subscriber missed because its buffer was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close unsubscribes and closes the channel. It is idempotent.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s.id)
		s.bus.mu.Unlock()
		close(s.ch)
	})
}
