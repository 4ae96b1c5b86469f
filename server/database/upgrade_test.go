package databaseserver_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pyric/pyric/internal/await"
	server "github.com/pyric/pyric/server/database"
)

// TestLongPollUpgrade drives the switch from long polling to a websocket
// with the bytes the JS SDK sends and expects (its Connection and
// BrowserPollConnection in firebase@12.19.0): the second socket names the
// session, gets the switch ack and no hello, pongs to its pings, and takes
// over the session once the long poll's end of transmission is answered;
// the session's listens carry on, a request sent on the socket before that
// waits for it, and onDisconnect runs when the socket ends, not when the
// long poll does.
func TestLongPollUpgrade(t *testing.T) {
	srv, _ := start(t, testRules)
	r := do(t, srv, "GET", "/.lp?start=t&ser=1&cb=7&v=5&ns=demo-default-rtdb", "")
	m := regexp.MustCompile(`^parent\.pLPCommand7\('start',"([^"]+)","([^"]+)"\);parent\.pRTLPCB7\(0,\[\{"d":\{"d":\{"h":"[^"]+","s":"([^"]+)","ts":\d+,"v":"5"\},"t":"h"\},"t":"c"\}\]\);$`).FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("start: %s", r.body)
	}
	id, pw, sessionID := m[1], m[2], m[3]
	seg := 0
	poll := func(msgs ...string) string {
		u := fmt.Sprintf("/.lp?id=%s&pw=%s&ser=2", url.QueryEscape(id), url.QueryEscape(pw))
		for i, msg := range msgs {
			u += fmt.Sprintf("&seg%d=%d&ts%d=1&d%d=%s", i, seg, i, i, lpEncode(msg))
			seg++
		}
		return do(t, srv, "GET", u, "").body
	}
	// On long polling: an onDisconnect and a listen.
	if got := poll(`{"t":"d","d":{"r":1,"a":"o","b":{"p":"/public/presence","d":"gone"}}}`); !strings.Contains(got, `"r":1`) {
		t.Fatalf("onDisconnect reply: %s", got)
	}
	if got := poll(`{"t":"d","d":{"r":2,"a":"q","b":{"p":"/public/room","h":""}}}`); !strings.Contains(got, `"r":2`) {
		t.Fatalf("listen reply: %s", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/.ws?v=5&ns=demo-default-rtdb&s=" + url.QueryEscape(sessionID)
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("socket read: %v", err)
		}
		return string(b)
	}
	send := func(s string) {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(); got != `{"t":"c","d":{"t":"a","d":{}}}` {
		t.Fatalf("first frame on the second socket: %s, want the switch ack (no hello)", got)
	}
	for i := 0; i < 2; i++ { // WebSocketConnection.responsesRequiredToBeHealthy
		send(`{"t":"c","d":{"t":"p","d":{}}}`)
		if got := read(); got != `{"t":"c","d":{"t":"o","d":{}}}` {
			t.Fatalf("pong %d: %s", i, got)
		}
	}
	// proceedWithUpgrade_: the ack on the socket, then the SDK sends on
	// the socket; the end of transmission goes on the long poll.
	send(`{"t":"c","d":{"t":"a","d":{}}}`)
	send(`{"t":"d","d":{"r":3,"a":"p","b":{"p":"/public/room","d":"on the socket"}}}`)
	got := poll(`{"t":"c","d":{"t":"n","d":{}}}`)
	if want := regexp.MustCompile(`^parent\.pRTLPCB7\((\d+),\[\{"t":"c","d":\{"t":"n","d":\{\}\}\}\]\);parent\.pLPCommand7\('close',(\d+)\);$`).FindStringSubmatch(got); want == nil || want[1] != want[2] {
		t.Fatalf("the long poll's last answer: %s, want the final n then close naming it", got)
	}
	// The request sent early is handled now, on the socket: the listen
	// made on long polling sees it there, then its reply.
	if got := read(); !strings.Contains(got, `"a":"d"`) || !strings.Contains(got, `"on the socket"`) {
		t.Fatalf("push on the socket: %s", got)
	}
	if got := read(); !strings.Contains(got, `"r":3`) || !strings.Contains(got, `"s":"ok"`) {
		t.Fatalf("reply on the socket: %s", got)
	}
	// The long-poll transport is gone, its session carried on.
	if got := poll(); got != "" {
		t.Fatalf("the long poll still answers after the switch: %s", got)
	}
	if r := do(t, srv, "GET", "/public/presence.json?ns=demo-default-rtdb", "", "Authorization", "Bearer owner"); r.body != "null" {
		t.Fatalf("onDisconnect ran when the long poll ended: presence %s", r.body)
	}
	_ = ws.Close(websocket.StatusNormalClosure, "")
	var presence string
	if !await.Poll(5*time.Second, func() bool {
		presence = do(t, srv, "GET", "/public/presence.json?ns=demo-default-rtdb", "", "Authorization", "Bearer owner").body
		return presence == `"gone"`
	}) {
		t.Fatalf("onDisconnect did not run when the socket ended: presence %s", presence)
	}
}

