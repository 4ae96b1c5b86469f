package databaseserver_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/sandbox/service"
	server "github.com/pyric/pyric/server/database"
)

// rawRequest sends a request's head (declaring contentLength) and a
// prefix of its body, and returns the connection to read the answer from.
func rawRequest(t *testing.T, addr, head string, contentLength int64, prefix string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s", head, contentLength, prefix)
	return c
}

func statusLine(t *testing.T, c net.Conn, within time.Duration) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer within %v: %v", within, err)
	}
	return strings.TrimSpace(line)
}

// TestWriteRefusedBeforeItsBody: a write no rule can allow the caller, or
// one larger than production's REST limit, is answered from its head,
// without waiting for (or buffering) a byte of its body.
func TestWriteRefusedBeforeItsBody(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, `{"rules": {".read": true, ".write": false, "open": {".write": true}}}`)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		name, head string
		length     int64
		want       string
	}{
		{"deny-all rules, 100 MiB", "PUT /big.json?ns=demo", 100 << 20, "401"},
		{"deny-all rules, PATCH", "PATCH /closed.json?ns=demo", 100 << 20, "401"},
		{"deny-all rules, override", "POST /x.json?ns=demo&x-http-method-override=PUT", 100 << 20, "401"},
		{"past production's 256 MiB", "PUT /open/x.json?ns=demo", 300 << 20, "413"},
	} {
		conn := rawRequest(t, addr, c.head, c.length, "")
		if got := statusLine(t, conn, 5*time.Second); !strings.Contains(got, " "+c.want+" ") {
			t.Errorf("%s: %q, want %s", c.name, got, c.want)
		}
	}
	// Admin is not refused by the rules.
	if r := do(t, srv, "PUT", "/x.json?ns=demo", "1", "Authorization", owner); r.status != 200 {
		t.Errorf("admin write: %d %s", r.status, r.body)
	}
}

// TestInFlightBudget: bodies held by writes in flight are bounded; past
// the bound a write is answered 503 with Retry-After, and writes pass
// again once the others finish.
func TestInFlightBudget(t *testing.T) {
	t.Parallel()
	db, err := database.New(service.Env{Project: "demo"}, database.Options{Rules: `{"rules": {".read": true, ".write": true}}`})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.NewHandler(db, server.Options{MaxInFlight: 1 << 20}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	size := int64(700 << 10)
	body := `"` + strings.Repeat("x", int(size)-2) + `"`
	// The first write declares 700 KiB and sends half of it.
	slow := rawRequest(t, addr, "PUT /slow.json?ns=demo", size, body[:size/2])
	h := srv.Config.Handler.(*server.Handler)
	await.Until(t, 5*time.Second, func() bool { return server.InFlightBytes(h) >= size }, "the slow write to take its %d bytes of the budget", size)
	r := do(t, srv, "PUT", "/second.json?ns=demo", body)
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "in flight") {
		t.Errorf("second write past the budget: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "PUT", "/small.json?ns=demo", `"fits"`); r.status != 200 {
		t.Errorf("a small write within the budget: %d %s", r.status, r.body)
	}
	slow.Write([]byte(body[size/2:]))
	if got := statusLine(t, slow, 5*time.Second); !strings.Contains(got, " 200 ") {
		t.Fatalf("slow write: %s", got)
	}
	// The first releases its bytes as its handler returns, just after
	// its answer went out.
	var r2 resp
	await.Poll(time.Second, func() bool {
		r2 = do(t, srv, "PUT", "/second.json?ns=demo", body)
		return r2.status != 503
	})
	if r2.status != 200 {
		t.Errorf("after the first finished: %d %.100s", r2.status, r2.body)
	}
	// Chunked bodies (no Content-Length) are counted as they arrive.
	req, _ := http.NewRequest("PUT", srv.URL+"/chunked.json?ns=demo", strings.NewReader(`"`+strings.Repeat("y", 2<<20)+`"`))
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("a chunked body past the budget: %d", resp.StatusCode)
	}
}

// TestBrokenTextAndKeys: invalid UTF-8 and lone surrogates are refused,
// not stored as U+FFFD; a key no location can have is refused with
// production's answer naming the key's line and column; an update key with
// an empty segment too. Each answer is compared whole.
func TestBrokenTextAndKeys(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, `{"rules": {".read": true, ".write": true}}`)
	const parse = `{"error":"Invalid data; couldn't parse JSON object, array, or value."}`
	key := func(at string) string {
		return `{"error":"Invalid data; couldn't parse key beginning at ` + at + `. Key value can't be empty or contain $ # [ ] / or ."}`
	}
	const update = `{"error":"Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"}`
	for _, c := range []struct{ name, method, body, want string }{
		{"invalid UTF-8", "PUT", "\"\xff\"", parse},
		{"lone surrogate", "PUT", `{"a": "\ud800"}`, parse},
		{"lone surrogate in a POST", "POST", `{"a": "x\udc00"}`, parse},
		{"first key", "PUT", `{"a.b": 1}`, key("1:2")},
		{"nested key", "PUT", `{"ok": {"x": 1, "a$b": 2}}`, key("1:17")},
		{"empty key", "PUT", `{"ok": {"": 1}}`, key("1:9")},
		{"key on a later line", "PUT", "{\n  \"ok\": 1,\n  \"a/b\": 2\n}", key("3:3")},
		{"columns count characters", "PUT", `{"é": {"ü": 1, "[": 2}}`, key("1:16")},
		{"key in a POST", "POST", `{"#": 1}`, key("1:2")},
		{"key inside an update's value", "PATCH", `{"a/b": {"c]": 1}}`, key("1:10")},
		{"update key with an empty segment", "PATCH", `{"a//b": 1}`, update},
		{"update of a non-object", "PATCH", `1`, update},
	} {
		r := do(t, srv, c.method, "/t.json?ns=demo", c.body)
		if r.status != 400 || r.body != c.want {
			t.Errorf("%s: %d %s\nwant 400 %s", c.name, r.status, r.body, c.want)
		}
	}
	if r := do(t, srv, "GET", "/.json?ns=demo", ""); r.body != "null" {
		t.Errorf("stored after refusals: %s", r.body)
	}
	// Keys with a meaning, strings holding the forbidden characters, and
	// an update's path keys pass.
	for _, c := range []struct{ method, body string }{
		{"PATCH", `{"a/b": "\ud83d\ude00"}`},
		{"PUT", `{"v": {".value": "a.b/$#[]", ".priority": 1}, "t": {".sv": "timestamp"}}`},
		{"PATCH", `{"x/y/z": {"k": "[]"}}`},
	} {
		if r := do(t, srv, c.method, "/t.json?ns=demo", c.body); r.status != 200 {
			t.Errorf("a valid %s %s: %d %s", c.method, c.body, r.status, r.body)
		}
	}
}
