package firestoreserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// WebChannel is how the browser build of the Firebase JS SDK carries the
// Listen and Write streams: BrowserChannel v8 over plain HTTP/1.1
// (wire-protocols.md §2.3, and transcripts of the official emulator with
// firebase@12.19.0 in Chromium). A session is
//
//	POST .../channel?VER=8&RID=n&CVER=22      handshake: form body with
//	     headers=<"K:V\r\n"…>&count=1&ofs=0&req0___data__=<JSON request>
//	  ← <len>\n[[0,["c","<SID>","",8,12,30000]]]
//	GET  .../channel?SID=…&RID=rpc&AID=<last array id seen>&CI=0|1&TYPE=xmlhttp
//	  ← <len>\n[[1,[<JSON response>]],[2,["noop"]],…]   (the back channel:
//	    streamed and kept open when CI=0, one batch per request when CI=1)
//	POST .../channel?SID=…&RID=n&AID=…        forward channel: count=k&ofs=o&
//	     req0___data__=…; ← <len>\n[1,<last array id>,7]
//	POST .../channel?SID=…&TYPE=terminate     end of the session
//
// Every request and response is proto3 JSON, exactly as over REST. An RPC
// error is one message {"error":{"message","status"}} after which the
// session is closed; the SDK then opens a new channel. Frame lengths count
// UTF-16 code units, so frames are written in ASCII-only JSON.

const webChannelPrefix = "/google.firestore.v1.Firestore/"

// Timings of the back channel: a noop keeps an idle streaming back channel
// (and the SDK's 45 s request watchdog) alive; a long poll with nothing to
// say ends after wcLongPoll, as the emulator's does after 30 s.
var (
	wcNoop      = 10 * time.Second
	wcLongPoll  = 30 * time.Second
	wcIdleLimit = 2 * time.Minute // a session without back channel for this long is dropped
)

// webChannel holds the sessions of one Handler.
type webChannel struct {
	s *Server

	mu       sync.Mutex
	sessions map[string]*wcSession
	drained  bool
}

func newWebChannel(s *Server) *webChannel {
	return &webChannel{s: s, sessions: map[string]*wcSession{}}
}

// wcMsg is one back-channel message with its array id.
type wcMsg struct {
	id   int
	data []byte // JSON, ASCII-only
}

// wcSession is one WebChannel session: one Listen or Write stream.
type wcSession struct {
	wc   *webChannel
	id   string
	kind string // "Listen" or "Write"
	who  identity.Identity
	db   string // the database from the URL (may be "")

	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	wake     chan struct{} // signalled when msgs grows or the session closes
	msgs     []wcMsg       // not yet acknowledged, in id order
	nextID   int           // next array id
	closed   bool          // nothing more will be queued
	dropped  int           // the last array id dropped without an acknowledgement
	bcGen    int           // generation of the attached back channel
	attached bool
	seen     time.Time

	fwd     sync.Mutex // serializes forward messages
	nextOfs int        // next forward map id expected
	started bool       // the first request was handled

	// Listen
	ls *firestore.ListenStream
	// Write
	ws *firestore.WriteStream
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.URLEncoding.EncodeToString(b[:])
}

// serve routes a WebChannel request.
func (wc *webChannel) serve(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, webChannelPrefix)
	kind, ok := strings.CutSuffix(rest, "/channel")
	if !ok || (kind != "Listen" && kind != "Write") {
		writeError(w, status.Errorf(codes.NotFound, "%s: WebChannel serves %sListen/channel and %sWrite/channel", r.URL.Path, webChannelPrefix, webChannelPrefix))
		return
	}
	q := r.URL.Query()
	sid := q.Get("SID")
	switch {
	case sid == "" && r.Method == http.MethodPost:
		wc.handshake(w, r, kind, q)
	case sid == "":
		writeError(w, status.Errorf(codes.InvalidArgument, "%s %s: a WebChannel session starts with a POST without SID", r.Method, r.URL.Path))
	default:
		s := wc.session(sid, kind)
		if s == nil && q.Get("TYPE") == "terminate" {
			w.WriteHeader(http.StatusOK) // already over (after an error, the SDK still terminates)
			return
		}
		if s == nil {
			unknownSID(w)
			return
		}
		switch {
		case q.Get("TYPE") == "terminate":
			s.close()
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodGet:
			s.backChannel(w, r, q)
		case r.Method == http.MethodPost:
			s.forward(w, r, q)
		default:
			writeError(w, status.Errorf(codes.NotFound, "%s is not a WebChannel method", r.Method))
		}
	}
}

