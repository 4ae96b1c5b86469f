package databaseserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
)

// Long polling (/.lp) is the browser SDK's fallback when its websocket
// fails (or forceLongPolling()): a JSONP transport. The start request
// opens a session and answers with its id and password and the hello;
// every later request carries the client's messages, base64-encoded and
// cut into URL-sized segments, and is held until the server has messages
// for it (or a newer request replaces it). Responses are scripts calling
// the page's callbacks, numbered so the client can reorder them. A
// session nobody polls for lpTimeout is closed, running its onDisconnect
// operations, like a websocket that dropped.

var lpTimeout = 45 * time.Second

// lpHold is how long a poll waits for data; the SDK re-polls after 25 s.
var lpHold = 20 * time.Second

type lpSessions struct {
	mu sync.Mutex
	m  map[string]*lpSession
}

type lpSession struct {
	*session
	id, pw, cb string

	// inMu orders message handling: segments complete messages in
	// segment order, and two requests' messages must also be handled in
	// that order (an unlisten followed by a listen, say).
	inMu     sync.Mutex
	mu       sync.Mutex
	nextSeg  int
	segs     map[int]lpSeg
	partial  strings.Builder
	parts    int
	respNum  int
	release  chan struct{} // closed to release the poll being held
	pollMu   sync.Mutex    // one poll drains the queue at a time
	lastPoll time.Time
	closed   bool
	sessions *lpSessions
	sw       *lpSwitch // a websocket attaching to the session (upgrade.go)
}

type lpSeg struct {
	ts int
	d  string
}

