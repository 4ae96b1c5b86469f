package pubsub

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

func seqOf(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-8:]) }

// checkMessages applies production's limits to a publish.
func checkMessages(msgs []*Message) error {
	if len(msgs) == 0 {
		return errNoMessages
	}
	if len(msgs) > MaxPublishMessages {
		return invalid("The value for message_count is too large. You passed %d in the request, but the maximum value is %d.", len(msgs), MaxPublishMessages)
	}
	total := 0
	for _, m := range msgs {
		if len(m.Data) == 0 && len(m.Attributes) == 0 {
			return errEmptyMessages
		}
		if len(m.Attributes) > MaxAttributes {
			return invalid("The value for attribute_count is too large. You passed %d in the request, but the maximum value is %d.", len(m.Attributes), MaxAttributes)
		}
		for k, v := range m.Attributes {
			if len(k) > MaxAttributeKeyBytes {
				return invalid("The value for attribute key size is too large. You passed %d in the request, but the maximum value is %d.", len(k), MaxAttributeKeyBytes)
			}
			if len(v) > MaxAttributeValBytes {
				return invalid("The value for attribute value size is too large. You passed %d in the request, but the maximum value is %d.", len(v), MaxAttributeValBytes)
			}
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return invalid("Attribute keys and values must be valid UTF-8 (key %q).", k)
			}
		}
		if len(m.OrderingKey) > MaxOrderingKeyBytes {
			return invalid("The value for ordering_key size is too large. You passed %d in the request, but the maximum value is %d.", len(m.OrderingKey), MaxOrderingKeyBytes)
		}
		n := m.size()
		if n > MaxMessageBytes {
			return invalid("The value for message size is too large. You passed %d in the request, but the maximum value is %d.", n, MaxMessageBytes)
		}
		total += n
	}
	if total > MaxPublishBytes {
		return invalid("The value for request_size is too large. You passed %d in the request, but the maximum value is %d.", total, MaxPublishBytes)
	}
	return nil
}

// fanout is one message bound for one queue.
type fanout struct {
	s   *subState // nil for a snapshot's queue
	uid string
	seq uint64
	rec *record
	msg int       // the message's index in the publish
	ref storedRef // where the queue's value holds it (set by queueValues)
}

// queueValues builds the stored values of a publish's fanout (in
// sequence order per queue): one key per queue, a plain record when the
// queue gets one message, else a segment; queues that get the same
// messages share one segment's bytes. It sets each fanout's ref.
func (e *Engine) queueValues(outs []fanout, enc [][]byte) (keys, vals [][]byte) {
	if len(enc) == 1 { // one message: a record per queue
		keys, vals = make([][]byte, len(outs)), make([][]byte, len(outs))
		for i, o := range outs {
			keys[i], vals[i] = queueKey(o.uid, o.seq), enc[0]
		}
		return keys, vals
	}
	// publish appends the fanouts message by message, queue by queue
	// within a message: gather each queue's.
	byQueue := map[string][]int{}
	var order []string
	for i, o := range outs {
		if _, ok := byQueue[o.uid]; !ok {
			order = append(order, o.uid)
		}
		byQueue[o.uid] = append(byQueue[o.uid], i)
	}
	shared := map[string][]byte{} // segment bytes by the message indexes they hold
	for _, uid := range order {
		idx := byQueue[uid]
		first := outs[idx[0]].seq
		keys = append(keys, queueKey(uid, first))
		if len(idx) == 1 {
			vals = append(vals, enc[outs[idx[0]].msg])
			continue
		}
		sig := make([]byte, 0, 4*len(idx))
		for _, i := range idx {
			sig = binary.AppendUvarint(sig, uint64(outs[i].msg))
		}
		v, ok := shared[string(sig)]
		if !ok {
			seqs := make([]uint64, len(idx))
			recs := make([][]byte, len(idx))
			n := 16
			for j, i := range idx {
				seqs[j], recs[j] = outs[i].seq, enc[outs[i].msg]
				n += len(recs[j]) + 10
			}
			v = appendSegment(make([]byte, 0, n), seqs, recs)
			shared[string(sig)] = v
		}
		vals = append(vals, v)
		for j, i := range idx {
			outs[i].ref = storedRef{seg: first, idx: j}
		}
	}
	return keys, vals
}

