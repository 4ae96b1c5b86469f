package databaseserver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/database"
)

// The switch from long polling to a websocket, as the JS SDK drives it
// (its Connection: startUpgrade_, onSecondaryControl_,
// proceedWithUpgrade_, onControl_'s END_TRANSMISSION). A browser that
// starts on long polling (forceLongPolling, or the localStorage flag an
// earlier websocket failure left) opens /.ws?v=5&s=<session id> once the
// long-poll session's hello names the session. That socket attaches to
// the session, with no hello of its own:
//
//   - the server sends {"t":"c","d":{"t":"a","d":{}}} (switch ack) on it;
//   - the SDK pings it twice ({"t":"c","d":{"t":"p"}}), each answered
//     with {"t":"c","d":{"t":"o","d":{}}} (pong);
//   - the SDK acks on the socket and sends {"t":"c","d":{"t":"n"}} (end of
//     transmission) as its last long-poll message, then sends everything
//     on the socket;
//   - the server answers the long poll's "n" with a final "n" there,
//     after whatever was queued before it, and closes the long-poll
//     transport; from then on everything goes on the socket, which the
//     SDK promotes when it reads that "n".
//
// The session (its listens, auth, onDisconnect operations) carries on: the
// long-poll transport ends without running onDisconnect, which runs when
// the socket ends. Requests arriving on the socket before the long poll's
// "n" wait for it, so they are handled after every long-poll request.

// switchWait bounds how long a socket's first request waits for the long
// poll's end of transmission (the SDK gives up on a switch after 60 s).
var switchWait = 60 * time.Second

var (
	frameSwitchAck = []byte(`{"t":"c","d":{"t":"a","d":{}}}`)
	framePong      = []byte(`{"t":"c","d":{"t":"o","d":{}}}`)
	frameEnd       = []byte(`{"t":"c","d":{"t":"n","d":{}}}`)
)

// lpSwitch is a websocket attaching to a long-poll session.
type lpSwitch struct {
	ended   chan struct{} // closed when the long poll's "n" is handled
	handoff chan []any    // the queue's items past the switch, for the socket
	once    sync.Once
}

// switchMarker is queued on the connection when the long poll's "n"
// arrives: what is queued before it goes on the long poll, what after it
// on the socket.
type switchMarker struct{}

// lpByConn finds the open long-poll session of a connection id (the hello's
// session id).
func (h *Handler) lpByConn(connID string) *lpSession {
	h.lp.mu.Lock()
	defer h.lp.mu.Unlock()
	for _, s := range h.lp.m {
		if s.conn.ID() == connID {
			return s
		}
	}
	return nil
}

// endTransmission handles the long poll's "n": the switch marker is queued
// behind every reply the session's earlier requests produced.
func (s *lpSession) endTransmission() {
	s.mu.Lock()
	sw := s.sw
	s.mu.Unlock()
	if sw == nil {
		return
	}
	sw.once.Do(func() {
		s.conn.Send(switchMarker{})
		close(sw.ended)
	})
}

// upgradeWS serves a socket attaching to long-poll session lp.
func (h *Handler) upgradeWS(w http.ResponseWriter, r *http.Request, lp *lpSession) {
	lp.mu.Lock()
	if lp.closed || lp.sw != nil {
		lp.mu.Unlock()
		h.resetWS(w, r)
		return
	}
	sw := &lpSwitch{ended: make(chan struct{}), handoff: make(chan []any, 1)}
	lp.sw = sw
	lp.mu.Unlock()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		lp.abandonSwitch(sw)
		return
	}
	ws.SetReadLimit(4 * MaxFrame * 4)
	s := &session{h: h, ws: ws, conn: lp.conn, asm: assembler{max: database.MaxSDKWrite}}
	var wmu sync.Mutex
	write := func(ctx context.Context, b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return ws.Write(wctx, websocket.MessageText, b)
	}
	s.write = write
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if write(ctx, frameSwitchAck) != nil {
		lp.abandonSwitch(sw)
		return
	}
	lp.releasePoll()
	switched := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var rest []any
		select {
		case rest = <-sw.handoff:
		case <-ctx.Done():
			return
		}
		close(switched)
		if s.writeItems(ctx, rest) != nil {
			cancel()
			return
		}
		s.writeLoop(ctx)
		cancel()
	}()
	reason := s.upgradeReadLoop(ctx, sw, lp)
	cancel()
	<-done
	select {
	case <-switched:
		// The socket carried the session: its end is the session's end.
		lp.conn.Close()
	default:
		lp.abandonSwitch(sw)
	}
	_ = ws.Close(websocket.StatusNormalClosure, reason)
}