// unknownSID answers as BrowserChannel servers do; the client recognizes
// "Unknown SID" in a 400 body and starts a new session.
func unknownSID(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte("<html><head><title>Unknown SID</title></head><body>Unknown SID</body></html>"))
}

func (wc *webChannel) session(sid, kind string) *wcSession {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	s := wc.sessions[sid]
	if s == nil || s.kind != kind {
		return nil
	}
	return s
}

// Drain closes every session: open back channels end, so an HTTP server
// shutdown does not wait on them, and new sessions are refused.
func (wc *webChannel) Drain() {
	wc.mu.Lock()
	wc.drained = true
	ss := make([]*wcSession, 0, len(wc.sessions))
	for _, s := range wc.sessions {
		ss = append(ss, s)
	}
	wc.mu.Unlock()
	for _, s := range ss {
		s.close()
	}
}

// reap drops sessions whose client went away: no back channel attached for
// wcIdleLimit. It runs on every handshake, so no goroutine is needed.
func (wc *webChannel) reap(now time.Time) {
	wc.mu.Lock()
	var idle []*wcSession
	for _, s := range wc.sessions {
		s.mu.Lock()
		if !s.attached && now.Sub(s.seen) > wcIdleLimit {
			idle = append(idle, s)
		}
		s.mu.Unlock()
	}
	wc.mu.Unlock()
	for _, s := range idle {
		s.close()
	}
}

// wcForm reads the form body of a handshake or forward request.
func wcForm(r *http.Request) (url.Values, error) {
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	v, err := url.ParseQuery(string(data))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "WebChannel body is not form-encoded: %v", err)
	}
	return v, nil
}

// initHeaders parses the handshake's headers parameter ("K:V\r\n"…), the
// SDK's encodeInitMessageHeaders.
func initHeaders(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h
}

func (wc *webChannel) handshake(w http.ResponseWriter, r *http.Request, kind string, q url.Values) {
	now := time.Now()
	wc.reap(now)
	form, err := wcForm(r)
	if err != nil {
		writeError(w, err)
		return
	}
	auth := r.Header.Get("Authorization")
	if hs := form.Get("headers"); hs != "" {
		if a := initHeaders(hs).Get("Authorization"); a != "" {
			auth = a
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &wcSession{wc: wc, id: newSessionID(), kind: kind, db: q.Get("database"), ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), nextID: 1, seen: now}
	wc.mu.Lock()
	if wc.drained {
		wc.mu.Unlock()
		cancel()
		writeError(w, status.Error(codes.Unavailable, "The server is shutting down; retry."))
		return
	}
	wc.sessions[s.id] = s
	wc.mu.Unlock()
	who, err := IdentityFromHeader(auth)
	if err != nil {
		s.fail(err)
	} else {
		s.who = who
		s.receive(form)
	}
	body := fmt.Sprintf(`[[0,["c",%q,"",8,12,30000]]]`, s.id)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "%d\n%s", len(body), body)
}

// forward handles a forward-channel POST: the client's next messages.
func (s *wcSession) forward(w http.ResponseWriter, r *http.Request, q url.Values) {
	form, err := wcForm(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.ack(q.Get("AID"))
	s.receive(form)
	s.mu.Lock()
	last := s.nextID - 1
	s.seen = time.Now()
	s.mu.Unlock()
	body := fmt.Sprintf("[1,%d,7]", last)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "%d\n%s", len(body), body)
}

