package databaseserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/jsonstr"
)

// idleTimeout closes a websocket that sent nothing, not even the SDK's
// 45-second keepalive, for this long: its onDisconnect operations run, as
// production does for a client that vanished without closing.
var idleTimeout = 2 * time.Minute

// writeTimeout closes a websocket one frame of which could not be
// written for this long (a client that stopped reading).
var writeTimeout = 30 * time.Second

// reply is a response frame the adapter queues behind the engine's pushes.
type reply []byte

// serveWS runs one websocket connection of the v5 protocol.
func (h *Handler) serveWS(w http.ResponseWriter, r *http.Request) {
	if v := r.URL.Query().Get("v"); v != "" && v != "5" {
		api.Message(w, http.StatusBadRequest, "unsupported protocol version "+v+" (want v=5)")
		return
	}
	if !h.wsEnter() {
		api.Message(w, http.StatusServiceUnavailable, "the database is shutting down")
		return
	}
	defer h.wsLeave()
	if sid := r.URL.Query().Get("s"); sid != "" {
		// The second socket of a long-poll session (see upgrade.go).
		if lp := h.lpByConn(sid); lp != nil {
			h.upgradeWS(w, r, lp)
		} else {
			h.resetWS(w, r)
		}
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	ws.SetReadLimit(4 * MaxFrame * 4) // a frame is at most 16384 UTF-16 units
	conn := h.db.Connect(h.namespace(r), identity.Anonymous())
	s := &session{h: h, ws: ws, conn: conn, asm: assembler{max: database.MaxSDKWrite, budget: &h.inflight}, inline: true}
	defer s.asm.release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// A frame's write ends when it takes longer than writeTimeout or
	// the session ends meanwhile: one timer, reset per frame, and one
	// hook on the session's end, instead of a context with a deadline
	// per frame (a timer, a cancel context and the socket's hook on it).
	s.writeTimer = time.AfterFunc(time.Hour, func() { ws.CloseNow() })
	s.writeTimer.Stop()
	defer s.writeTimer.Stop()
	defer context.AfterFunc(ctx, func() {
		if s.writing.Load() {
			ws.CloseNow()
		}
	})()
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-ctx.Done():
		}
	}()

	hello, _ := json.Marshal(map[string]any{"t": "c", "d": map[string]any{"t": "h", "d": map[string]any{
		"ts": time.Now().UnixMilli(), "v": "5", "h": r.Host, "s": conn.ID(),
	}}})
	conn.Send(reply(hello))
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.writeLoop(ctx)
		cancel()
	}()
	reason := s.readLoop(ctx)
	conn.Close() // runs onDisconnect before the socket is gone
	cancel()
	<-done
	_ = ws.Close(websocket.StatusNormalClosure, reason)
}

// wsEnter counts a websocket session in, unless Close has begun.
func (h *Handler) wsEnter() bool {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.wsClosed {
		return false
	}
	h.wsLive++
	return true
}

// wsLeave counts a session out once its teardown (onDisconnect) is done.
func (h *Handler) wsLeave() {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	h.wsLive--
	if h.wsLive == 0 && h.wsClosed {
		close(h.wsIdle)
	}
}

type session struct {
	h    *Handler
	ws   *websocket.Conn
	conn *database.Conn
	asm  assembler
	// write, when set, sends one frame on ws (a socket written from two
	// goroutines serializes here); nil writes directly.
	write func(ctx context.Context, b []byte) error
	// onEnd, when set, handles the long poll's end of transmission ("n").
	onEnd func()
	// inline: the goroutine that handles a request writes what it
	// queued (its reply, and any push before it) itself, instead of
	// waking writeLoop's goroutine for it, as a server writing its
	// answer from the request's goroutine does; writeLoop writes the
	// pushes other connections' writes queue. wmu orders the two.
	inline bool
	wmu    sync.Mutex
	// writeTimer and writing bound a frame's write when write is nil
	// (see serveWS).
	writeTimer *time.Timer
	writing    atomic.Bool
}

func (s *session) writeLoop(ctx context.Context) {
	// The loop waits on the connection alone (a Wait without a context
	// is one channel's receive); the session's end wakes it.
	defer context.AfterFunc(ctx, s.conn.Wake)()
	for {
		s.conn.Wait(context.Background())
		if ctx.Err() != nil {
			return
		}
		if s.flush(ctx) != nil {
			return
		}
	}
}

// flush writes what the connection has queued, in order: the queue is
// taken and written under wmu, so that what one goroutine takes after
// another leaves after it.
func (s *session) flush(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	items, err := s.conn.Take()
	if err != nil {
		return err
	}
	err = s.writeItems(ctx, items)
	s.conn.Recycle(items)
	return err
}

