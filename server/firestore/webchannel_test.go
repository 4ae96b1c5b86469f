package firestoreserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wcClient is a minimal BrowserChannel client, speaking as the browser SDK
// does (see the transcript in webchannel.go).
type wcClient struct {
	t    *testing.T
	ts   *httptest.Server
	base string
	sid  string
	rid  int
	ofs  int
	aid  int
}

func newWCClient(t *testing.T, ts *httptest.Server, kind string) *wcClient {
	return &wcClient{t: t, ts: ts, base: ts.URL + webChannelPrefix + kind + "/channel?VER=8&database=" +
		url.QueryEscape("projects/p/databases/(default)"), rid: 1000}
}

func frameBody(msgs ...string) string {
	v := url.Values{}
	for i, m := range msgs {
		v.Set("req"+strconv.Itoa(i)+"___data__", m)
	}
	v.Set("count", strconv.Itoa(len(msgs)))
	return v.Encode()
}

func (c *wcClient) post(query, body string) (int, string) {
	c.t.Helper()
	resp, err := c.ts.Client().Post(c.base+query, "application/x-www-form-urlencoded", strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// open performs the handshake with the first message.
func (c *wcClient) open(auth, first string) {
	c.t.Helper()
	body := "headers=" + url.QueryEscape("X-Goog-Api-Client:gl-js/ fire/12.19.0\r\nContent-Type:text/plain\r\nAuthorization:"+auth+"\r\n") +
		"&ofs=0&" + frameBody(first)
	st, resp := c.post(fmt.Sprintf("&RID=%d&CVER=22&X-HTTP-Session-Id=gsessionid&t=1", c.rid), body)
	c.rid++
	c.ofs = 1
	if st != 200 {
		c.t.Fatalf("handshake: %d %s", st, resp)
	}
	arrays := parseFrames(c.t, resp)
	if len(arrays) != 1 {
		c.t.Fatalf("handshake frames: %q", resp)
	}
	var hello []any
	json.Unmarshal(arrays[0][1], &hello)
	if len(hello) != 6 || hello[0] != "c" || hello[3] != float64(8) {
		c.t.Fatalf("handshake answer: %q", resp)
	}
	c.sid = hello[1].(string)
}

// send posts messages on the forward channel.
func (c *wcClient) send(msgs ...string) (int, string) {
	c.t.Helper()
	body := "ofs=" + strconv.Itoa(c.ofs) + "&" + frameBody(msgs...)
	st, resp := c.post(fmt.Sprintf("&SID=%s&RID=%d&AID=%d&t=1", url.QueryEscape(c.sid), c.rid, c.aid), body)
	c.rid++
	c.ofs += len(msgs)
	return st, resp
}

// poll makes one long-poll back-channel request and returns its messages.
func (c *wcClient) poll() []json.RawMessage {
	c.t.Helper()
	resp, err := c.ts.Client().Get(c.base + fmt.Sprintf("&RID=rpc&SID=%s&AID=%d&CI=1&TYPE=xmlhttp&t=1", url.QueryEscape(c.sid), c.aid))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []json.RawMessage
	for _, a := range parseFrames(c.t, string(b)) {
		id, _ := strconv.Atoi(string(a[0]))
		if id <= c.aid {
			c.t.Errorf("array id %d repeated after AID %d", id, c.aid)
		}
		c.aid = id
		var payload []json.RawMessage
		json.Unmarshal(a[1], &payload)
		if string(payload[0]) != `"noop"` {
			out = append(out, payload[0])
		}
	}
	return out
}

// collect polls until n messages arrived.
func (c *wcClient) collect(n int) []string {
	c.t.Helper()
	var out []string
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		for _, m := range c.poll() {
			out = append(out, string(m))
		}
	}
	if len(out) < n {
		c.t.Fatalf("got %d messages, want %d: %q", len(out), n, out)
	}
	return out
}

// parseFrames splits "<len>\n<json>" frames into [id, payload] arrays,
// checking each length.
func parseFrames(t *testing.T, s string) [][2]json.RawMessage {
	t.Helper()
	var out [][2]json.RawMessage
	for s != "" {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			t.Fatalf("frame without length: %q", s)
		}
		n, err := strconv.Atoi(s[:nl])
		if err != nil || nl+1+n > len(s) {
			t.Fatalf("bad frame length in %q", s)
		}
		frame := s[nl+1 : nl+1+n]
		s = s[nl+1+n:]
		for _, c := range frame {
			if c > 127 {
				t.Fatalf("non-ASCII frame %q", frame)
			}
		}
		var arrays []json.RawMessage
		if err := json.Unmarshal([]byte(frame), &arrays); err != nil {
			// A forward-channel answer is [1,lastId,7].
			t.Fatalf("frame %q: %v", frame, err)
		}
		for _, a := range arrays {
			var pair [2]json.RawMessage
			if json.Unmarshal(a, &pair) == nil {
				out = append(out, pair)
			}
		}
	}
	return out
}

