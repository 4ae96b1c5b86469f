package event

import (
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"
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
	DefaultHistory = 10000
	// DefaultHistoryBytes bounds the heap the kept events take: 10000
	// commit events of small documents take ~11 MiB, so it binds only for
	// larger payloads.
	DefaultHistoryBytes = 32 << 20
	// DefaultSubscriptionBytes bounds the heap the events waiting in one
	// subscription's buffer hold (HeapSize, as for the history): a buffer
	// of thousands of events is small for small documents, but thousands
	// of writes of 100,000-element lists would be gigabytes.
	DefaultSubscriptionBytes = 16 << 20
)

// Options configure a Bus.
type Options struct {
	// History bounds the number of events kept; 0 means DefaultHistory.
	History int
	// HistoryBytes bounds the events kept by an estimate of the Go heap
	// they hold (HeapSize: strings, payload structs, decoded-JSON maps,
	// which take about three times their JSON text); 0 means
	// DefaultHistoryBytes. The newest event is always kept.
	HistoryBytes int
	// SubscriptionBytes bounds, per subscription, the events delivered
	// but not yet received by their estimated heap (HeapSize); 0 means
	// DefaultSubscriptionBytes. Past it events are lost as past a full
	// buffer (the subscriber receives a KindGap); an event is always
	// delivered into an empty buffer, however large.
	SubscriptionBytes int
	// Now is the clock stamping events; nil means time.Now.
	Now func() time.Time
}

// Bus fans events out to subscribers and keeps a bounded history. It is
// safe for concurrent use. A subscriber that falls behind (its buffer full
// in events or in bytes) loses events, never slows the engine: the next
// event it receives is a KindGap saying how many it missed.
type Bus struct {
	now      func() time.Time
	maxCount int
	maxBytes int
	subBytes int

	mu     sync.Mutex
	seq    uint64
	ring   []Event
	sizes  []int
	start  int // index of the oldest event in ring
	count  int
	bytes  int
	subs   map[int]*Subscription
	queues []*Queue
	nextID int
	taps   []func(Event)
	// ids is the slab the events' IDs are carved from (newID).
	ids []byte
	// tokens are the sizes of the token claims maps sized last.
	tokens tokenSizes
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
	sb := opts.SubscriptionBytes
	if sb <= 0 {
		sb = DefaultSubscriptionBytes
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now, maxCount: n, maxBytes: nb, subBytes: sb, subs: map[int]*Subscription{}}
}

// BatchEmitter is an Emitter that also emits several events as one.
type BatchEmitter interface {
	Emitter
	// EmitBatch emits es in order, with consecutive sequence numbers,
	// as one: no reader of the history sees some of them without the
	// others.
	EmitBatch(es []Event)
}

// EmitBatch emits es through em: as one when em is a BatchEmitter, else
// one after another. An engine emits the events of one change so when a
// reader must not see part of them (a write's request event without its
// commit event describes a write that did not happen).
func EmitBatch(em Emitter, es []Event) {
	if be, ok := em.(BatchEmitter); ok {
		be.EmitBatch(es)
		return
	}
	for _, e := range es {
		em.Emit(e)
	}
}

// Emit stamps e, records it and offers it to every subscriber.
func (b *Bus) Emit(e Event) {
	docs := docSizes{tokens: &b.tokens}
	size := b.stamp(&e, &docs)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.record(e, size)
}

