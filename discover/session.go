package discover

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Session limits (defaults of SessionOptions).
const (
	DefaultMaxSessions     = 8
	DefaultMaxSessionBytes = 32 << 20
	DefaultSessionTTL      = 30 * time.Minute
	DefaultEvictionLog     = 64
)

// Session error codes.
const (
	SessionExpired         = "SESSION_EXPIRED"
	SessionEvicted         = "SESSION_EVICTED"
	SessionPayloadTooLarge = "SESSION_PAYLOAD_TOO_LARGE"
	SessionMalformedToken  = "SESSION_MALFORMED_TOKEN"
)

// SessionError is why a continuation could not be used, with what to do.
type SessionError struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	RecoveryHint string `json:"recoveryHint"`
}

func (e *SessionError) Error() string { return e.Code + ": " + e.Message }

// SessionOptions bound a SessionStore.
type SessionOptions struct {
	MaxSessions     int
	MaxSessionBytes int
	TTL             time.Duration
	EvictionLog     int
	Now             func() time.Time
}

// SessionStore keeps paused walks in memory: at most MaxSessions (the
// least recently used is evicted), each at most MaxSessionBytes, dropped
// after TTL without use. Tokens of evicted and expired sessions are
// remembered in a bounded log so their next use says which happened;
// past the log an old token reads as expired (same recovery).
type SessionStore struct {
	opts     SessionOptions
	mu       sync.Mutex
	sessions map[string]*session
	evicted  []evictedToken
}

type session struct {
	state    []byte
	accessed time.Time
}

type evictedToken struct {
	token, code string
}

// NewSessionStore returns a store; zero options take the defaults.
func NewSessionStore(opts SessionOptions) *SessionStore {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxSessionBytes <= 0 {
		opts.MaxSessionBytes = DefaultMaxSessionBytes
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultSessionTTL
	}
	if opts.EvictionLog <= 0 {
		opts.EvictionLog = DefaultEvictionLog
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &SessionStore{opts: opts, sessions: map[string]*session{}}
}

const tokenPrefix = "disc_"

// newToken mints disc_ + base64url of a 16-byte ULID (48-bit milliseconds,
// 80 random bits).
func newToken(now time.Time) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	_, _ = rand.Read(b[6:])
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

func validToken(tok string) bool {
	if !strings.HasPrefix(tok, tokenPrefix) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok[len(tokenPrefix):])
	return err == nil && len(b) == 16
}

const reissue = "call firestore_discover_paths again without continuation to start a fresh walk"

func (s *SessionStore) sweep(now time.Time) {
	for tok, ss := range s.sessions {
		if now.Sub(ss.accessed) > s.opts.TTL {
			delete(s.sessions, tok)
			s.logEviction(tok, SessionExpired)
		}
	}
}

func (s *SessionStore) logEviction(tok, code string) {
	s.evicted = append(s.evicted, evictedToken{tok, code})
	if len(s.evicted) > s.opts.EvictionLog {
		s.evicted = s.evicted[len(s.evicted)-s.opts.EvictionLog:]
	}
}

// Create stores a new session and returns its token.
func (s *SessionStore) Create(state []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	s.sweep(now)
	if len(state) > s.opts.MaxSessionBytes {
		return "", s.tooLarge(len(state))
	}
	for len(s.sessions) >= s.opts.MaxSessions {
		var lru string
		var at time.Time
		for tok, ss := range s.sessions {
			if lru == "" || ss.accessed.Before(at) || (ss.accessed.Equal(at) && tok < lru) {
				lru, at = tok, ss.accessed
			}
		}
		delete(s.sessions, lru)
		s.logEviction(lru, SessionEvicted)
	}
	tok := newToken(now)
	s.sessions[tok] = &session{state: state, accessed: now}
	return tok, nil
}

func (s *SessionStore) tooLarge(n int) *SessionError {
	return &SessionError{Code: SessionPayloadTooLarge,
		Message:      fmt.Sprintf("the paused walk's state is %d bytes; a session holds at most %d", n, s.opts.MaxSessionBytes),
		RecoveryHint: "narrow the walk with rootPrefix or a smaller maxDepth/maxSamples, or lower maxBatchBytes so it pauses earlier"}
}

// Get returns a session's state and keeps it warm.
func (s *SessionStore) Get(tok string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	s.sweep(now)
	if !validToken(tok) {
		return nil, &SessionError{Code: SessionMalformedToken, Message: fmt.Sprintf("%q is not a continuation token (want disc_ followed by 22 base64url characters)", truncate(tok, 40)),
			RecoveryHint: "pass the continuation exactly as a previous call returned it, or " + reissue}
	}
	if ss, ok := s.sessions[tok]; ok {
		ss.accessed = now
		return ss.state, nil
	}
	for i := len(s.evicted) - 1; i >= 0; i-- {
		if s.evicted[i].token == tok && s.evicted[i].code == SessionEvicted {
			return nil, &SessionError{Code: SessionEvicted, Message: fmt.Sprintf("the session was evicted: more than %d paused walks were open at once", s.opts.MaxSessions),
				RecoveryHint: reissue + "; finish walks one at a time to avoid evictions"}
		}
	}
	return nil, &SessionError{Code: SessionExpired, Message: fmt.Sprintf("no paused walk has this token: it expired (sessions live %s without use) or was already finished", s.opts.TTL),
		RecoveryHint: reissue}
}

// Update replaces a session's state.
func (s *SessionStore) Update(tok string, state []byte) error {
	if _, err := s.Get(tok); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(state) > s.opts.MaxSessionBytes {
		return s.tooLarge(len(state))
	}
	if ss, ok := s.sessions[tok]; ok {
		ss.state = state
		ss.accessed = s.opts.Now()
	}
	return nil
}

// Delete forgets a session; it reports whether one was removed.
func (s *SessionStore) Delete(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[tok]
	delete(s.sessions, tok)
	return ok
}

// Len is the number of live sessions.
func (s *SessionStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
