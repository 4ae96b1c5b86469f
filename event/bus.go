package event

import (
	"strconv"
	"sync"
	"time"
)

// Emitter is what engines need from the bus. Emit stamps Seq, ID and At
// and never blocks on subscribers.
type Emitter interface {
	Emit(e Event)
}

// Discard is an Emitter that drops every event.
var Discard Emitter = discard{}

type discard struct{}

func (discard) Emit(Event) {}

// Defaults for Options.
const (
	DefaultHistory      = 10000
	DefaultHistoryBytes = 64 << 20
)

// Options configure a Bus.
type Options struct {
	// History bounds the number of events kept; 0 means DefaultHistory.
	History int
	// HistoryBytes bounds the events kept by their approximate encoded
	// size; 0 means DefaultHistoryBytes. The newest event is always kept.
	HistoryBytes int
	// Now is the clock stamping events; nil means time.Now.
	Now func() time.Time
}

// Bus fans events out to subscribers and keeps a bounded history. It is
// safe for concurrent use. A subscriber that falls behind loses events,
// never slows the engine: the next event it receives is a KindGap saying
// how many it missed.
type Bus struct {
	now      func() time.Time
	maxCount int
	maxBytes int

	mu     sync.Mutex
	seq    uint64
	ring   []Event
	sizes  []int
	start  int // index of the oldest event in ring
	count  int
	bytes  int
	subs   map[int]*Subscription
	nextID int
}

// NewBus returns an empty bus.
func NewBus(opts Options) *Bus {
	n := opts.History
	if n <= 0 {
		n = DefaultHistory
	}
	nb := opts.HistoryBytes
	if nb <= 0 {
		nb = DefaultHistoryBytes
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now, maxCount: n, maxBytes: nb, ring: make([]Event, n), sizes: make([]int, n), subs: map[int]*Subscription{}}
}

// Emit stamps e, records it and offers it to every subscriber.
func (b *Bus) Emit(e Event) {
	if e.At.IsZero() {
		e.At = b.now()
	}
	if e.Actor.Kind == "" {
		e.Actor.Kind = ActorApp
	}
	size := approxSize(&e)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e.Seq = b.seq
	e.ID = "evt-" + strconv.FormatUint(e.Seq, 10)
	for b.count > 0 && (b.count == b.maxCount || b.bytes+size > b.maxBytes) {
		b.bytes -= b.sizes[b.start]
		b.ring[b.start], b.sizes[b.start] = Event{}, 0
		b.start = (b.start + 1) % b.maxCount
		b.count--
	}
	i := (b.start + b.count) % b.maxCount
	b.ring[i], b.sizes[i] = e, size
	b.count++
	b.bytes += size
	for _, s := range b.subs {
		s.offer(e)
	}
}

// History returns a copy of the kept events, oldest first.
func (b *Bus) History() []Event {
	return b.Since(0, 0)
}

// Since returns up to limit kept events with Seq > after, oldest first
// (limit 0: all of them).
func (b *Bus) Since(after uint64, limit int) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Event, 0, b.count)
	for i := 0; i < b.count; i++ {
		e := b.ring[(b.start+i)%b.maxCount]
		if e.Seq <= after {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, e)
	}
	return out
}

// Seq returns the sequence number of the newest event (0 before any).
func (b *Bus) Seq() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// Clear empties the history; subscriptions and the sequence survive.
func (b *Bus) Clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.ring)
	clear(b.sizes)
	b.start, b.count, b.bytes = 0, 0, 0
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
	missed  uint64 // events lost since the last delivery (guarded by bus.mu)
	dropped uint64 // all events lost (guarded by bus.mu)
	closed  bool   // guarded by bus.mu
}

// Subscribe returns a subscription with a buffer of the given size (at
// least 2: room for a gap marker and the event after it).
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer < 2 {
		buffer = 2
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	s := &Subscription{bus: b, id: b.nextID, ch: make(chan Event, buffer)}
	b.subs[s.id] = s
	return s
}

// offer delivers e without blocking; called with bus.mu held. After a
// loss, a gap marker goes first, once there is room for it and e.
func (s *Subscription) offer(e Event) {
	if s.missed > 0 {
		if cap(s.ch)-len(s.ch) < 2 {
			s.missed++
			s.dropped++
			return
		}
		s.ch <- Event{Seq: e.Seq, ID: e.ID, At: e.At, Kind: KindGap, Actor: Actor{Kind: ActorSystem}, Gap: &Gap{Missed: s.missed}}
		s.missed = 0
	}
	select {
	case s.ch <- e:
	default:
		s.missed++
		s.dropped++
	}
}

// Events is the channel of delivered events; it is closed by Close.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Dropped counts events this subscriber missed because its buffer was full.
func (s *Subscription) Dropped() uint64 {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.dropped
}

// Close unsubscribes and closes the channel. It is idempotent.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	delete(s.bus.subs, s.id)
	close(s.ch)
}

// approxSize estimates an event's encoded size without encoding it: the
// header, plus the strings and numbers of its payload's data.
func approxSize(e *Event) int {
	n := 160 + len(e.Service) + len(e.Method) + len(e.Path) + len(e.Identity.UID) + sizeOf(e.Identity.Token)
	if e.Err != nil {
		n += len(e.Err.Message) + 32
	}
	if r := e.Request; r != nil {
		n += 64
		if r.Rule != nil {
			n += 64 + len(r.Rule.MatchPath) + len(r.Rule.Condition)
		}
		n += stepsSize(r.Trace)
		if d := r.Decision; d != nil {
			n += len(d.Reason) + stepsSize(d.Failing)
			for _, er := range d.Evaluated {
				n += 96 + len(er.MatchPath) + len(er.Condition) + len(er.Message) + stepsSize(er.Trace)
			}
			for _, note := range d.Notes {
				n += len(note) + 4
			}
		}
		if s := r.Seen; s != nil {
			n += sizeOf(s.Data) + sizeOf(s.Query)
			for k, v := range s.Updates {
				n += len(k) + 4 + sizeOf(v)
			}
			if s.Before != nil {
				n += sizeOf(s.Before.Data)
			}
		}
	}
	if c := e.Commit; c != nil {
		n += 64 + sizeOf(c.Before) + sizeOf(c.After) + sizeOf(c.Written) + 32*len(c.Sentinels)
	}
	if l := e.Listener; l != nil {
		n += 96
		if l.Target != nil {
			n += len(l.Target.Path) + sizeOf(l.Target.Query)
		}
	}
	if m := e.Mutation; m != nil {
		n += 64 + sizeOf(m.Previous) + sizeOf(m.Current)
	}
	return n
}

func stepsSize(steps []Step) int {
	n := 0
	for _, s := range steps {
		n += 48 + len(s.Text) + len(s.Value) + len(s.Error)
	}
	return n
}

// sizeOf estimates the JSON size of decoded-JSON-like data; values of
// other types count a fixed amount.
func sizeOf(v any) int {
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return len(x) + 2
	case map[string]any:
		n := 2
		for k, e := range x {
			n += len(k) + 4 + sizeOf(e)
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + sizeOf(e)
		}
		return n
	default:
		return 16
	}
}
