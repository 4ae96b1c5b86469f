package pubsub

import (
	"container/heap"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/btree"

	"github.com/pyric/pyric/sandbox/service"
)

// subState is a subscription's configuration and delivery state. Memory
// holds a window of its backlog (entries); when the window is full the
// newer messages are only in the bucket (spilled, from spillFrom on) and
// fill pages them in as the window drains.
type subState struct {
	cfg    *Subscription
	uid    string
	filter *Filter

	entries map[uint64]*entry     // in memory, by sequence (the message id)
	ready   *btree.BTreeG[*entry] // deliverable now, in sequence order
	leases  map[uint64]*entry     // outstanding, by delivery number
	keys    map[string]*keyState  // ordering keys with outstanding or delayed messages
	pending map[uint64]bool       // published, not yet committed
	notify  chan struct{}         // closed and replaced when something may be deliverable

	spilled   bool
	spillFrom uint64
	backlog   int // unacknowledged messages, in memory or not
	deleted   bool
	push      *pusher
}

type entryState int8

const (
	stReady entryState = iota
	stOut
	stDelayed
)

// entry is one message of a subscription in memory.
type entry struct {
	seq       uint64
	msg       *Message
	attempts  int
	state     entryState
	ackNum    uint64 // the current delivery's number while stOut
	deadline  time.Time
	notBefore time.Time
	holder    *Stream
	size      int
	ref       storedRef // where the bucket holds it
}

type keyState struct{ busy int }

func entryLess(a, b *entry) bool { return a.seq < b.seq }

// signal wakes whoever waits for the subscription's messages.
func (s *subState) signal() {
	close(s.notify)
	s.notify = make(chan struct{})
}

func (s *subState) ordered(en *entry) bool {
	return s.cfg.EnableMessageOrdering && en.msg.OrderingKey != ""
}

func (s *subState) name() string { return s.cfg.Name }

// insert adds a committed message to memory unless it belongs to the
// spilled part of the backlog.
// en is the entry to fill (from a publish's slab of them), nil for a
// new one.
func (e *Engine) insert(s *subState, uid string, rec *record, seq uint64, ref storedRef, en *entry) {
	delete(s.pending, seq)
	if s.deleted || s.uid != uid || s.entries[seq] != nil {
		return
	}
	if s.spilled && seq >= s.spillFrom {
		return
	}
	if len(s.entries) >= e.opts.Window {
		// Left in the bucket: fill must find it, so the spilled part
		// starts at it at the latest.
		if !s.spilled || seq < s.spillFrom {
			s.spilled, s.spillFrom = true, seq
		}
		return
	}
	s.add(rec, seq, ref, en)
}

// add puts a message in memory as a ready entry: en, or a new one when
// nil.
func (s *subState) add(rec *record, seq uint64, ref storedRef, en *entry) {
	if en == nil {
		en = &entry{}
	}
	*en = entry{seq: seq, msg: rec.Msg, attempts: rec.Attempts, size: rec.Msg.size(), ref: ref}
	s.entries[seq] = en
	s.ready.ReplaceOrInsert(en)
}

// fill pages spilled messages into the window once it is half empty.
func (e *Engine) fill(s *subState) {
	if !s.spilled || len(s.entries) > e.opts.Window/2 {
		return
	}
	want := e.opts.Window - len(s.entries)
	stopped := errors.New("stop")
	complete := true
	err := e.bucket.View(func(tx service.Tx) error {
		return forEachQueued(tx, s.uid, s.spillFrom, func(q *queued) error {
			if s.entries[q.seq] != nil {
				return nil
			}
			if s.pending[q.seq] || want == 0 {
				// A message being committed: its commit inserts it.
				s.spillFrom = q.seq
				complete = false
				return stopped
			}
			s.spillFrom = q.seq + 1
			if q.rec.Acked {
				return nil
			}
			rec := q.rec
			s.add(&rec, q.seq, q.ref, nil)
			want--
			return nil
		})
	})
	if err == nil && complete {
		s.spilled = false
	}
}