// Publish stores messages on a topic and returns their ids once every
// subscription's copy is durable.
func (e *Engine) Publish(topic string, msgs []*Message) ([]string, error) {
	if _, _, err := ParseName(kindTopics, topic); err != nil {
		return nil, err
	}
	if err := checkMessages(msgs); err != nil {
		return nil, err
	}
	if err := e.conforming(topic, msgs); err != nil {
		return nil, err
	}
	ids, err := e.publish(topic, msgs, "")
	if errors.Is(err, errTopicNotFound) && e.awaitTopics() {
		return e.publish(topic, msgs, "")
	}
	return ids, err
}

func (e *Engine) publish(topic string, msgs []*Message, deadFrom string) ([]string, error) {
	if err := e.full(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	t := e.topics[topic]
	if t == nil {
		e.mu.Unlock()
		return nil, errTopicNotFound
	}
	now := e.now().UTC()
	// One allocation each for the messages, their records and their
	// ids (one string, sliced), not one per message.
	ids := make([]string, len(msgs))
	stored := make([]*Message, len(msgs))
	copies := make([]Message, len(msgs))
	recs := make([]record, len(msgs))
	first := e.lastID + 1
	e.lastID += uint64(len(msgs))
	digits := make([]byte, 0, len(msgs)*(len(strconv.FormatUint(e.lastID, 10))))
	ends := make([]int, len(msgs))
	for i := range msgs {
		digits = strconv.AppendUint(digits, first+uint64(i), 10)
		ends[i] = len(digits)
	}
	allIDs := string(digits)
	outs := make([]fanout, 0, len(msgs)*(len(t.subs)+len(t.snaps)))
	for i, m := range msgs {
		seq := first + uint64(i)
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		c := &copies[i]
		*c = Message{ID: allIDs[from:ends[i]], Data: m.Data, Attributes: maps.Clone(m.Attributes), OrderingKey: m.OrderingKey, PublishTime: now}
		ids[i], stored[i] = c.ID, c
		rec := &recs[i]
		rec.Msg = c
		for _, s := range t.subs {
			if s.cfg.Detached || !s.filter.Matches(c.Attributes) {
				continue
			}
			s.pending[seq] = true
			outs = append(outs, fanout{s: s, uid: s.uid, seq: seq, rec: rec, msg: i})
		}
		for _, ss := range t.snaps {
			outs = append(outs, fanout{uid: ss.uid, seq: seq, rec: rec, msg: i})
		}
	}
	last := e.lastID
	e.mu.Unlock()

	// Encode here, in the publisher's goroutine, so the one commit
	// goroutine only writes: each message once, then one value per
	// queue (a segment when it gets several messages, see segment.go).
	enc := make([][]byte, len(msgs))
	if len(outs) > 0 {
		n := 0
		for i := range recs {
			n += recordSize(&recs[i])
		}
		all := make([]byte, 0, n)
		for i := range recs {
			at := len(all)
			all = appendRecord(all, &recs[i])
			enc[i] = all[at:len(all):len(all)]
		}
	}
	keys, vals := e.queueValues(outs, enc)
	evs := []event.Event{publishEvent(topic, stored, len(outs), deadFrom)}
	err := e.com.do(func(tx service.Tx) error {
		for i := range keys {
			if err := tx.Put(keys[i], vals[i]); err != nil {
				return err
			}
		}
		if err := e.holdPublish(tx, evs); err != nil {
			return err
		}
		if cur := tx.Get(keyLastID); cur != nil {
			if n, _ := strconv.ParseUint(string(cur), 10, 64); n >= last {
				return nil
			}
		}
		return tx.Put(keyLastID, []byte(strconv.FormatUint(last, 10)))
	})

	e.mu.Lock()
	touched := map[*subState]bool{}
	var slab []entry
	if err == nil {
		slab = make([]entry, len(outs))
	}
	for i, o := range outs {
		if o.s == nil {
			continue
		}
		if err != nil {
			delete(o.s.pending, o.seq)
			continue
		}
		if !o.s.deleted && o.s.uid == o.uid {
			o.s.backlog++
		}
		e.insert(o.s, o.uid, o.rec, o.seq, o.ref, &slab[i])
		touched[o.s] = true
	}
	for s := range touched {
		s.signal()
	}
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	e.emit(evs[0])
	return ids, nil
}

// Pull leases up to max messages of a subscription; unless immediate it
// waits, until ctx ends or Options.MaxPullWait passes, for one to come.
func (e *Engine) Pull(ctx context.Context, sub string, max int, immediate bool) ([]Received, error) {
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, errNoMaxMessages
	}
	max = min(max, MaxPullMessages)
	var timeout <-chan time.Time
	if !immediate {
		t := time.NewTimer(e.opts.MaxPullWait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		e.mu.Lock()
		s := e.subs[sub]
		if s == nil || s.deleted {
			e.mu.Unlock()
			return nil, errSubNotFound
		}
		if s.cfg.Detached {
			e.mu.Unlock()
			return nil, errDetached
		}
		got, picked := e.take(s, max, 0, time.Duration(s.cfg.AckDeadlineSeconds)*time.Second, nil)
		wake := s.notify
		persist := e.persistAttempts(s, picked)
		e.mu.Unlock()
		if len(got) > 0 || immediate {
			if persist != nil {
				_ = e.com.do(persist) // best effort: a lost count means one more delivery
			}
			e.emitDeliver(s, got, "pull")
			return got, nil
		}
		select {
		case <-wake:
		case <-timeout:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.stop:
			return nil, &Error{Kind: ErrUnavailable, Msg: "The Pub/Sub service is shutting down."}
		}
	}
}

// ackRef is a parsed ack id.
type ackRef struct {
	sub string
	n   uint64
}

// parseAckIDs parses the ack ids of a call on sub (a name already
// checked): those of sub itself, nearly all of them, skip the name check.
func parseAckIDs(sub string, ids []string) ([]ackRef, error) {
	if len(ids) == 0 {
		return nil, errNoAckIDs
	}
	out := make([]ackRef, len(ids))
	for i, id := range ids {
		if rest, ok := strings.CutPrefix(id, sub); ok && len(rest) > 1 && rest[0] == ':' {
			if n, err := strconv.ParseUint(rest[1:], 10, 64); err == nil {
				out[i] = ackRef{sub, n}
				continue
			}
		}
		s, n, err := parseAckID(id)
		if err != nil {
			return nil, err
		}
		out[i] = ackRef{s, n}
	}
	return out, nil
}

// Acknowledge acknowledges deliveries of a subscription; ack ids of
// expired or unknown deliveries are ignored, as in production, except on
// a subscription with exactly-once delivery, where they fail with an
// *AckIDsError (the valid ones are acknowledged all the same).
func (e *Engine) Acknowledge(sub string, ackIDs []string) error {
	invalid, once, err := e.AcknowledgeEach(sub, ackIDs)
	return ackErr(invalid, once, err)
}

// AcknowledgeEach acknowledges deliveries of a subscription and returns
// the ack ids that named no outstanding delivery (expired, already
// acknowledged or unknown) and whether the subscription has exactly-once
// delivery, for a caller that confirms each ack id (StreamingPull).
func (e *Engine) AcknowledgeEach(sub string, ackIDs []string) (invalid []string, exactlyOnce bool, err error) {
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return nil, false, err
	}
	refs, err := parseAckIDs(sub, ackIDs)
	if err != nil {
		return nil, false, err
	}
	e.mu.Lock()
	s := e.subs[sub]
	if s == nil || s.deleted {
		e.mu.Unlock()
		return nil, false, errSubNotFound
	}
	once := s.cfg.EnableExactlyOnceDelivery
	now := e.now()
	var acked []*entry
	for i, r := range refs {
		en := s.leases[r.n]
		// With exactly-once delivery a lease past its deadline is gone
		// even before its timer hands the message out again.
		if en == nil || r.sub != sub || once && now.After(en.deadline) {
			invalid = append(invalid, ackIDs[i])
			continue
		}
		s.drop(en)
		acked = append(acked, en)
	}
	if len(acked) > 0 {
		s.signal()
	}
	uid, retain := s.uid, s.cfg.RetainAckedMessages
	e.mu.Unlock()
	if len(acked) == 0 {
		return invalid, once, nil
	}
	rs := make([]removed, len(acked))
	for i, en := range acked {
		rs[i] = removed{seq: en.seq, ref: en.ref, msg: en.msg}
	}
	err = e.com.do(func(tx service.Tx) error { return removeStored(tx, uid, rs, retain) })
	e.emitAck(s, acked, "ack")
	return invalid, once, err
}

