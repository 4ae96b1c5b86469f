package databaseserver

import "time"

// InFlightBytes is the body bytes REST writes in flight hold against the
// handler's budget, for tests that wait until a write has taken its share.
func InFlightBytes(h *Handler) int64 {
	return h.inflight.Used()
}

// PollHeld reports whether long-poll session id has a poll being held
// (one that holds the session's poll lock), for tests that must know the
// server is holding a poll before they act on the session.
func PollHeld(h *Handler, id string) bool {
	h.lp.mu.Lock()
	s := h.lp.m[id]
	h.lp.mu.Unlock()
	if s == nil {
		return false
	}
	if s.pollMu.TryLock() {
		s.pollMu.Unlock()
		return false
	}
	return true
}

// SetIdleTimeout sets how long a websocket may stay silent, for the test
// that watches it close; the returned func restores it.
func SetIdleTimeout(d time.Duration) (restore func()) {
	old := idleTimeout
	idleTimeout = d
	return func() { idleTimeout = old }
}

// SetWriteTimeout sets how long one websocket frame may take to write,
// for the test that watches a socket that stopped reading close; the
// returned func restores it.
func SetWriteTimeout(d time.Duration) (restore func()) {
	old := writeTimeout
	writeTimeout = d
	return func() { writeTimeout = old }
}
