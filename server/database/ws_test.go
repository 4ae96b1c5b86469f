package databaseserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox/service"
	server "github.com/pyric/pyric/server/database"
)

// client is a raw protocol-v5 client.
type client struct {
	t   testing.TB
	ws  *websocket.Conn
	ctx context.Context
	r   int
	// pushes and replies in arrival order
	in []map[string]any
}

func dial(t testing.TB, srvURL, ns string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	u := "ws" + strings.TrimPrefix(srvURL, "http") + "/.ws?v=5&ns=" + ns
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 24)
	c := &client{t: t, ws: ws, ctx: ctx}
	hello := c.next()
	d := hello["d"].(map[string]any)
	if hello["t"] != "c" || d["t"] != "h" || d["d"].(map[string]any)["v"] != "5" {
		t.Fatalf("hello %v", hello)
	}
	return c
}

// next reads one whole message, reassembling split ones.
func (c *client) next() map[string]any {
	c.t.Helper()
	_, b, err := c.ws.Read(c.ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	s := string(b)
	if n, err := strconv.Atoi(s); err == nil && len(s) <= 6 {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			_, part, err := c.ws.Read(c.ctx)
			if err != nil {
				c.t.Fatal(err)
			}
			if len(part) > 16384 {
				c.t.Fatalf("frame of %d bytes", len(part))
			}
			sb.Write(part)
		}
		s = sb.String()
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		c.t.Fatalf("bad message %q", s)
	}
	return m
}

func (c *client) send(a string, body map[string]any) int {
	c.r++
	b, _ := json.Marshal(map[string]any{"t": "d", "d": map[string]any{"r": c.r, "a": a, "b": body}})
	c.sendRaw(string(b))
	return c.r
}