// ModifyAckDeadline sets the deadline of deliveries to seconds from now;
// 0 is a nack: the messages are redelivered (after the retry policy's
// backoff) or dead-lettered.
// On a subscription with exactly-once delivery, ack ids of no
// outstanding delivery fail with an *AckIDsError.
func (e *Engine) ModifyAckDeadline(sub string, ackIDs []string, seconds int) error {
	invalid, once, err := e.ModifyAckDeadlineEach(sub, ackIDs, seconds)
	return ackErr(invalid, once, err)
}

// ModifyAckDeadlineEach is ModifyAckDeadline returning, as
// AcknowledgeEach does, the ack ids that named no outstanding delivery.
func (e *Engine) ModifyAckDeadlineEach(sub string, ackIDs []string, seconds int) (invalid []string, exactlyOnce bool, err error) {
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return nil, false, err
	}
	if seconds < 0 {
		return nil, false, errNegativeDeadline
	}
	refs, err := parseAckIDs(sub, ackIDs)
	if err != nil {
		return nil, false, err
	}
	seconds = min(seconds, MaxAckDeadlineSeconds)
	e.mu.Lock()
	s := e.subs[sub]
	if s == nil || s.deleted {
		e.mu.Unlock()
		return nil, false, errSubNotFound
	}
	once := s.cfg.EnableExactlyOnceDelivery
	now := e.now()
	var nacked []*entry
	var dead []deadLetter
	for i, r := range refs {
		en := s.leases[r.n]
		if en == nil || r.sub != sub || once && now.After(en.deadline) {
			invalid = append(invalid, ackIDs[i])
			continue
		}
		if seconds > 0 {
			d := now.Add(time.Duration(seconds) * time.Second)
			// A later deadline is picked up by the lease's timer when it
			// fires; only an earlier one needs its own.
			if d.Before(en.deadline) {
				e.addTimer(d, s, en, en.ackNum)
			}
			en.deadline = d
			continue
		}
		nacked = append(nacked, en)
		if d := e.nack(s, en); d != nil {
			if dl := e.deadLetterOf(s, d); dl != nil {
				dead = append(dead, *dl)
			}
		}
	}
	e.mu.Unlock()
	if len(nacked) > 0 {
		e.emitAck(s, nacked, "nack")
	}
	for _, d := range dead {
		e.forward(d)
	}
	return invalid, once, nil
}