// writeItems sends queued items on the socket, cut into frames.
func (s *session) writeItems(ctx context.Context, items []any) error {
	for _, it := range items {
		var msg []byte
		switch x := it.(type) {
		case reply:
			msg = x
		case database.Push:
			msg = x.Encoded(encodePush)
		default:
			continue
		}
		if len(msg) <= MaxFrame {
			// One frame, sent as it is: no copies (a push's encoding is
			// shared by every listener it goes to; sending only reads it).
			if err := s.send(ctx, msg); err != nil {
				return err
			}
			continue
		}
		for _, f := range split(string(msg)) {
			if err := s.send(ctx, []byte(f)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) send(ctx context.Context, b []byte) error {
	if s.write != nil {
		return s.write(ctx, b)
	}
	// writing is set before ctx is checked: the session's end either
	// comes first (and the check sees it) or sees the write and closes
	// the socket under it.
	s.writing.Store(true)
	defer s.writing.Store(false)
	if err := ctx.Err(); err != nil {
		return err
	}
	s.writeTimer.Reset(writeTimeout)
	defer s.writeTimer.Stop()
	return s.ws.Write(context.Background(), websocket.MessageText, b)
}

func encodePush(p database.Push) []byte {
	var body any
	switch {
	case p.AuthRevoked != "":
		body = map[string]any{"a": "ac", "b": map[string]any{"s": p.AuthRevoked, "d": p.Reason}}
	case p.Revoked:
		body = map[string]any{"a": "c", "b": revokeBody(p)}
	default:
		a := "d"
		if p.Merge {
			a = "m"
		}
		if out, ok := appendDataPush(make([]byte, 0, 64), a, p); ok {
			return out
		}
		body = dataPush{A: a, B: pushBody{D: p.Data, P: p.Path, T: p.Tag}}
	}
	out, _ := json.Marshal(dataMessage{D: body, T: "d"})
	return out
}

// appendDataPush appends what json.Marshal writes for a's dataPush of p
// in its dataMessage; ok is false when p's data is not a value the
// database encodes.
func appendDataPush(b []byte, a string, p database.Push) ([]byte, bool) {
	b = append(b, `{"d":{"a":`...)
	b = jsonstr.Append(b, a)
	b = append(b, `,"b":{"d":`...)
	b, err := database.AppendValue(b, p.Data)
	if err != nil {
		return nil, false
	}
	b = append(b, `,"p":`...)
	b = jsonstr.Append(b, p.Path)
	if p.Tag != 0 {
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, p.Tag, 10)
	}
	return append(b, `}},"t":"d"}`...), true
}

// revokeBody is a listen revocation: the path, production's status, and
// the query objects of a non-default listen, which the SDK joins into the
// id of the listen to cancel (onListenRevoked_).
func revokeBody(p database.Push) map[string]any {
	b := map[string]any{"p": "/" + p.Path, "s": "permission_denied"}
	if len(p.Query) > 0 {
		b["q"] = []any{p.Query}
	}
	return b
}

// readLoop handles client messages until the socket closes or idles.
func (s *session) readLoop(ctx context.Context) string {
	// The idle timeout and the session's end close the socket, which
	// ends a Read: one timer, reset per message, and one hook, instead of
	// a context with a deadline per Read (a timer, a cancel context and
	// the socket's own hook on it each message, a sixth of a small
	// write's allocation).
	idle := time.AfterFunc(idleTimeout, func() { s.ws.CloseNow() })
	defer idle.Stop()
	defer context.AfterFunc(ctx, func() { s.ws.CloseNow() })()
	for {
		typ, data, err := s.ws.Read(context.Background())
		if err != nil {
			return ""
		}
		idle.Reset(idleTimeout)
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
		if err := s.handle(msg); err != nil {
			return err.Error()
		}
		if s.inline && s.flush(ctx) != nil {
			return ""
		}
	}
}

// reply queues a reply of the session's (see session.inline).
func (s *session) reply(b []byte) {
	if s.inline {
		s.conn.Hold(reply(b))
		return
	}
	s.conn.Send(reply(b))
}

// envelope is a client message.
type envelope struct {
	T string          `json:"t"`
	D json.RawMessage `json:"d"`
}

type request struct {
	R json.Number    `json:"r"`
	A string         `json:"a"`
	B map[string]any `json:"b"`
}

func (s *session) handle(msg string) error {
	env, req, ctl, err := decodeMessage(msg)
	if err != nil {
		return err
	}
	if env == "c" {
		switch {
		case ctl == "p": // ping
			b, _ := json.Marshal(map[string]any{"t": "c", "d": map[string]any{"t": "o", "d": nil}})
			s.reply(b)
		case ctl == "n" && s.onEnd != nil: // the long poll's end of transmission
			s.onEnd()
		}
		return nil
	}
	status, data := s.action(req)
	s.reply(encodeResponse(req.R, status, data))
	return nil
}

// encodeResponse is the data message answering request r: what
// json.Marshal writes for its dataMessage, written by hand around the
// data's own encoding.
func encodeResponse(r json.Number, status string, data any) []byte {
	e, isEncoded := data.(encodedValue)
	b := make([]byte, 0, 64+len(e)) // the reply's own text is under 64 bytes
	b = append(b, `{"d":{"b":{"d":`...)
	var err error
	if isEncoded {
		b = append(b, e...)
	} else {
		b, err = database.AppendValue(b, data)
	}
	if err != nil || !validNumber(r) {
		out, _ := json.Marshal(dataMessage{D: response{R: r, B: responseBody{S: status, D: data}}, T: "d"})
		return out
	}
	b = append(b, `,"s":`...)
	b = jsonstr.Append(b, status)
	b = append(b, `},"r":`...)
	if r == "" {
		b = append(b, '0')
	} else {
		b = append(b, r...)
	}
	return append(b, `},"t":"d"}`...)
}

// encodedValue is response data encoded already (database.AppendValue's
// JSON text), which a reply carries as it is.
type encodedValue []byte

// MarshalJSON is the text itself: AppendValue writes what json.Marshal
// writes.
func (e encodedValue) MarshalJSON() ([]byte, error) { return e, nil }

// validNumber reports whether r is a JSON number (as a request number
// decoded from one is).
func validNumber(r json.Number) bool {
	if r == "" {
		return true
	}
	_, err := r.Int64()
	return err == nil
}

// dataMessage is a server's data message, {"t":"d","d":…}: a response
// or a push. The wire types are structs, not maps, because every request
// and push is encoded through them (three maps per reply cost more than
// the rest of its encoding); their fields are in key order, so they
// encode exactly as the maps did.
type dataMessage struct {
	D any    `json:"d"`
	T string `json:"t"`
}

// response answers request R with status S and data D.
type response struct {
	B responseBody `json:"b"`
	R json.Number  `json:"r"`
}

type responseBody struct {
	D any    `json:"d"`
	S string `json:"s"`
}

// dataPush is a push of data ("d") or a merge ("m"): D at P, for the
// query the client tagged T (none: 0).
type dataPush struct {
	A string   `json:"a"`
	B pushBody `json:"b"`
}

type pushBody struct {
	D any    `json:"d"`
	P string `json:"p"`
	T int64  `json:"t,omitempty"`
}

// decodeMessage parses one reassembled client message: a data request
// (env "d") or a control message (env "c", ctl its type).
func decodeMessage(msg string) (env string, req request, ctl string, err error) {
	// One pass over the message for the well-formed, without reflection
	// (encoding/json's decoding of a frame was a fifth of a small
	// write's CPU); anything it is not sure of — a field it does not
	// know, of another type or spelled in another case, which
	// encoding/json's struct decoding reads — goes through the passes
	// below, which also tell which part of a malformed message is wrong.
	if utf8.ValidString(msg) {
		if top, ok := database.ParseWireMessage(msg); ok {
			if env, req, ctl, ok := messageOf(top); ok {
				return env, req, ctl, nil
			}
		}
	}
	return decodeMessageSlowly(msg)
}

// messageOf reads a decoded message of exactly the fields the protocol
// has; ok is false for any other.
func messageOf(v any) (env string, req request, ctl string, ok bool) {
	top, _ := v.(map[string]any)
	t, _ := top["t"].(string)
	d, _ := top["d"].(map[string]any)
	if top == nil || len(top) != 2 || d == nil {
		return "", req, "", false
	}
	switch t {
	case "c":
		if c, ok := d["t"].(string); ok {
			return "c", req, c, true
		}
	case "d":
		for k, f := range d {
			switch k {
			case "r":
				n, ok := f.(json.Number)
				if _, err := n.Int64(); !ok || err != nil {
					return "", req, "", false
				}
				req.R = n
			case "a":
				if req.A, ok = f.(string); !ok {
					return "", req, "", false
				}
			case "b":
				if req.B, ok = f.(map[string]any); !ok && f != nil {
					return "", req, "", false
				}
			default:
				return "", req, "", false
			}
		}
		if req.A != "" {
			return "d", req, "", true
		}
	}
	return "", req, "", false
}

// decodeMessageSlowly is decodeMessage in two passes, envelope then
// body, which tell which part of a malformed message is wrong.
func decodeMessageSlowly(msg string) (env string, req request, ctl string, err error) {
	var e envelope
	dec := json.NewDecoder(strings.NewReader(msg))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil {
		return "", req, "", errors.New("a message that is not JSON")
	}
	switch e.T {
	case "c":
		var c struct {
			T string `json:"t"`
		}
		if err := json.Unmarshal(e.D, &c); err != nil {
			return "", req, "", errors.New("a malformed control message")
		}
		return "c", req, c.T, nil
	case "d":
		d := json.NewDecoder(strings.NewReader(string(e.D)))
		d.UseNumber()
		if err := d.Decode(&req); err != nil || req.A == "" {
			return "", req, "", errors.New("a malformed data message")
		}
		if _, err := req.R.Int64(); err != nil && req.R != "" {
			return "", req, "", errors.New("a request number that is not a number")
		}
		if d, ok := req.B["d"]; ok {
			req.B["d"] = database.ExactNumbers(d) // as decodeMessage reads it
		}
		return "d", req, "", nil
	}
	return "", req, "", errors.New("a message of unknown type " + strconv.Quote(e.T))
}

// wireStatus is the protocol's status string for an engine error.
func wireStatus(err error) (string, any) {
	switch errcode.Of(err) {
	case errcode.OK:
		return "ok", ""
	case errcode.PermissionDenied:
		var den *database.Denied
		if errors.As(err, &den) {
			return "permission_denied", den.Message()
		}
	case errcode.Aborted:
		return "datastale", "The transaction needs to be run again with current data"
	case errcode.ResourceExhausted:
		return "too_big", err.Error()
	case errcode.InvalidArgument:
		return "invalid_data", err.Error()
	case errcode.FailedPrecondition:
		// The SDK rejects the get with d, production's text; the status
		// word itself is not shown to the app.
		return "index_not_defined", err.Error()
	}
	return "unavailable", err.Error()
}

func (s *session) action(req request) (string, any) {
	b := req.B
	path, _ := b["p"].(string)
	switch req.A {
	case "s", "appcheck", "unappeck":
		return "ok", ""
	case "auth", "gauth":
		cred, _ := b["cred"].(string)
		who, err := credential(cred)
		if err != nil {
			return "invalid_token", "Could not parse auth token."
		}
		if av, ok := b["authvar"]; ok && who.IsAdmin() {
			if who, err = overrideValue(av); err != nil {
				return "invalid_token", err.Error()
			}
		}
		s.conn.SetAuth(who)
		return "ok", map[string]any{"auth": authClaims(who), "expires": expires(who)}
	case "unauth":
		s.conn.SetAuth(identity.Anonymous())
		return "ok", ""
	case "q":
		q, tag, err := listenQuery(b)
		if err != nil {
			return wireStatus(err)
		}
		hash, _ := b["h"].(string)
		warnings, err := s.conn.Listen(path, q, tag, hash)
		if err != nil {
			return wireStatus(err)
		}
		if len(warnings) > 0 {
			return "ok", map[string]any{"w": warnings}
		}
		return "ok", ""
	case "n":
		q, _, err := listenQuery(b)
		if err != nil {
			return wireStatus(err)
		}
		return wireStatus(s.conn.Unlisten(path, q))
	case "g":
		q, _, err := listenQuery(b)
		if err != nil {
			return wireStatus(err)
		}
		v, err := s.conn.GetJSON(make([]byte, 0, 64), path, &q)
		if err != nil {
			return wireStatus(err)
		}
		return "ok", encodedValue(v)
	case "p":
		var hash *string
		if h, ok := b["h"].(string); ok {
			hash = &h
		}
		return wireStatus(s.conn.PutBy(invocationOf(b), path, b["d"], hash))
	case "m":
		m, ok := b["d"].(map[string]any)
		if !ok {
			return "invalid_data", "a merge needs an object of paths"
		}
		return wireStatus(s.conn.MergeBy(invocationOf(b), path, m))
	case "o":
		return wireStatus(s.conn.OnDisconnectSet(path, b["d"]))
	case "om":
		m, ok := b["d"].(map[string]any)
		if !ok {
			return "invalid_data", "an onDisconnect merge needs an object of paths"
		}
		return wireStatus(s.conn.OnDisconnectMerge(path, m))
	case "oc":
		return wireStatus(s.conn.OnDisconnectCancel(path))
	}
	return "invalid_data", "unknown action " + strconv.Quote(req.A)
}

// invocationOf is the function invocation a write request names
// (identity.InvocationHeader in its body: pyric's functions runtime adds
// it to the writes a function makes), or "".
func invocationOf(b map[string]any) string {
	s, _ := b[identity.InvocationHeader].(string)
	return s
}

func listenQuery(b map[string]any) (database.Query, int64, error) {
	var tag int64
	if t, ok := b["t"].(json.Number); ok {
		tag, _ = t.Int64()
	}
	qo, _ := b["q"].(map[string]any)
	q, err := database.ParseWireQuery(qo)
	return q, tag, err
}

func authClaims(who identity.Identity) any {
	if who.IsAdmin() {
		return map[string]any{"provider": "admin"}
	}
	if !who.IsAuthenticated() {
		return nil
	}
	return who.Token
}

func expires(who identity.Identity) any {
	if e, ok := who.Token["exp"]; ok {
		return e
	}
	return nil
}