func TestWebChannelWrite(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	c := newWCClient(t, ts, "Write")
	c.open("Bearer owner", `{"database":"projects/p/databases/(default)"}`)
	hello := c.collect(1)
	if !strings.Contains(hello[0], `"streamToken":"MA=="`) || !strings.Contains(hello[0], `"streamId"`) || strings.Contains(hello[0], "writeResults") {
		t.Fatalf("write handshake: %s", hello[0])
	}
	write := `{"streamToken":"MA==","writes":[{"update":{"name":"projects/p/databases/(default)/documents/open/w","fields":{"s":{"stringValue":"h\u00e9 \ud834\udd1e"}}}}]}`
	st, ack := c.send(write)
	if st != 200 || !strings.HasPrefix(ack, "7\n[1,2,7]") {
		t.Fatalf("forward: %d %q", st, ack)
	}
	// The SDK retries a forward request it thinks was lost: same ofs, no
	// second commit.
	c.ofs--
	c.send(write)
	res := c.collect(1)
	if !strings.Contains(res[0], `"streamToken":"MQ=="`) || !strings.Contains(res[0], `"updateTime"`) || !strings.Contains(res[0], `"commitTime"`) {
		t.Fatalf("write result: %s", res[0])
	}
	if got := do(t, ts, "GET", docs+"/open/w", "", ""); !strings.Contains(got.body, "hé 𝄞") {
		t.Errorf("stored: %s", got.body)
	}
	// A denied write ends the stream with the error.
	c.send(`{"streamToken":"MQ==","writes":[{"update":{"name":"projects/p/databases/(default)/documents/users/bob","fields":{}}}]}`)
	st, _ = c.send(`{"streamToken":"MQ==","writes":[]}`)
	if st != 200 {
		t.Errorf("forward after a queued error: %d", st)
	}
	// The owner is not denied; make a user session for the denial.
	u := newWCClient(t, ts, "Write")
	u.open(aliceToken(), `{"database":"projects/p/databases/(default)"}`)
	u.collect(1)
	u.send(`{"streamToken":"MA==","writes":[{"update":{"name":"projects/p/databases/(default)/documents/users/bob","fields":{}}}]}`)
	errMsg := u.collect(1)[0]
	var e struct {
		Error struct{ Message, Status string }
	}
	json.Unmarshal([]byte(errMsg), &e)
	if e.Error.Status != "PERMISSION_DENIED" || !strings.HasPrefix(e.Error.Message, "PERMISSION_DENIED: \nfalse for ") {
		t.Errorf("denial: %s", errMsg)
	}
	// The session is over.
	if st, body := u.send(`{}`); st != 400 || !strings.Contains(body, "Unknown SID") {
		t.Errorf("after an error: %d %q", st, body)
	}
}