// ackErr is the error of an ack or deadline change: on a subscription
// with exactly-once delivery, ack ids of no outstanding delivery fail.
func ackErr(invalid []string, exactlyOnce bool, err error) error {
	if err != nil || !exactlyOnce || len(invalid) == 0 {
		return err
	}
	return &AckIDsError{Invalid: invalid}
}

// deadLetter is a message leaving a subscription for its dead-letter
// topic.
type deadLetter struct {
	s      *subState
	uid    string
	retain bool // the subscription retains acknowledged messages
	en     *entry
	topic  string
}

// deadLetterOf takes en, which used its delivery attempts, out of the
// subscription when its dead-letter topic exists (else it stays and is
// redelivered, as production keeps messages it cannot forward).
func (e *Engine) deadLetterOf(s *subState, en *entry) *deadLetter {
	dl := s.cfg.DeadLetter
	if e.topics[dl.Topic] == nil {
		s.signal()
		return nil
	}
	s.drop(en)
	s.signal()
	return &deadLetter{s: s, uid: s.uid, retain: s.cfg.RetainAckedMessages, en: en, topic: dl.Topic}
}

// forward publishes a dead-lettered message to its topic with
// production's CloudPubSubDeadLetterSource* attributes, then removes it
// from its subscription. A crash between the two redelivers it, never
// loses it.
func (e *Engine) forward(d deadLetter) {
	m := d.en.msg
	attrs := maps.Clone(m.Attributes)
	if attrs == nil {
		attrs = map[string]string{}
	}
	_, subID, _ := ParseName(kindSubscriptions, d.s.cfg.Name)
	attrs["CloudPubSubDeadLetterSourceDeliveryCount"] = strconv.Itoa(d.en.attempts)
	attrs["CloudPubSubDeadLetterSourceSubscription"] = subID
	attrs["CloudPubSubDeadLetterSourceSubscriptionProject"] = ProjectOf(d.s.cfg.Name)
	attrs["CloudPubSubDeadLetterSourceTopicPublishTime"] = m.PublishTime.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	nm := &Message{Data: m.Data, Attributes: attrs, OrderingKey: m.OrderingKey}
	if _, err := e.publish(d.topic, []*Message{nm}, d.s.cfg.Name); err != nil {
		// The topic went away meanwhile: keep the message.
		e.mu.Lock()
		if !d.s.deleted && d.s.uid == d.uid {
			d.s.backlog++
			d.s.add(&record{Msg: m, Attempts: d.en.attempts}, d.en.seq, d.en.ref, nil)
			d.s.signal()
		}
		e.mu.Unlock()
		return
	}
	gone := []removed{{seq: d.en.seq, ref: d.en.ref, drop: true}}
	_ = e.com.do(func(tx service.Tx) error { return removeStored(tx, d.uid, gone, d.retain) })
	e.emitDeadLetter(d.s, d.en, d.topic)
}