// receive handles the count messages of a form, in order, skipping the
// ones already handled (the SDK retries a forward request it thinks failed).
func (s *wcSession) receive(form url.Values) {
	count, _ := strconv.Atoi(form.Get("count"))
	ofs, _ := strconv.Atoi(form.Get("ofs"))
	s.fwd.Lock()
	defer s.fwd.Unlock()
	for i := 0; i < count && i < 1000; i++ {
		id := ofs + i
		if id < s.nextOfs {
			continue
		}
		s.nextOfs = id + 1
		data, ok := form["req"+strconv.Itoa(i)+"___data__"]
		if !ok || len(data) == 0 {
			continue
		}
		if s.isClosed() {
			return
		}
		if err := s.handle([]byte(data[0])); err != nil {
			s.fail(err)
			return
		}
	}
}

// handle processes one request of the stream.
func (s *wcSession) handle(data []byte) error {
	switch s.kind {
	case "Listen":
		req := &pb.ListenRequest{}
		if err := unmarshalJSON(data, req); err != nil {
			return err
		}
		if !s.started {
			db := req.GetDatabase()
			if db == "" {
				db = s.db
			}
			ls, err := s.wc.s.opts.Engine.Listen(s.who, db)
			if err != nil {
				return err
			}
			s.started, s.db, s.ls = true, db, ls
			go s.pump()
		} else if d := req.GetDatabase(); d != "" && d != s.db {
			return status.Errorf(codes.InvalidArgument, "The listen stream is for %s; a request names %s.", s.db, d)
		}
		return s.ls.Handle(req)
	default:
		req := &pb.WriteRequest{}
		if err := unmarshalJSON(data, req); err != nil {
			return err
		}
		if s.ws == nil {
			s.ws = s.wc.s.opts.Engine.WriteStream(s.who, s.db)
		}
		resp, err := s.ws.Handle(s.ctx, req)
		if err != nil {
			return err
		}
		if resp != nil {
			s.send(resp)
		}
		return nil
	}
}

// pump moves the engine's listen responses to the back channel.
func (s *wcSession) pump() {
	for {
		r, err := s.ls.Recv(s.ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				s.fail(err)
			}
			return
		}
		s.send(r)
	}
}

// send queues a response.
func (s *wcSession) send(m proto.Message) {
	data, err := marshalJSON(m)
	if err != nil {
		s.fail(status.Errorf(codes.Internal, "encoding response: %v", err))
		return
	}
	s.queue(asciiJSON(data), false)
}

// fail queues the error message and closes the session, as the emulator
// ends a stream that failed.
func (s *wcSession) fail(err error) {
	st := Status(err)
	name := errcode.FromGRPC(st.Code()).String()
	b, _ := marshalErrorMsg(name+": "+st.Message(), name)
	s.queue(b, true)
}

func marshalErrorMsg(msg, name string) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "status": name}})
	return asciiJSON(b), err
}

// queue appends a message; last closes the session after it.
func (s *wcSession) queue(data []byte, last bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.msgs = append(s.msgs, wcMsg{id: s.nextID, data: data})
	s.nextID++
	if last {
		s.closed = true
	}
	s.mu.Unlock()
	if last {
		s.stopStream()
	}
	s.signal()
}

func (s *wcSession) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *wcSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// stopStream ends the engine side of the session.
func (s *wcSession) stopStream() {
	s.cancel()
	if s.ls != nil {
		s.ls.Close()
	}
}

// close ends the session at once (terminate, drain or reaping).
func (s *wcSession) close() {
	s.mu.Lock()
	s.closed = true
	s.msgs = nil
	s.mu.Unlock()
	s.stopStream()
	s.signal()
	s.wc.mu.Lock()
	delete(s.wc.sessions, s.id)
	s.wc.mu.Unlock()
}