// EmitBatch implements BatchEmitter: it stamps each event, and records
// and offers them all under one hold of the bus's lock, so that History,
// Since and subscribers find none of them or all of them.
func (b *Bus) EmitBatch(es []Event) {
	sizes := make([]int, len(es))
	// A write's request and commit events share its document.
	docs := docSizes{tokens: &b.tokens}
	for i := range es {
		sizes[i] = b.stamp(&es[i], &docs)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, e := range es {
		b.record(e, sizes[i])
	}
}

// stamp fills e's time and actor kind when unset and returns its
// HeapSize, the sizes of its documents looked up in docs first; done
// before the lock is taken.
func (b *Bus) stamp(e *Event, docs *docSizes) int {
	if e.At.IsZero() {
		e.At = b.now()
	}
	if e.Actor.Kind == "" {
		e.Actor.Kind = ActorApp
	}
	return heapSize(e, docs)
}

// record stamps e's sequence, keeps it and offers it to every subscriber
// and tap; callers hold mu.
func (b *Bus) record(e Event, size int) {
	b.seq++
	e.Seq = b.seq
	e.ID = b.newID(e.Seq)
	for b.count > 0 && (b.count == b.maxCount || b.bytes+size > b.maxBytes) {
		b.bytes -= b.sizes[b.start]
		b.ring[b.start], b.sizes[b.start] = Event{}, 0
		b.start = (b.start + 1) % b.maxCount
		b.count--
	}
	i := (b.start + b.count) % b.maxCount
	if i == len(b.ring) {
		b.grow()
	}
	b.ring[i], b.sizes[i] = e, size
	b.count++
	b.bytes += size
	for _, s := range b.subs {
		// The ring's copy is what keep looks at: a pointer to e would
		// move every event to the heap, a copy of its 300-odd bytes
		// each.
		if s.keep == nil || s.keep(&b.ring[i]) {
			s.offer(&b.ring[i], size)
		}
	}
	for _, q := range b.queues {
		if q.keep == nil || q.keep(&b.ring[i]) {
			q.offer(&b.ring[i], size)
		}
	}
	for _, t := range b.taps {
		t(e)
	}
}

// idSlab is the size of the slabs event IDs are carved from: about twenty
// IDs each, so that one ID kept long after its event (an invocation's
// CauseEventID, Writes) holds on to a few hundred bytes at most.
const idSlab = 256

// newID is "evt-<seq>", carved from the ids slab rather than allocated
// on its own: an allocation per event was the last one a listener
// delivery cost the bus. A slab's bytes are never written again once an
// ID is carved from them (the next ones are appended after it, and a
// full slab is left to the collector, not reused), so the strings are as
// immutable as any; callers hold mu.
func (b *Bus) newID(seq uint64) string {
	const most = len("evt-") + 20 // a uint64 has at most 20 digits
	if cap(b.ids)-len(b.ids) < most {
		b.ids = make([]byte, 0, idSlab)
	}
	start := len(b.ids)
	b.ids = strconv.AppendUint(append(b.ids, "evt-"...), seq, 10)
	return unsafe.String(&b.ids[start], len(b.ids)-start)
}

// Tap registers fn to be called with every event emitted from now on,
// synchronously inside Emit (with the bus's lock held) and in emission
// order. Unlike a Subscription a tap never loses an event, so it is for
// consumers that must see every change (the Cloud Functions trigger
// dispatcher); fn must only enqueue, never block, and never call the bus.
func (b *Bus) Tap(fn func(Event)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taps = append(b.taps, fn)
}

// grow lengthens the ring by one slot; until it has maxCount slots the
// kept events fill it from the start, so the slot is the next one. The
// ring grows by doubling up to maxCount instead of taking maxCount events'
// room (3 MiB for 10000) before any event comes.
func (b *Bus) grow() {
	if len(b.ring) == cap(b.ring) {
		n := min(max(2*cap(b.ring), 64), b.maxCount)
		ring, sizes := make([]Event, len(b.ring), n), make([]int, len(b.sizes), n)
		copy(ring, b.ring)
		copy(sizes, b.sizes)
		b.ring, b.sizes = ring, sizes
	}
	b.ring = b.ring[:len(b.ring)+1]
	b.sizes = b.sizes[:len(b.sizes)+1]
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
	// The kept events have consecutive sequence numbers (only the oldest
	// are ever dropped), so the first one past after is found, not
	// searched for, and only what is returned is copied.
	skip := 0
	if b.count > 0 {
		if first := b.ring[b.start].Seq; after >= first {
			skip = int(min(after-first+1, uint64(b.count)))
		}
	}
	n := b.count - skip
	if limit > 0 && n > limit {
		n = limit
	}
	out := make([]Event, n)
	for i := range out {
		out[i] = b.ring[(b.start+skip+i)%b.maxCount]
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
	// sizes are the HeapSize of the events sent into ch that may still be
	// waiting there, oldest first: tracked of them from sizes[head], a
	// ring of cap(ch) (as many as ch can hold), and queued their sum
	// (guarded by bus.mu). ch is first in, first out, so the ones the
	// subscriber took are the oldest tracked-len(ch). A ring, where a
	// slice resliced past the taken ones and appended to was reallocated
	// every few events (16 B per event and subscriber).
	sizes   []int
	head    int
	tracked int
	queued  int
	// keep, when set, chooses the events offered (SubscribeWhere).
	keep func(*Event) bool
}

// Subscribe returns a subscription with a buffer of the given size (at
// least 2: room for a gap marker and the event after it).
func (b *Bus) Subscribe(buffer int) *Subscription { return b.SubscribeWhere(buffer, nil) }

// SubscribeWhere is Subscribe for the events keep accepts (nil: every
// event); the others are neither delivered nor counted as missed. keep
// runs inside Emit with the bus's lock held: it must only look at the
// event. A subscriber that wants few of the events (the request log's
// denials) so costs the emitters nothing for the rest: each event
// delivered to a waiting subscriber wakes its goroutine, about as much
// CPU as a small write's own work.
func (b *Bus) SubscribeWhere(buffer int, keep func(*Event) bool) *Subscription {
	if buffer < 2 {
		buffer = 2
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	s := &Subscription{bus: b, id: b.nextID, ch: make(chan Event, buffer), sizes: make([]int, buffer), keep: keep}
	b.subs[s.id] = s
	return s
}

// offer delivers e, of HeapSize size, without blocking; called with
// bus.mu held. It is lost when the buffer has no room for it in events, or
// in bytes unless the buffer is empty. After a loss, a gap marker goes
// first, once there is room for it and e.
func (s *Subscription) offer(e *Event, size int) {
	waiting := len(s.ch) // only the subscriber takes from ch: it can only shrink
	for ; s.tracked > waiting; s.tracked-- {
		s.queued -= s.sizes[s.head]
		s.head = (s.head + 1) % len(s.sizes)
	}
	if !admits(cap(s.ch), waiting, s.queued, size, s.bus.subBytes, s.missed > 0) {
		s.missed++
		s.dropped++
		return
	}
	if s.missed > 0 {
		s.ch <- gapMarker(e, s.missed)
		s.track(0)
		s.missed = 0
	}
	s.ch <- *e
	s.track(size)
	s.queued += size
}

// track notes an event of HeapSize size sent into ch; admits left room
// for it in ch, so in the ring.
func (s *Subscription) track(size int) {
	s.sizes[(s.head+s.tracked)%len(s.sizes)] = size
	s.tracked++
}

// admits says whether a buffer of room events, holding waiting events of
// queued HeapSize bytes, takes an event of size bytes: it must have room
// for it in events (and for the gap marker before it after a loss), and
// in bytes unless it is empty (limit: Options.SubscriptionBytes).
func admits(room, waiting, queued, size, limit int, afterLoss bool) bool {
	need := 1
	if afterLoss {
		need = 2
	}
	return room-waiting >= need && (waiting == 0 || queued+size <= limit)
}

// gapMarker is the KindGap event delivered before e to a subscriber that
// missed the missed events before it.
func gapMarker(e *Event, missed uint64) Event {
	return Event{Seq: e.Seq, ID: e.ID, At: e.At, Kind: KindGap, Actor: Actor{Kind: ActorSystem}, Gap: &Gap{Missed: missed}}
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

// HeapSize estimates the Go heap an event holds beyond the Event struct
// itself: its strings, its payload structs and their data (allocation
// size classes rounded to 16 bytes), for memory bounds counted in real
// bytes. It is an estimate, measured against the heap of 10000 commit
// events in TestHeapSizeEstimate.
func HeapSize(e *Event) int {
	var docs docSizes
	return heapSize(e, &docs)
}

// heapSize is HeapSize, the sizes of the documents (the maps an event's
// payload values are) memoized in docs: a Firestore set's request and
// commit events carry one map three times (the data seen, after,
// written), which walking once instead of three times was half of what
// sizing the two events cost. A shared map still counts at each
// reference, as before.
func heapSize(e *Event, docs *docSizes) int {
	n := str(e.ID) + str(e.Service) + str(e.Method) + str(e.Path) + str(e.Identity.UID) + docs.token(e.Identity.Token)
	if e.Group != nil {
		n += size(unsafe.Sizeof(*e.Group)) + str(e.Group.ID)
	}
	if e.Err != nil {
		n += size(unsafe.Sizeof(*e.Err)) + str(e.Err.Code) + str(e.Err.Message)
	}
	if r := e.Request; r != nil {
		n += size(unsafe.Sizeof(*r))
		if r.Rule != nil {
			n += size(unsafe.Sizeof(*r.Rule)) + str(r.Rule.MatchPath) + str(r.Rule.Condition)
		}
		n += stepsSize(r.Trace)
		if d := r.Decision; d != nil {
			n += size(unsafe.Sizeof(*d)) + str(d.Reason) + stepsSize(d.Failing)
			for _, er := range d.Evaluated {
				n += size(unsafe.Sizeof(er)) + str(er.MatchPath) + str(er.Condition) + str(er.Message) + stepsSize(er.Trace)
			}
			for _, note := range d.Notes {
				n += 16 + str(note)
			}
		}
		if s := r.Seen; s != nil {
			n += size(unsafe.Sizeof(*s)) + docs.of(s.Data) + sizeOf(s.Query)
			n += mapSize(len(s.Updates), 32)
			for k, v := range s.Updates {
				n += str(k) + sizeOf(v)
			}
			if s.Before != nil {
				n += size(unsafe.Sizeof(*s.Before)) + docs.of(s.Before.Data)
			}
		}
	}
	if c := e.Commit; c != nil {
		n += size(unsafe.Sizeof(*c)) + docs.of(c.Before) + docs.of(c.After) + docs.of(c.Written) + str(c.AutoID) + str(c.Database)
		n += len(c.Sentinels) * int(unsafe.Sizeof(Sentinel{}))
		if sc := c.Scope; sc != nil {
			// Shared by the events of one commit; counted with each.
			n += size(unsafe.Sizeof(*sc)) + str(sc.Path) + sizeOf(sc.Before) + sizeOf(sc.After) + 16*len(sc.Writes)
			for _, w := range sc.Writes {
				n += str(w)
			}
		}
	}
	if l := e.Listener; l != nil {
		n += size(unsafe.Sizeof(*l))
		if l.Target != nil {
			n += size(unsafe.Sizeof(*l.Target)) + str(l.Target.Path) + sizeOf(l.Target.Query)
		}
	}
	if m := e.Mutation; m != nil {
		n += size(unsafe.Sizeof(*m)) + docs.of(m.Previous) + docs.of(m.Current)
	}
	if v := e.Invocation; v != nil {
		n += size(unsafe.Sizeof(*v)) + str(v.Function) + str(v.Codebase) + str(v.TriggerType) + str(v.CauseEventID) + str(v.InvocationID) + 16*len(v.Writes)
		for _, w := range v.Writes {
			n += str(w)
		}
		n += len(v.Logs) * int(unsafe.Sizeof(LogLine{}))
		for _, l := range v.Logs {
			n += str(l.Severity) + str(l.Text)
		}
	}
	return n
}

// docSizes memoizes sizeOf of the last few maps sized, by identity:
// the events of one emission are sized before any is recorded, and no
// one changes an event's maps once it is built.
type docSizes struct {
	maps  [4]unsafe.Pointer
	sizes [4]int
	next  int
	// tokens, when set, are the bus's sizes of token claims maps, kept
	// from emission to emission.
	tokens *tokenSizes
}

// token is sizeOf(m), m an event's token claims: looked up in tokens.
func (d *docSizes) token(m map[string]any) int {
	if d.tokens == nil || len(m) == 0 {
		return sizeOf(m)
	}
	return d.tokens.of(m)
}

// tokenSizes memoizes sizeOf of token claims maps, by identity, from one
// emission to the next: a connection's identity, with its claims map, is
// the same for every event of its listens and requests, and walking the
// claims (a dozen entries, nested maps) was most of what sizing a signed-in
// user's listener delivery cost. Each slot holds its map, so that the
// address is not another map's while the size is kept; a map changed in
// length is sized again (the events' maps are not changed once built).
type tokenSizes struct {
	mu    sync.Mutex
	slots [16]tokenSize
}

type tokenSize struct {
	m    map[string]any // held: while it is, no other map has its address
	p    unsafe.Pointer // m's address
	n    int            // len(m) when sized
	size int
}

// of is sizeOf(m), m not empty.
func (t *tokenSizes) of(m map[string]any) int {
	p := reflect.ValueOf(m).UnsafePointer()
	h := uintptr(p)
	i := (h>>4 ^ h>>10) % uintptr(len(t.slots))
	t.mu.Lock()
	c := t.slots[i] // a copy: another emission may replace the slot once unlocked
	t.mu.Unlock()
	if c.p == p && c.n == len(m) {
		return c.size
	}
	n := sizeOf(m)
	t.mu.Lock()
	t.slots[i] = tokenSize{m: m, p: p, n: len(m), size: n}
	t.mu.Unlock()
	return n
}

// of is sizeOf(v), looked up first when v is a map.
func (d *docSizes) of(v any) int {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return sizeOf(v)
	}
	p := reflect.ValueOf(m).UnsafePointer()
	for i, q := range d.maps {
		if q == p {
			return d.sizes[i]
		}
	}
	n := sizeOf(m)
	d.maps[d.next], d.sizes[d.next] = p, n
	d.next = (d.next + 1) % len(d.maps)
	return n
}

func stepsSize(steps []Step) int {
	n := len(steps) * int(unsafe.Sizeof(Step{}))
	for _, s := range steps {
		n += str(s.Text) + str(s.Value) + str(s.Error)
	}
	return n
}

// str is the heap a string's bytes take.
func str(s string) int { return (len(s) + 15) &^ 15 }

// size is a struct's allocation, rounded.
func size(n uintptr) int { return (int(n) + 15) &^ 15 }

// mapSize is the heap of a Go map of n entries of slot bytes each: its
// header and groups of 8 slots (and their control word), kept at most
// 7/8 full.
func mapSize(n, slot int) int {
	if n == 0 {
		return 0
	}
	groups := max(1, (n*8/7+7)/8)
	return 48 + groups*(8+8*slot)
}

// sizeOf estimates the heap of decoded-JSON-like data held in an
// interface: boxed strings and numbers, maps and slices with their
// contents; values of other types count a fixed amount.
func sizeOf(v any) int {
	switch x := v.(type) {
	case nil, bool:
		return 0
	case string:
		return 16 + str(x)
	case json.Number:
		return 16 + str(string(x))
	case map[string]any:
		n := mapSize(len(x), 32)
		for k, e := range x {
			n += str(k) + sizeOf(e)
		}
		return n
	case []any:
		n := 32 + 16*cap(x)
		for _, e := range x {
			n += sizeOf(e)
		}
		return n
	case interface{ HeapSize() int }:
		// A typed record that knows its size (a Pub/Sub publish
		// carrying its messages).
		return x.HeapSize()
	default:
		return 16
	}
}