// validCallback reports whether cb is a long-polling callback name the
// SDK sends: 1 to 40 letters, digits or underscores. (A loop, not a
// regexp: a bounded repetition compiles to a program as long as its bound,
// paid at every start.)
func validCallback(cb string) bool {
	if cb == "" || len(cb) > 40 {
		return false
	}
	for i := 0; i < len(cb); i++ {
		c := cb[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

func writeScript(w http.ResponseWriter, js string) {
	w.Header().Set("Content-Type", "application/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(js))
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (h *Handler) serveLP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("start") == "t":
		h.lpStart(w, r)
	case q.Get("dframe") == "t":
		h.lpDisconnectFrame(w, r)
	default:
		s := h.lpSession(q.Get("id"), q.Get("pw"))
		if s == nil {
			writeScript(w, "")
			return
		}
		if q.Get("disconn") == "t" {
			s.close()
			writeScript(w, "")
			return
		}
		s.poll(w, r)
	}
}

func (h *Handler) lpSession(id, pw string) *lpSession {
	h.lp.mu.Lock()
	defer h.lp.mu.Unlock()
	s := h.lp.m[id]
	if s == nil || s.pw != pw {
		return nil
	}
	return s
}

func (h *Handler) lpStart(w http.ResponseWriter, r *http.Request) {
	cb := r.URL.Query().Get("cb")
	if !validCallback(cb) {
		api.Message(w, http.StatusBadRequest, "long polling needs a callback id (cb) of letters and digits")
		return
	}
	conn := h.db.Connect(h.namespace(r), identity.Anonymous())
	s := &lpSession{session: &session{h: h, conn: conn}, id: conn.ID() + "-" + randHex(4), pw: randHex(8), cb: cb,
		segs: map[int]lpSeg{}, lastPoll: time.Now(), sessions: &h.lp, release: make(chan struct{})}
	h.lp.mu.Lock()
	if h.lp.m == nil {
		h.lp.m = map[string]*lpSession{}
	}
	h.lp.m[s.id] = s
	h.lp.mu.Unlock()
	s.session.onEnd = s.endTransmission
	go s.reap()
	hello, _ := json.Marshal(map[string]any{"t": "c", "d": map[string]any{"t": "h", "d": map[string]any{
		"ts": time.Now().UnixMilli(), "v": "5", "h": r.Host, "s": conn.ID(),
	}}})
	s.mu.Lock()
	n := s.respNum
	s.respNum++
	s.mu.Unlock()
	ids, _ := json.Marshal([]string{s.id, s.pw})
	writeScript(w, fmt.Sprintf("parent.pLPCommand%s('start',%s,%s);parent.pRTLPCB%s(%d,[%s]);",
		cb, jsonElem(ids, 0), jsonElem(ids, 1), cb, n, hello))
}

func jsonElem(arr []byte, i int) string {
	var xs []json.RawMessage
	_ = json.Unmarshal(arr, &xs)
	return string(xs[i])
}

// lpDisconnectFrame is the hidden page the SDK keeps while connected;
// when the SDK removes it (goOffline, page close) it tells the server.
func (h *Handler) lpDisconnectFrame(w http.ResponseWriter, r *http.Request) {
	id, pw := r.URL.Query().Get("id"), r.URL.Query().Get("pw")
	u := "/.lp?disconn=t&id=" + urlEscape(id) + "&pw=" + urlEscape(pw)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><body><script>
var sent=false;function bye(){if(sent)return;sent=true;try{navigator.sendBeacon(%q)}catch(e){new Image().src=%q}}
addEventListener('pagehide',bye);addEventListener('unload',bye);
</script></body></html>`, u, u)
}

func urlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// decodeLPSegment reads the SDK's web-safe base64 ("-_" and "." padding).
func decodeLPSegment(s string) ([]byte, error) {
	s = strings.NewReplacer("-", "+", "_", "/", ".", "=").Replace(s)
	return base64.StdEncoding.DecodeString(s)
}

// ingest takes the segments of one request and handles every message they
// complete, in segment order.
func (s *lpSession) ingest(r *http.Request) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	q := r.URL.Query()
	var msgs []string
	s.mu.Lock()
	for i := 0; ; i++ {
		segStr, ok := q["seg"+strconv.Itoa(i)]
		if !ok {
			break
		}
		seg, err1 := strconv.Atoi(segStr[0])
		ts, err2 := strconv.Atoi(q.Get("ts" + strconv.Itoa(i)))
		if err1 != nil || err2 != nil || ts < 1 || seg < s.nextSeg || seg > s.nextSeg+10000 {
			s.mu.Unlock()
			return fmt.Errorf("%w: bad long-poll segment", errFrame)
		}
		s.segs[seg] = lpSeg{ts: ts, d: q.Get("d" + strconv.Itoa(i))}
	}
	if len(s.segs) > 10000 {
		s.mu.Unlock()
		return fmt.Errorf("%w: too many long-poll segments outstanding", errFrame)
	}
	for {
		sg, ok := s.segs[s.nextSeg]
		if !ok {
			break
		}
		delete(s.segs, s.nextSeg)
		s.nextSeg++
		s.partial.WriteString(sg.d)
		s.parts++
		if s.partial.Len() > 4*database.MaxSDKWrite/3+4 {
			s.mu.Unlock()
			return fmt.Errorf("%w: a message over %d bytes", errFrame, database.MaxSDKWrite)
		}
		if s.parts == sg.ts {
			b, err := decodeLPSegment(s.partial.String())
			s.partial.Reset()
			s.parts = 0
			if err != nil {
				s.mu.Unlock()
				return fmt.Errorf("%w: a long-poll message that is not base64", errFrame)
			}
			msgs = append(msgs, string(b))
		}
	}
	s.mu.Unlock()
	for _, m := range msgs {
		if err := s.handle(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *lpSession) poll(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.lastPoll = time.Now()
	close(s.release) // a newer poll releases the one being held
	release := make(chan struct{})
	s.release = release
	s.mu.Unlock()
	if err := s.ingest(r); err != nil {
		s.close()
		writeScript(w, "")
		return
	}
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		// A websocket took the session over while this poll waited: the
		// connection's queue is the socket's now.
		writeScript(w, "")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), lpHold)
	defer cancel()
	go func() {
		select {
		case <-release:
			cancel()
		case <-ctx.Done():
		}
	}()
	items, err := s.conn.Next(ctx)
	s.mu.Lock()
	s.lastPoll = time.Now()
	s.mu.Unlock()
	if err != nil || len(items) == 0 {
		if err != nil && ctx.Err() == nil {
			// The connection ended.
			writeScript(w, fmt.Sprintf("parent.pLPCommand%s('close');", s.cb))
			return
		}
		writeScript(w, "")
		return
	}
	items, rest, switched := splitAtSwitch(items)
	var parts []string
	for _, it := range items {
		switch x := it.(type) {
		case reply:
			parts = append(parts, string(x))
		case database.Push:
			parts = append(parts, string(x.Encoded(encodePush)))
		}
	}
	if switched {
		parts = append(parts, string(frameEnd))
	}
	s.mu.Lock()
	n := s.respNum
	s.respNum++
	sw := s.sw
	s.mu.Unlock()
	if !switched {
		writeScript(w, fmt.Sprintf("parent.pRTLPCB%s(%d,[%s]);", s.cb, n, strings.Join(parts, ",")))
		return
	}
	// The last long-poll response: the final "n", then the close command
	// naming it, so the SDK closes this transport once it has read it.
	s.detach()
	sw.handoff <- rest
	writeScript(w, fmt.Sprintf("parent.pRTLPCB%s(%d,[%s]);parent.pLPCommand%s('close',%d);", s.cb, n, strings.Join(parts, ","), s.cb, n))
}

// detach ends the long-poll transport of a session a websocket has taken
// over, without closing the connection (no onDisconnect runs).
func (s *lpSession) detach() {
	s.mu.Lock()
	s.closed = true
	close(s.release)
	s.release = make(chan struct{})
	s.mu.Unlock()
	s.sessions.mu.Lock()
	delete(s.sessions.m, s.id)
	s.sessions.mu.Unlock()
}

// reap closes the session once nobody polls it.
func (s *lpSession) reap() {
	t := time.NewTicker(lpTimeout / 4)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		idle, closed := time.Since(s.lastPoll) > lpTimeout, s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		if idle && s.pollMu.TryLock() {
			s.pollMu.Unlock()
			s.close()
			return
		}
	}
}

func (s *lpSession) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.sessions.mu.Lock()
	delete(s.sessions.m, s.id)
	s.sessions.mu.Unlock()
	s.conn.Close()
}

// lpSessionIDs lists open sessions (tests).
func (h *Handler) lpSessionIDs() []string {
	h.lp.mu.Lock()
	defer h.lp.mu.Unlock()
	var ids []string
	for id := range h.lp.m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
