package event

// Queue receives the events emitted after it was created, as a
// Subscription does (in order, a KindGap in place of the events it was
// too slow to take, bounded in events and in bytes, the events of an
// EmitBatch all offered under one hold of the bus's lock), but a batch
// at a time: Take hands over every waiting event at once, and Ready wakes
// the reader once per batch. A Subscription's channel wakes a reader
// waiting on it at every event, a thread wake-up for each of a stream of
// small requests; a Queue's reader chooses how many events are worth a
// wake-up.
type Queue struct {
	bus  *Bus
	keep func(*Event) bool
	max  int
	// ready holds a token once the queue holds wakeAt events; closed by
	// Close.
	ready chan struct{}

	// Guarded by bus.mu.
	events  []Event // waiting, oldest first
	bytes   int     // their HeapSize
	wakeAt  int     // 0: Ready is not armed
	missed  uint64  // events lost since the last one queued
	dropped uint64  // all events lost
	closed  bool
}

// NewQueue returns a queue of the events keep accepts (nil: every event)
// emitted from now on, holding at most buffer events (at least 2: room
// for a gap marker and the event after it) and Options.SubscriptionBytes
// of them. keep runs inside Emit with the bus's lock held: it must only
// look at the event. The queue's room is taken as events come, not
// before.
func (b *Bus) NewQueue(buffer int, keep func(*Event) bool) *Queue {
	if buffer < 2 {
		buffer = 2
	}
	q := &Queue{bus: b, keep: keep, max: buffer, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queues = append(b.queues, q)
	return q
}

// offer queues e, of HeapSize size, or counts it lost; called with
// bus.mu held. It wakes the reader when the queue reaches what Ready
// asked for.
func (q *Queue) offer(e *Event, size int) {
	if !admits(q.max, len(q.events), q.bytes, size, q.bus.subBytes, q.missed > 0) {
		q.missed++
		q.dropped++
		return
	}
	if q.missed > 0 {
		q.events = append(q.events, gapMarker(e, q.missed))
		q.missed = 0
	}
	q.events = append(q.events, *e)
	q.bytes += size
	if q.wakeAt > 0 && len(q.events) >= q.wakeAt {
		q.wakeAt = 0
		q.signal()
	}
}

// signal leaves a token in ready unless one is there; bus.mu is held.
func (q *Queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Ready returns a channel that receives once the queue holds at least n
// events (n < 1 counts as 1) — at once when it already does — and is
// closed by Close. Each call replaces the previous one's n; the channel
// receives once per call at most, whatever comes after. A reader that
// takes each batch and calls Ready(1) again is woken once per batch: the
// events emitted while it works join the next one.
func (q *Queue) Ready(n int) <-chan struct{} {
	n = max(n, 1)
	q.bus.mu.Lock()
	defer q.bus.mu.Unlock()
	if q.closed {
		return q.ready
	}
	q.wakeAt = 0
	if len(q.events) >= n {
		q.signal()
		return q.ready
	}
	// A token an earlier call left unreceived would wake the reader
	// before the n events.
	select {
	case <-q.ready:
	default:
	}
	q.wakeAt = n
	return q.ready
}

// Take returns the waiting events, oldest first, and empties the queue.
// The next events are queued in spare's room (its contents cleared first,
// so that it holds on to nothing): a reader that hands back the previous
// batch once done with it allocates nothing from batch to batch.
func (q *Queue) Take(spare []Event) []Event {
	clear(spare[:cap(spare)])
	q.bus.mu.Lock()
	defer q.bus.mu.Unlock()
	out := q.events
	q.events, q.bytes = spare[:0], 0
	if !q.closed {
		// A token for the events just taken would wake the reader for
		// nothing.
		select {
		case <-q.ready:
		default:
		}
	}
	return out
}

// Dropped counts the events this queue lost because it was full.
func (q *Queue) Dropped() uint64 {
	q.bus.mu.Lock()
	defer q.bus.mu.Unlock()
	return q.dropped
}

// Close stops the queue: no event joins it any more, and Ready's channel
// is closed; the events already queued can still be taken. It is
// idempotent.
func (q *Queue) Close() {
	q.bus.mu.Lock()
	defer q.bus.mu.Unlock()
	if q.closed {
		return
	}
	q.closed, q.wakeAt = true, 0
	b := q.bus
	for i, o := range b.queues {
		if o == q {
			b.queues = append(b.queues[:i], b.queues[i+1:]...)
			break
		}
	}
	close(q.ready)
}