// ack drops the messages the client has seen (array ids up to aid).
func (s *wcSession) ack(aid string) {
	n, err := strconv.Atoi(aid)
	if err != nil {
		return
	}
	s.mu.Lock()
	i := 0
	for i < len(s.msgs) && s.msgs[i].id <= n {
		i++
	}
	s.msgs = s.msgs[i:]
	s.mu.Unlock()
}

// wcRetain bounds the messages a streaming back channel keeps after
// writing them, until the client acknowledges them: a streaming client only
// acknowledges when it makes its next request, which for a quiet listener
// may be never.
var wcRetain = 512

// trim drops the oldest messages already written beyond wcRetain.
func (s *wcSession) trim(sent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < len(s.msgs) && s.msgs[n].id <= sent {
		n++
	}
	if n <= wcRetain {
		return
	}
	drop := n - wcRetain
	s.dropped = s.msgs[drop-1].id
	s.msgs = slices.Clone(s.msgs[drop:])
}

// backChannel serves the server-to-client half: it sends the messages
// after AID and, when CI=0, keeps streaming; when CI=1 (long polling) it
// answers one batch. A newer back channel replaces an older one.
func (s *wcSession) backChannel(w http.ResponseWriter, r *http.Request, q url.Values) {
	s.ack(q.Get("AID"))
	if aid, err := strconv.Atoi(q.Get("AID")); err == nil {
		s.mu.Lock()
		lost := aid < s.dropped
		s.mu.Unlock()
		if lost {
			// The client missed messages that were dropped after they were
			// streamed: it must start over (the SDK resumes its targets).
			s.fail(status.Error(codes.Unavailable, "The WebChannel session lost messages the client did not receive; reconnect."))
		}
	}
	longPoll := q.Get("CI") == "1"
	s.mu.Lock()
	s.bcGen++
	gen := s.bcGen
	s.attached = true
	sent := 0
	if len(s.msgs) > 0 {
		sent = s.msgs[0].id - 1
	} else {
		sent = s.nextID - 1
	}
	s.mu.Unlock()
	s.signal() // wake an older back channel so it sees it was replaced
	defer func() {
		s.mu.Lock()
		if s.bcGen == gen {
			s.attached = false
			s.seen = time.Now()
		}
		s.mu.Unlock()
	}()

	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "private, max-age=0")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	noop := time.NewTimer(wcNoop)
	defer noop.Stop()
	var deadline <-chan time.Time
	if longPoll {
		t := time.NewTimer(wcLongPoll)
		defer t.Stop()
		deadline = t.C
	}
	for {
		s.mu.Lock()
		if s.bcGen != gen {
			s.mu.Unlock()
			s.signal() // pass on a wake-up that may have been meant for the newer one
			return
		}
		var batch []wcMsg
		for _, m := range s.msgs {
			if m.id > sent {
				batch = append(batch, m)
			}
		}
		closed := s.closed
		s.mu.Unlock()
		if len(batch) > 0 {
			var b strings.Builder
			b.WriteString("[")
			realData := false
			for i, m := range batch {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "[%d,[%s]]", m.id, m.data)
				if string(m.data) != `"noop"` {
					realData = true
				}
			}
			b.WriteString("]")
			if _, err := fmt.Fprintf(w, "%d\n%s", b.Len(), b.String()); err != nil {
				return
			}
			flush()
			sent = batch[len(batch)-1].id
			s.trim(sent)
			if longPoll && realData && !closed {
				return
			}
			if !noop.Stop() {
				select {
				case <-noop.C:
				default:
				}
			}
			noop.Reset(wcNoop)
		}
		if closed {
			// Everything, the final error included, is on its way: the
			// session is over.
			s.wc.mu.Lock()
			delete(s.wc.sessions, s.id)
			s.wc.mu.Unlock()
			return
		}
		select {
		case <-s.wake:
		case <-noop.C:
			s.queue([]byte(`"noop"`), false)
			noop.Reset(wcNoop)
		case <-deadline:
			return
		case <-r.Context().Done():
			return
		}
	}
}