// A second socket naming no live session gets the protocol's reset, and
// the SDK stays on the transport it has.
func TestLongPollUpgradeUnknownSession(t *testing.T) {
	srv, _ := start(t, testRules)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/.ws?v=5&ns=demo-default-rtdb&s=nope", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(b), `"t":"r"`) || strings.Contains(string(b), `"t":"h"`) {
		t.Fatalf("reset: %s %v", b, err)
	}
}

// TestLongPollUpgradeReleasesHeldPoll: a long-poll session moving onto a
// socket has its held poll answered when the socket attaches and again
// when the SDK acks the switch, instead of after lpHold (20 s). In a
// browser every long-poll session holds one of the page's six HTTP/1.1
// connections with its poll; with six sessions (the JS SDK's own
// integration tests start each test's apps on long polling once a
// socket failed) the requests carrying the SDK's writes and its end of
// transmission waited seconds for a connection.
func TestLongPollUpgradeReleasesHeldPoll(t *testing.T) {
	srv, _ := start(t, testRules)
	r := do(t, srv, "GET", "/.lp?start=t&ser=1&cb=3&v=5&ns=demo-default-rtdb", "")
	m := regexp.MustCompile(`^parent\.pLPCommand3\('start',"([^"]+)","([^"]+)"\);.*"s":"([^"]+)"`).FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("start: %s", r.body)
	}
	id, pw, sessionID := m[1], m[2], m[3]
	h := srv.Config.Handler.(*server.Handler)
	// held starts a poll with nothing to send, which the server holds,
	// and returns a channel that gets its answer.
	held := func() <-chan string {
		ch := make(chan string, 1)
		go func() {
			ch <- do(t, srv, "GET", fmt.Sprintf("/.lp?id=%s&pw=%s&ser=2", url.QueryEscape(id), url.QueryEscape(pw)), "").body
		}()
		await.Until(t, 5*time.Second, func() bool { return server.PollHeld(h, id) }, "the server to hold the poll")
		return ch
	}
	answered := func(ch <-chan string, when string) {
		t.Helper()
		select {
		case got := <-ch:
			if got != "" {
				t.Fatalf("the held poll answered %q %s, want an empty answer", got, when)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the held poll was not answered %s", when)
		}
	}
	poll := held()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/.ws?v=5&ns=demo-default-rtdb&s="+url.QueryEscape(sessionID), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(websocket.StatusNormalClosure, "")
	if _, b, err := ws.Read(ctx); err != nil || string(b) != `{"t":"c","d":{"t":"a","d":{}}}` {
		t.Fatalf("switch ack: %s %v", b, err)
	}
	answered(poll, "when the socket attached")

	// The SDK re-polls; its ack on the socket answers that poll too.
	poll = held()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"t":"c","d":{"t":"a","d":{}}}`)); err != nil {
		t.Fatal(err)
	}
	answered(poll, "when the SDK acked the switch")
}