func TestWebChannelListen(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	do(t, ts, "PATCH", docs+"/open/a", `{"fields":{"n":{"integerValue":"1"}}}`, owner)
	c := newWCClient(t, ts, "Listen")
	c.open(aliceToken(), `{"database":"projects/p/databases/(default)","addTarget":{"documents":{"documents":["projects/p/databases/(default)/documents/open/a"]},"targetId":2}}`)
	msgs := c.collect(4)
	for i, want := range []string{`"targetChangeType":"ADD"`, `"documentChange"`, `"targetChangeType":"CURRENT"`, `"readTime"`} {
		if !strings.Contains(msgs[i], want) {
			t.Errorf("message %d = %s, want %s", i, msgs[i], want)
		}
	}
	// A second target on the same channel: a query.
	c.send(`{"database":"projects/p/databases/(default)","addTarget":{"query":{"parent":"projects/p/databases/(default)/documents","structuredQuery":{"from":[{"collectionId":"open"}]}},"targetId":4}}`)
	msgs = c.collect(4)
	if !strings.Contains(strings.Join(msgs, ""), `"targetIds":[4]`) {
		t.Errorf("query target: %q", msgs)
	}
	// A change reaches both targets.
	do(t, ts, "PATCH", docs+"/open/a", `{"fields":{"n":{"integerValue":"2"}}}`, owner)
	all := strings.Join(c.collect(3), "\n")
	if !strings.Contains(all, `"integerValue":"2"`) {
		t.Errorf("live change: %s", all)
	}
	// A denied target is removed with its cause; the channel lives on.
	c.send(`{"database":"projects/p/databases/(default)","addTarget":{"documents":{"documents":["projects/p/databases/(default)/documents/users/bob"]},"targetId":6}}`)
	all = strings.Join(c.collect(2), "\n")
	if !strings.Contains(all, `"targetChangeType":"REMOVE"`) || !strings.Contains(all, `"code":7`) {
		t.Errorf("denied target: %s", all)
	}
	c.send(`{"database":"projects/p/databases/(default)","removeTarget":2}`)
	if all := strings.Join(c.collect(1), ""); !strings.Contains(all, `"REMOVE"`) {
		t.Errorf("removeTarget: %s", all)
	}
	// A malformed request ends the session with INVALID_ARGUMENT.
	c.send(`{"addTarget":{"targetId":"x"}}`)
	if all := strings.Join(c.collect(1), ""); !strings.Contains(all, `"status":"INVALID_ARGUMENT"`) {
		t.Errorf("malformed request: %s", all)
	}
	// Terminate.
	if st, _ := c.post(fmt.Sprintf("&SID=%s&RID=%d&TYPE=terminate", url.QueryEscape(c.sid), c.rid), ""); st != 200 {
		t.Errorf("terminate: %d", st)
	}
}

// TestWebChannelStreaming reads a CI=0 back channel as it streams.
func TestWebChannelStreaming(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	c := newWCClient(t, ts, "Listen")
	c.open("Bearer owner", `{"database":"projects/p/databases/(default)","addTarget":{"query":{"parent":"projects/p/databases/(default)/documents","structuredQuery":{"from":[{"collectionId":"s"}]}},"targetId":2}}`)
	resp, err := ts.Client().Get(c.base + fmt.Sprintf("&RID=rpc&SID=%s&AID=0&CI=0&TYPE=xmlhttp&t=1", url.QueryEscape(c.sid)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	next := func() string {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line))
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			t.Fatal(err)
		}
		return string(buf)
	}
	var got string
	for !strings.Contains(got, `"resumeToken"`) || !strings.Contains(got, "CURRENT") {
		got += next()
	}
	do(t, ts, "PATCH", docs+"/s/x", `{"fields":{}}`, owner)
	got = ""
	for !strings.Contains(got, "documents/s/x") {
		got += next()
	}
}

