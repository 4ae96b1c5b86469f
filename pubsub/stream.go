package pubsub

import (
	"context"
	"github.com/pyric/pyric/sandbox/service"
	"time"
)

// Stream is one StreamingPull (or push worker) session on a
// subscription: the engine owns its flow control and leases, the
// transport only moves requests and responses.
type Stream struct {
	e        *Engine
	sub      string
	lease    time.Duration
	maxMsgs  int
	maxBytes int64
	// out and outBytes are the stream's outstanding deliveries, guarded
	// by the engine's lock.
	out      int
	outBytes int64
	closed   bool
}

// streamBatch bounds one response of a stream.
const streamBatch = 1000

// OpenStream starts a session on sub: ackDeadline is the lease of what
// it receives (10 to 600 s; 0 means the subscription's), maxMsgs and maxBytes its flow control (0
// means no limit).
func (e *Engine) OpenStream(sub string, ackDeadline int, maxMsgs int, maxBytes int64) (*Stream, error) {
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return nil, err
	}
	if ackDeadline != 0 && (ackDeadline < MinAckDeadlineSeconds || ackDeadline > MaxAckDeadlineSeconds) {
		return nil, invalid("Invalid deadline %d; the deadline must be between 10 and 600 seconds (inclusive).", ackDeadline)
	}
	if maxMsgs < 0 || maxBytes < 0 {
		return nil, invalid("Invalid flow control settings: max_outstanding_messages and max_outstanding_bytes must not be negative.")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[sub]
	if s == nil || s.deleted {
		return nil, errSubNotFound
	}
	if s.cfg.Detached {
		return nil, errDetached
	}
	if ackDeadline == 0 { // unset: the subscription's own
		ackDeadline = s.cfg.AckDeadlineSeconds
	}
	return &Stream{e: e, sub: sub, lease: time.Duration(ackDeadline) * time.Second, maxMsgs: maxMsgs, maxBytes: maxBytes}, nil
}

// Subscription is the stream's subscription name.
func (st *Stream) Subscription() string { return st.sub }

// Properties reports whether the stream's subscription orders messages
// and has exactly-once delivery on.
func (st *Stream) Properties() (ordered, exactlyOnce bool) {
	st.e.mu.Lock()
	defer st.e.mu.Unlock()
	if s := st.e.subs[st.sub]; s != nil {
		return s.cfg.EnableMessageOrdering, s.cfg.EnableExactlyOnceDelivery
	}
	return false, false
}

// SetAckDeadline changes the lease of what the stream receives next.
func (st *Stream) SetAckDeadline(seconds int) error {
	if seconds < MinAckDeadlineSeconds || seconds > MaxAckDeadlineSeconds {
		return invalid("Invalid deadline %d; the deadline must be between 10 and 600 seconds (inclusive).", seconds)
	}
	st.e.mu.Lock()
	st.lease = time.Duration(seconds) * time.Second
	st.e.mu.Unlock()
	return nil
}

// Receive blocks until the stream may receive messages and some are
// deliverable, then leases a batch to it.
func (st *Stream) Receive(ctx context.Context) ([]Received, error) {
	e := st.e
	for {
		e.mu.Lock()
		if st.closed {
			e.mu.Unlock()
			return nil, context.Canceled
		}
		s := e.subs[st.sub]
		if s == nil || s.deleted {
			e.mu.Unlock()
			return nil, errSubNotFound
		}
		if s.cfg.Detached {
			e.mu.Unlock()
			return nil, errDetached
		}
		room := streamBatch
		if st.maxMsgs > 0 {
			room = min(room, st.maxMsgs-st.out)
		}
		var bytes int64
		if st.maxBytes > 0 {
			bytes = st.maxBytes - st.outBytes
			if bytes <= 0 {
				room = 0
			}
		}
		var got []Received
		var persist func(tx service.Tx) error
		if room > 0 {
			var picked []*entry
			got, picked = e.take(s, room, bytes, st.lease, st)
			persist = e.persistAttempts(s, picked)
		}
		wake := s.notify
		e.mu.Unlock()
		if len(got) > 0 {
			if persist != nil {
				_ = e.com.do(persist)
			}
			e.emitDeliver(s, got, "streamingPull")
			return got, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.stop:
			return nil, &Error{Kind: ErrUnavailable, Msg: "The Pub/Sub service is shutting down."}
		}
	}
}

// Close ends the session. Its outstanding messages keep their leases
// until they expire (or are acknowledged over another stream), as in
// production.
func (st *Stream) Close() {
	e := st.e
	e.mu.Lock()
	defer e.mu.Unlock()
	st.closed = true
	if s := e.subs[st.sub]; s != nil {
		for _, en := range s.leases {
			if en.holder == st {
				en.holder = nil
			}
		}
		s.signal()
	}
}