// take leases up to max deliverable messages (and about maxBytes) to
// holder for lease; ordering keys with outstanding or delayed messages
// are skipped, and a key's consecutive messages go out together in
// order.
func (e *Engine) take(s *subState, max int, maxBytes int64, lease time.Duration, holder *Stream) ([]Received, []*entry) {
	e.fill(s)
	if max <= 0 || s.ready.Len() == 0 {
		return nil, nil
	}
	now := e.now()
	var picked, stale []*entry
	var bytes int64
	inBatch := map[string]bool{}
	oldest := now.Add(-s.cfg.MessageRetentionDuration)
	s.ready.Ascend(func(en *entry) bool {
		// Past the retention duration a message is gone, delivered or
		// not, as in production.
		if s.cfg.MessageRetentionDuration > 0 && en.msg.PublishTime.Before(oldest) {
			stale = append(stale, en)
			return true
		}
		if len(picked) >= max || (len(picked) > 0 && maxBytes > 0 && bytes+int64(en.size) > maxBytes) {
			return false
		}
		if s.ordered(en) {
			k := en.msg.OrderingKey
			if ks := s.keys[k]; ks != nil && ks.busy > 0 && !inBatch[k] {
				return true
			}
			inBatch[k] = true
		}
		picked = append(picked, en)
		bytes += int64(en.size)
		return true
	})
	if len(stale) > 0 {
		e.expireOld(s, stale)
	}
	out := make([]Received, len(picked))
	for i, en := range picked {
		s.ready.Delete(en)
		en.state = stOut
		en.attempts++
		en.ackNum = e.nextAck()
		en.deadline = now.Add(lease)
		en.holder = holder
		if holder != nil {
			holder.out++
			holder.outBytes += int64(en.size)
		}
		s.leases[en.ackNum] = en
		if s.ordered(en) {
			s.key(en.msg.OrderingKey).busy++
		}
		e.addTimer(en.deadline, s, en, en.ackNum)
		out[i] = Received{AckID: ackID(s.cfg.Name, en.ackNum), Message: en.msg}
		if s.cfg.DeadLetter != nil {
			out[i].DeliveryAttempt = en.attempts
		}
	}
	return out, picked
}

// expireOld drops messages past the retention duration, in memory now
// and in the bucket in the background (a crash before that only means
// the next open drops them again).
func (e *Engine) expireOld(s *subState, stale []*entry) {
	uid, retain := s.uid, s.cfg.RetainAckedMessages
	rs := make([]removed, len(stale))
	for i, en := range stale {
		s.drop(en)
		rs[i] = removed{seq: en.seq, ref: en.ref, drop: true}
	}
	e.emitAck(s, stale, OpRetention)
	if e.closed {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_ = e.com.do(func(tx service.Tx) error { return removeStored(tx, uid, rs, retain) })
	}()
}

func (s *subState) key(k string) *keyState {
	ks := s.keys[k]
	if ks == nil {
		ks = &keyState{}
		s.keys[k] = ks
	}
	return ks
}

func (s *subState) unbusy(en *entry) {
	if !s.ordered(en) {
		return
	}
	if ks := s.keys[en.msg.OrderingKey]; ks != nil {
		ks.busy--
		if ks.busy <= 0 {
			delete(s.keys, en.msg.OrderingKey)
		}
	}
}

// release ends en's lease (for its holder's flow control).
func (s *subState) release(en *entry) {
	delete(s.leases, en.ackNum)
	if h := en.holder; h != nil {
		h.out--
		h.outBytes -= int64(en.size)
		en.holder = nil
	}
}

// drop removes an acknowledged (or dead-lettered) entry from memory.
func (s *subState) drop(en *entry) {
	switch en.state {
	case stOut:
		s.release(en)
		s.unbusy(en)
	case stDelayed:
		s.unbusy(en)
	case stReady:
		s.ready.Delete(en)
	}
	delete(s.entries, en.seq)
	s.backlog--
}