// upgradeReadLoop is readLoop for an attaching socket: pings are answered
// on the socket at once, requests wait for the long poll's end. The
// SDK's ack on the socket releases the poll the long poll holds, as the
// socket's attaching did (see releasePoll).
func (s *session) upgradeReadLoop(ctx context.Context, sw *lpSwitch, lp *lpSession) string {
	for {
		rctx, cancel := context.WithTimeout(ctx, idleTimeout)
		typ, data, err := s.ws.Read(rctx)
		cancel()
		if err != nil {
			return ""
		}
		if typ != websocket.MessageText {
			continue
		}
		msg, ok, err := s.asm.feed(string(data))
		if err != nil {
			return err.Error()
		}
		if !ok {
			continue
		}
		env, _, ctl, err := decodeMessage(msg)
		if err != nil {
			return err.Error()
		}
		if env == "c" {
			if ctl == "p" && s.write(ctx, framePong) != nil {
				return ""
			}
			if ctl == "a" {
				lp.releasePoll() // the SDK's end of transmission follows on the long poll
			}
			continue // the SDK's switch ack ("a") needs no answer
		}
		select {
		case <-sw.ended:
		case <-ctx.Done():
			return ""
		case <-time.After(switchWait):
			return "the long poll never ended its transmission"
		}
		if err := s.handle(msg); err != nil {
			return err.Error()
		}
	}
}

// releasePoll answers the poll the long poll holds (empty, as when it
// waited its time out) without waiting for data. A page has six HTTP/1.1
// connections to a host and the SDK keeps a poll held on one of them per
// long-poll session; with six sessions in one page (an app per test, or
// per tab) every connection holds a poll and the requests that carry the
// SDK's messages — its writes, and the end of transmission that completes
// the switch — wait in the browser for one to be answered. Once the
// session is moving onto a socket, nothing needs the poll held: answering
// it when the socket attaches and again when the SDK acks the switch
// frees a connection for what is waiting (the SDK re-polls).
func (s *lpSession) releasePoll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	close(s.release)
	s.release = make(chan struct{})
}

// abandonSwitch forgets a switch whose socket ended before it completed:
// the session stays on long polling.
func (s *lpSession) abandonSwitch(sw *lpSwitch) {
	s.mu.Lock()
	if s.sw == sw {
		select {
		case <-sw.ended:
			// The long poll has ended its transmission: the session has
			// no transport left.
			s.mu.Unlock()
			s.close()
			return
		default:
		}
		s.sw = nil
	}
	s.mu.Unlock()
}

// resetWS answers a socket naming a session that cannot take it with the
// protocol's reset, which makes the SDK drop the attempt and stay on long
// polling.
func (h *Handler) resetWS(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"t": "c", "d": map[string]any{"t": "r", "d": r.Host}})
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	_ = ws.Write(ctx, websocket.MessageText, b)
	_ = ws.Close(websocket.StatusNormalClosure, "no such session")
}

// splitAtSwitch cuts a drained batch at the switch marker.
func splitAtSwitch(items []any) (before, after []any, found bool) {
	for i, it := range items {
		if _, ok := it.(switchMarker); ok {
			return items[:i], items[i+1:], true
		}
	}
	return items, nil, false
}