func TestWebChannelErrors(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	// An invalid token fails the stream, not the handshake.
	c := newWCClient(t, ts, "Listen")
	c.open("Bearer garbage", `{"database":"projects/p/databases/(default)"}`)
	if all := strings.Join(c.collect(1), ""); !strings.Contains(all, `"status":"INVALID_ARGUMENT"`) || !strings.Contains(all, "invalid jwt") {
		t.Errorf("bad token: %s", all)
	}
	c = newWCClient(t, ts, "Listen")
	c.sid = "nope"
	if st, body := c.send(`{}`); st != 400 || !strings.Contains(body, "Unknown SID") {
		t.Errorf("unknown SID: %d %q", st, body)
	}
	resp, _ := ts.Client().Get(c.base + "&RID=rpc&SID=nope&AID=0&CI=0&TYPE=xmlhttp")
	if resp.StatusCode != 400 {
		t.Errorf("unknown SID back channel: %d", resp.StatusCode)
	}
	resp.Body.Close()
	for _, p := range []string{webChannelPrefix + "Commit/channel", webChannelPrefix + "Listen"} {
		if r := do(t, ts, "POST", p, "", ""); r.status != 404 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	// A Write session's SID is not a Listen session's.
	w := newWCClient(t, ts, "Write")
	w.open("Bearer owner", `{"database":"projects/p/databases/(default)"}`)
	l := newWCClient(t, ts, "Listen")
	l.sid = w.sid
	if st, _ := l.send(`{}`); st != 400 {
		t.Errorf("cross-kind SID: %d", st)
	}
	// A write stream for a bad database.
	b := newWCClient(t, ts, "Write")
	b.open("Bearer owner", `{"database":"nonsense"}`)
	if all := strings.Join(b.collect(1), ""); !strings.Contains(all, `"INVALID_ARGUMENT"`) {
		t.Errorf("bad database: %s", all)
	}
}

func TestWebChannelDrain(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	c := newWCClient(t, ts, "Listen")
	c.open("Bearer owner", `{"database":"projects/p/databases/(default)","addTarget":{"documents":{"documents":["projects/p/databases/(default)/documents/a/b"]},"targetId":2}}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := ts.Client().Get(c.base + fmt.Sprintf("&RID=rpc&SID=%s&AID=0&CI=0&TYPE=xmlhttp", url.QueryEscape(c.sid)))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	// Drain once the back channel is attached, so it is the one ended.
	sess := c.session(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		sess.mu.Lock()
		attached := sess.attached
		sess.mu.Unlock()
		if attached {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the back channel never attached")
		}
		runtime.Gosched()
	}
	ts.Config.Handler.(interface{ Drain() }).Drain()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Drain left the back channel open")
	}
	st, _ := newWCClient(t, ts, "Listen").post("&RID=1&CVER=22", "count=0")
	if st != 503 {
		t.Errorf("handshake after Drain: %d", st)
	}
}

// TestWebChannelRetention: a streaming back channel keeps a bounded number
// of written but unacknowledged messages; a client asking for dropped ones
// is told to reconnect.
func TestWebChannelRetention(t *testing.T) {
	ts, _ := startREST(t)
	c := newWCClient(t, ts, "Write")
	c.open("Bearer owner", `{"database":"projects/p/databases/(default)"}`)
	resp, err := ts.Client().Get(c.base + fmt.Sprintf("&RID=rpc&SID=%s&AID=0&CI=0&TYPE=xmlhttp", url.QueryEscape(c.sid)))
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	read := func() {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line))
		io.ReadFull(rd, make([]byte, n))
	}
	read() // handshake answer
	const writes = 600
	for i := 0; i < writes; i++ {
		st, _ := c.send(`{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/r/` + strconv.Itoa(i) + `","fields":{}}}]}`)
		if st != 200 {
			t.Fatalf("write %d: %d", i, st)
		}
		read()
	}
	resp.Body.Close()
	s := c.session(t)
	s.mu.Lock()
	kept := len(s.msgs)
	s.mu.Unlock()
	if kept > wcRetain+1 {
		t.Errorf("%d messages kept after %d streamed, want at most %d", kept, writes+1, wcRetain+1)
	}
	// The client claims it saw nothing: it is told to reconnect.
	c.aid = 0
	all := strings.Join(c.collect(1), "")
	if !strings.Contains(all, `"UNAVAILABLE"`) {
		t.Errorf("lost messages: %.300s", all)
	}
}

// session returns the server side of the client's session.
func (c *wcClient) session(t *testing.T) *wcSession {
	t.Helper()
	h := c.ts.Config.Handler.(*httpHandler)
	h.wc.mu.Lock()
	defer h.wc.mu.Unlock()
	s := h.wc.sessions[c.sid]
	if s == nil {
		t.Fatal("no session")
	}
	return s
}