// persistAttempts writes the delivery counts of entries (only needed for
// dead-letter policies, whose max delivery attempts must survive a
// restart).
func (e *Engine) persistAttempts(s *subState, picked []*entry) func(service.Tx) error {
	if s.cfg.DeadLetter == nil || len(picked) == 0 {
		return nil
	}
	uid := s.uid
	var recs []record
	var seqs []uint64
	for _, en := range picked {
		// A message stored in a segment (a subscription that gained its
		// dead-letter policy after the publish) keeps its count in
		// memory only: after a restart it may be delivered once more.
		if en.ref.seg != 0 {
			continue
		}
		recs = append(recs, record{Msg: en.msg, Attempts: en.attempts})
		seqs = append(seqs, en.seq)
	}
	return func(tx service.Tx) error {
		for i := range recs {
			k := queueKey(uid, seqs[i])
			if tx.Get(k) == nil { // acknowledged meanwhile
				continue
			}
			if err := putRecord(tx, k, &recs[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// ackID formats a delivery's ack id as the emulator does.
func ackID(sub string, n uint64) string { return sub + ":" + strconv.FormatUint(n, 10) }

// parseAckID returns the subscription and delivery number of an ack id.
func parseAckID(id string) (string, uint64, error) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return "", 0, errInvalidAckID(id)
	}
	n, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil {
		return "", 0, errInvalidAckID(id)
	}
	if _, _, err := ParseName(kindSubscriptions, id[:i]); err != nil {
		return "", 0, errInvalidAckID(id)
	}
	return id[:i], n, nil
}

// backoff is the delay before redelivering en after a failed attempt:
// the retry policy's exponential backoff, or for a push subscription
// without one, production's push backoff (100 ms doubling to 60 s); a
// pull subscription without one redelivers at once.
func (s *subState) backoff(en *entry) time.Duration {
	if r := s.cfg.Retry; r != nil {
		return expBackoff(r.MinimumBackoff, r.MaximumBackoff, en.attempts)
	}
	if s.cfg.Push != nil {
		return expBackoff(100*time.Millisecond, 60*time.Second, en.attempts)
	}
	return 0
}

func expBackoff(lo, hi time.Duration, attempts int) time.Duration {
	d := lo
	for i := 1; i < attempts && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// nack ends en's lease without acknowledging it: it is dead-lettered
// when it has used its delivery attempts, else redelivered after the
// backoff. With ordering, the key's later outstanding messages are
// redelivered too, after it. It returns en when it must be
// dead-lettered (the caller forwards it outside the lock).
func (e *Engine) nack(s *subState, en *entry) *entry {
	s.release(en)
	if s.ordered(en) {
		for _, o := range s.leases {
			if o.seq > en.seq && o.msg.OrderingKey == en.msg.OrderingKey {
				s.release(o)
				s.unbusy(o)
				o.state = stReady
				s.ready.ReplaceOrInsert(o)
			}
		}
	}
	if dl := s.cfg.DeadLetter; dl != nil && en.attempts >= dl.maxAttempts() {
		s.unbusy(en)
		en.state = stReady // drop expects a ready entry to be in ready
		s.ready.ReplaceOrInsert(en)
		return en
	}
	if d := s.backoff(en); d > 0 {
		en.state = stDelayed
		en.notBefore = e.now().Add(d)
		e.addTimer(en.notBefore, s, en, 0)
	} else {
		s.unbusy(en)
		en.state = stReady
		s.ready.ReplaceOrInsert(en)
	}
	s.signal()
	return nil
}

func (p *DeadLetterPolicy) maxAttempts() int {
	if p.MaxDeliveryAttempts == 0 {
		return DefaultDeliveryAttempts
	}
	return p.MaxDeliveryAttempts
}

// timers: lease expiries and backoff ends, in one heap with lazy
// deletion (an item whose entry moved on is ignored when it fires).
type timerItem struct {
	at     time.Time
	s      *subState
	en     *entry
	ackNum uint64 // 0 for a backoff's end
}

type timerHeap []timerItem

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timerItem)) }
func (h *timerHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = timerItem{}
	*h = old[:len(old)-1]
	return it
}

func (e *Engine) addTimer(at time.Time, s *subState, en *entry, ackNum uint64) {
	if len(e.timers) >= e.timerCompactAt {
		e.compactTimers()
	}
	first := len(e.timers) == 0 || at.Before(e.timers[0].at)
	heap.Push(&e.timers, timerItem{at: at, s: s, en: en, ackNum: ackNum})
	if first {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// live reports whether a timer item still stands for its entry's lease
// or backoff.
func (it *timerItem) live() bool {
	s, en := it.s, it.en
	if s.deleted || s.entries[en.seq] != en {
		return false
	}
	if it.ackNum != 0 {
		return en.state == stOut && en.ackNum == it.ackNum
	}
	return en.state == stDelayed
}

// compactTimers drops the items of acknowledged or moved-on entries, so
// the heap is bounded by the live leases and backoffs, not by how many
// were handed out; amortized, since the next compaction waits for the
// heap to double.
func (e *Engine) compactTimers() {
	kept := e.timers[:0]
	for i := range e.timers {
		if e.timers[i].live() {
			kept = append(kept, e.timers[i])
		}
	}
	clear(e.timers[len(kept):])
	e.timers = kept
	heap.Init(&e.timers)
	e.timerCompactAt = max(2*len(kept), minTimerCompact)
}

const minTimerCompact = 4096

func (e *Engine) timerLoop() {
	defer e.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		e.mu.Lock()
		now := e.now()
		var dead []deadLetter
		for len(e.timers) > 0 && !e.timers[0].at.After(now) {
			it := heap.Pop(&e.timers).(timerItem)
			if d := e.fire(it, now); d != nil {
				dead = append(dead, *d)
			}
		}
		wait := time.Hour
		if len(e.timers) > 0 {
			wait = e.timers[0].at.Sub(now)
		}
		e.mu.Unlock()
		for _, d := range dead {
			e.forward(d)
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-e.wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		case <-e.stop:
			return
		}
	}
}

// fire handles one due timer item under the lock.
func (e *Engine) fire(it timerItem, now time.Time) *deadLetter {
	s, en := it.s, it.en
	if s.deleted || s.entries[en.seq] != en {
		return nil
	}
	if it.ackNum != 0 {
		if en.state != stOut || en.ackNum != it.ackNum {
			return nil
		}
		if en.deadline.After(now) { // extended: one item per lease
			e.addTimer(en.deadline, s, en, en.ackNum)
			return nil
		}
		e.emitExpire(s, en)
		if d := e.nack(s, en); d != nil {
			return e.deadLetterOf(s, d)
		}
		return nil
	}
	if en.state != stDelayed || en.notBefore.After(now) {
		return nil
	}
	s.unbusy(en)
	en.state = stReady
	s.ready.ReplaceOrInsert(en)
	s.signal()
	return nil
}