func (c *client) sendRaw(s string) {
	c.t.Helper()
	if err := c.ws.Write(c.ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns the pushes before its reply and the
// reply's body.
func (c *client) call(a string, body map[string]any) ([]string, map[string]any) {
	c.t.Helper()
	r := c.send(a, body)
	var pushes []string
	for {
		m := c.next()
		d := m["d"].(map[string]any)
		if rr, ok := d["r"]; ok && int(rr.(float64)) == r {
			return pushes, d["b"].(map[string]any)
		}
		b, _ := json.Marshal(d)
		pushes = append(pushes, string(b))
	}
}

func (c *client) ok(a string, body map[string]any) []string {
	c.t.Helper()
	pushes, res := c.call(a, body)
	if res["s"] != "ok" {
		c.t.Fatalf("%s %v: %v", a, body, res)
	}
	return pushes
}

// push waits for the next server push.
func (c *client) push() string {
	c.t.Helper()
	m := c.next()
	b, _ := json.Marshal(m["d"])
	return string(b)
}

func TestWebsocket(t *testing.T) {
	srv, _ := start(t, testRules)
	ns := "demo-default-rtdb"
	a := dial(t, srv.URL, ns)
	a.ok("s", map[string]any{"c": map[string]any{"sdk.js.12-19-0": 1}})

	if got := a.ok("q", map[string]any{"p": "/public/items", "h": ""}); len(got) != 1 || got[0] != `{"a":"d","b":{"d":null,"p":"public/items"}}` {
		t.Fatalf("listen pushes %v", got)
	}
	// A client's own listeners get its write before the write's reply.
	got := a.ok("p", map[string]any{"p": "/public/items/a", "d": map[string]any{"n": 1, "ts": map[string]any{".sv": "timestamp"}}})
	if len(got) != 1 || !strings.HasPrefix(got[0], `{"a":"d","b":{"d":{"n":1,"ts":`) {
		t.Fatalf("push %v", got)
	}
	got = a.ok("m", map[string]any{"p": "/public/items", "d": map[string]any{"a/n": 2, "b/n": map[string]any{".sv": map[string]any{"increment": 1}}}})
	if len(got) != 1 || got[0] != `{"a":"m","b":{"d":{"a/n":2,"b/n":1},"p":"public/items"}}` {
		t.Fatalf("merge push %v", got)
	}
	// A rewrite that changes nothing pushes nothing: the next push is the
	// reply to the write.
	if pushes, res := a.call("p", map[string]any{"p": "/public/items/a/n", "d": 2}); len(pushes) != 0 || res["s"] != "ok" {
		t.Fatalf("no-change write: %v %v", pushes, res)
	}
	// A tagged query: its window, data before the ok, no_index warning
	// for an unindexed child.
	pushes, res := a.call("q", map[string]any{"p": "/public/items", "q": map[string]any{"i": "n", "l": 1, "vf": "l"}, "t": 3, "h": ""})
	if len(pushes) != 1 || pushes[0] != `{"a":"d","b":{"d":{"b":{"n":1}},"p":"public/items","t":3}}` || res["s"] != "ok" {
		t.Fatalf("query listen %v %v", pushes, res)
	}
	if _, res := a.call("q", map[string]any{"p": "/public", "q": map[string]any{"i": "zzz", "l": 1, "vf": "l"}, "t": 4, "h": ""}); fmt.Sprint(res["d"]) != "map[w:[no_index]]" {
		t.Fatalf("no_index warning missing: %v", res)
	}
	a.ok("n", map[string]any{"p": "/public", "q": map[string]any{"i": "zzz", "l": 1, "vf": "l"}, "t": 4})

	// get
	if _, res := a.call("g", map[string]any{"p": "/public/items/b", "q": map[string]any{}}); fmt.Sprint(res["d"]) != "map[n:1]" {
		t.Fatalf("get %v", res)
	}
	// Denied write and listen.
	if _, res := a.call("p", map[string]any{"p": "/users/bob", "d": 1}); res["s"] != "permission_denied" {
		t.Fatalf("denied write %v", res)
	}
	if _, res := a.call("q", map[string]any{"p": "/users/bob", "h": ""}); res["s"] != "permission_denied" {
		t.Fatalf("denied listen %v", res)
	}
	// auth with a mock token, then the write is allowed.
	a.ok("auth", map[string]any{"cred": mockToken("bob")})
	a.ok("p", map[string]any{"p": "/users/bob", "d": 1})
	a.ok("q", map[string]any{"p": "/users/bob", "h": ""})
	if _, res := a.call("auth", map[string]any{"cred": "garbage"}); res["s"] != "invalid_token" {
		t.Fatalf("bad token %v", res)
	}
	// unauth revokes the listen the rules no longer allow.
	pushes, _ = a.call("unauth", map[string]any{})
	if len(pushes) != 1 || pushes[0] != `{"a":"c","b":{"p":"/users/bob","s":"permission_denied"}}` {
		t.Fatalf("revocation %v", pushes)
	}

	// Compare-and-set: a stale hash is datastale, the right one commits.
	a.ok("p", map[string]any{"p": "/counter", "d": 1})
	if _, res := a.call("p", map[string]any{"p": "/counter", "d": 2, "h": ""}); res["s"] != "datastale" {
		t.Fatalf("stale put %v", res)
	}
	h := database.Hash(1.0)
	a.ok("p", map[string]any{"p": "/counter", "d": 2, "h": h})

	// ping → pong
	a.sendRaw(`{"t":"c","d":{"t":"p","d":{}}}`)
	if m := a.next(); fmt.Sprint(m) != "map[d:map[d:<nil> t:o] t:c]" {
		t.Fatalf("pong %v", m)
	}
	// keepalive frames are ignored
	a.sendRaw("0")

	// Messages over 16384 characters are split both ways.
	big := strings.Repeat("é", 20000)
	msg, _ := json.Marshal(map[string]any{"t": "d", "d": map[string]any{"r": 1000, "a": "p", "b": map[string]any{"p": "/public/big", "d": big}}})
	frames := []string{}
	for i := 0; i < len(msg); i += 10000 {
		frames = append(frames, string(msg[i:min(i+10000, len(msg))]))
	}
	a.sendRaw(strconv.Itoa(len(frames)))
	for _, f := range frames {
		a.sendRaw(f)
	}
	if m := a.next(); fmt.Sprint(m["d"]) != "map[b:map[d: s:ok] r:1000]" {
		t.Fatalf("split put: %v", m)
	}
	if _, res := a.call("g", map[string]any{"p": "/public/big", "q": map[string]any{}}); res["d"] != big {
		t.Fatalf("split get returned %d chars", len(fmt.Sprint(res["d"])))
	}
}

func TestWebsocketOnDisconnect(t *testing.T) {
	srv, db := start(t, testRules)
	ns := "demo-default-rtdb"
	a := dial(t, srv.URL, ns)
	a.ok("auth", map[string]any{"cred": mockToken("alice")})
	a.ok("p", map[string]any{"p": "/presence/alice", "d": "online"})
	a.ok("o", map[string]any{"p": "/presence/alice", "d": "offline"})
	a.ok("om", map[string]any{"p": "/presence/alice2", "d": map[string]any{}})
	if _, res := a.call("o", map[string]any{"p": "/presence/bob", "d": "offline"}); res["s"] != "permission_denied" {
		t.Fatalf("denied onDisconnect %v", res)
	}
	b := dial(t, srv.URL, ns)
	b.ok("q", map[string]any{"p": "/presence/alice", "h": ""})
	// Abrupt close: no close handshake.
	a.ws.CloseNow()
	if p := b.push(); p != `{"a":"d","b":{"d":"offline","p":"presence/alice"}}` {
		t.Fatalf("push after disconnect %s", p)
	}
	r, _ := db.Get(adminID, ns, "/presence/alice", nil, false)
	if r.Value != "offline" {
		t.Fatalf("value %v", r.Value)
	}
	// oc cancels.
	c := dial(t, srv.URL, ns)
	c.ok("auth", map[string]any{"cred": mockToken("alice")})
	c.ok("o", map[string]any{"p": "/presence/alice", "d": "gone"})
	c.ok("oc", map[string]any{"p": "/presence/alice"})
	c.ok("p", map[string]any{"p": "/presence/alice", "d": "back"})
	if p := b.push(); p != `{"a":"d","b":{"d":"back","p":"presence/alice"}}` {
		t.Fatalf("push %s", p)
	}
	c.ws.Close(websocket.StatusNormalClosure, "")
	// b sees nothing more: the next message it gets is its own reply.
	if pushes := b.ok("p", map[string]any{"p": "/public/z", "d": 1}); len(pushes) != 0 {
		t.Fatalf("cancelled onDisconnect ran: %v", pushes)
	}
}

func TestWebsocketBadFrames(t *testing.T) {
	srv, _ := start(t, testRules)
	for _, bad := range []string{`not json`, `{"t":"x"}`, `{"t":"d","d":{"r":"x","a":"p"}}`, `999999`} {
		a := dial(t, srv.URL, "x")
		a.sendRaw(bad)
		if bad == "999999" {
			continue
		}
		if _, _, err := a.ws.Read(a.ctx); err == nil {
			t.Errorf("%q: connection stayed open", bad)
		}
	}
	a := dial(t, srv.URL, "x")
	if _, res := a.call("zz", map[string]any{}); res["s"] != "invalid_data" {
		t.Fatalf("unknown action %v", res)
	}
}

func TestHandlerClose(t *testing.T) {
	db, err := database.New(service.Env{Project: "demo"}, database.Options{Rules: testRules})
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewHandler(db, server.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := dial(t, srv.URL, "demo-default-rtdb")
	a.ok("auth", map[string]any{"cred": mockToken("alice")})
	a.ok("o", map[string]any{"p": "/presence/alice", "d": "offline"})
	h.Close()
	if _, _, err := a.ws.Read(a.ctx); err == nil {
		t.Fatal("websocket still open after Close")
	}
	r, _ := db.Get(adminID, "demo-default-rtdb", "/presence/alice", nil, false)
	if r.Value != "offline" {
		t.Fatalf("onDisconnect did not run on Close: %v", r.Value)
	}
	if r := do(t, srv, "GET", "/public.json", ""); r.status != 503 {
		t.Fatalf("after Close: %d", r.status)
	}
}

// TestWebsocketIdleTimeout: a socket that sends nothing for the idle
// timeout is closed; every message it sends starts the timeout again.
func TestWebsocketIdleTimeout(t *testing.T) {
	defer server.SetIdleTimeout(time.Second)()
	srv, _ := start(t, testRules)
	a := dial(t, srv.URL, "x")
	for range 15 { // 1.5 s of messages, 100 ms apart
		time.Sleep(100 * time.Millisecond)
		a.ok("s", map[string]any{"c": map[string]any{}})
	}
	start := time.Now()
	if _, _, err := a.ws.Read(a.ctx); err == nil {
		t.Fatal("a silent socket got a message instead of being closed")
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("closed %v after the last message, before the idle timeout", waited)
	}
}

// TestWebsocketWriteTimeout: a socket whose client stops reading while
// pushes pile up is closed once a frame could not be written for the
// write timeout, instead of holding the session forever.
func TestWebsocketWriteTimeout(t *testing.T) {
	defer server.SetWriteTimeout(300 * time.Millisecond)()
	srv, _ := start(t, testRules)
	a := dial(t, srv.URL, "x")
	a.ok("q", map[string]any{"p": "/public/big", "h": ""})
	big := strings.Repeat("x", 1<<20)
	const writes = 16
	for i := range writes {
		if r := do(t, srv, "PUT", fmt.Sprintf("/public/big.json?ns=x"), fmt.Sprintf(`"%d%s"`, i, big), "Authorization", "Bearer owner"); r.status != 200 {
			t.Fatalf("put %d: %d %s", i, r.status, r.body)
		}
	}
	time.Sleep(time.Second) // the server blocks on the full socket, then times out
	// Past the client's own deadline: a loaded machine takes its time.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := 0
	for {
		_, b, err := a.ws.Read(ctx)
		if err != nil {
			break
		}
		if len(b) > 1000 || strings.Contains(string(b), `"p":"public/big"`) {
			got += len(b)
		}
		if got >= writes<<20 {
			t.Fatalf("read all %d pushes (%d bytes): the socket was not closed", writes, got)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the socket stayed open until the test's deadline (%d bytes read)", got)
	}
}

// TestStuckListenerDoesNotStallOthers: a listener whose client stops
// reading, so that its socket fills and the server's write to it blocks,
// holds up no other listener of the same location: each connection's
// pushes are written by its own writer, never by the write's fan-out.
func TestStuckListenerDoesNotStallOthers(t *testing.T) {
	srv, _ := start(t, testRules)
	stuck := dial(t, srv.URL, "x")
	stuck.ok("q", map[string]any{"p": "/public/big", "h": ""})
	reader := dial(t, srv.URL, "x")
	reader.ok("q", map[string]any{"p": "/public/big", "h": ""})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := make(chan int, 1024)
	go func() {
		for {
			_, b, err := reader.ws.Read(ctx)
			if err != nil {
				close(got)
				return
			}
			if len(b) > 1000 {
				got <- len(b)
			}
		}
	}()
	// 16 MiB: more than the stuck socket's buffers hold, so the server's
	// writes to it block long before the last push.
	big := strings.Repeat("x", 1<<20)
	const writes = 16
	for i := range writes {
		if r := do(t, srv, "PUT", "/public/big.json?ns=x", fmt.Sprintf(`"%d%s"`, i, big), "Authorization", "Bearer owner"); r.status != 200 {
			t.Fatalf("put %d: %d %s", i, r.status, r.body)
		}
	}
	// Each push arrives cut into frames: their bytes are counted.
	for n := 0; n < writes<<20; {
		select {
		case k, ok := <-got:
			if !ok {
				t.Fatalf("the reading listener's socket ended after %d of %d bytes", n, writes<<20)
			}
			n += k
		case <-ctx.Done():
			t.Fatalf("the reading listener got %d of %d bytes while another listener was stuck", n, writes<<20)
		}
	}
}
