package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPolicyOrigins(t *testing.T) {
	t.Parallel()
	listed := &Policy{Origins: []string{"http://192.168.1.20:5173", "https://abc.tunnel.example"}}
	cases := []struct {
		origin string
		p      *Policy
		want   bool
	}{
		{"http://localhost:5173", nil, true},
		{"https://localhost", nil, true},
		{"http://127.0.0.1:9876", nil, true},
		{"http://127.8.9.1:3000", nil, true},
		{"http://[::1]:3000", nil, true},
		{"http://app.localhost:3000", nil, true},
		{"https://evil.example", nil, false},
		{"null", nil, false},
		{"file://", nil, false},
		{"chrome-extension://abcdef", nil, false},
		{"http://localhost.evil.example", nil, false},
		{"http://127.0.0.1.evil.example", nil, false},
		{"http://192.168.1.20:5173", nil, false},
		{"http://192.168.1.20:5173", listed, true},
		{"http://192.168.1.20:5174", listed, false},
		{"HTTPS://ABC.tunnel.example", listed, true},
		{"https://evil.example", &Policy{Origins: []string{"*"}}, true},
	}
	for _, c := range cases {
		if got := c.p.AllowsOrigin(c.origin); got != c.want {
			t.Errorf("AllowsOrigin(%q) with %v = %v, want %v", c.origin, c.p, got, c.want)
		}
	}
}

func TestParseOrigin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"http://Dev.LAN:5173/": "http://dev.lan:5173", "*": "*", "https://x.example": "https://x.example"} {
		if got, err := ParseOrigin(in); err != nil || got != want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"dev.lan:5173", "ftp://x", "http://x/path", "http://", "http://x?q=1"} {
		if _, err := ParseOrigin(bad); err == nil || !strings.Contains(err.Error(), "scheme://host") {
			t.Errorf("ParseOrigin(%q): %v, want an error", bad, err)
		}
	}
}

func TestPolicyHosts(t *testing.T) {
	t.Parallel()
	local := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 8080}
	p := &Policy{Hosts: []string{"devbox.lan"}, Origins: []string{"https://abc.tunnel.example"}}
	cases := []struct {
		host string
		p    *Policy
		want bool
	}{
		{"", nil, true},
		{"localhost:8080", nil, true},
		{"127.0.0.1:8080", nil, true},
		{"[::1]:8080", nil, true},
		{"192.168.1.5:8080", nil, true}, // the address the connection came in on
		{"192.168.1.6:8080", nil, false},
		{"rebind.evil.example:8080", nil, false},
		{"fcm.googleapis.com:443", nil, true}, // production's hosts, kept by SDKs redirected here
		{"demo.firebaseio.com", nil, true},
		{"googleapis.com.evil.example", nil, false},
		{"evilgoogleapis.com", nil, false},
		{"devbox.lan:8080", nil, false},
		{"devbox.lan:8080", p, true},
		{"abc.tunnel.example", p, true},
		{"evil.example", p, false},
	}
	for _, c := range cases {
		if got := c.p.AllowsHost(c.host, local); got != c.want {
			t.Errorf("AllowsHost(%q) = %v, want %v", c.host, got, c.want)
		}
	}
}

// startGuarded serves a handler that records what reached it on a Port.
func startGuarded(t *testing.T, pol *Policy) (string, *int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reached := new(int)
	p := NewPort(l, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*reached++
		w.Write([]byte("data"))
	}))
	p.SetPolicy(pol)
	go p.Serve()
	t.Cleanup(func() { p.Close() })
	return "http://" + l.Addr().String(), reached
}

type guardCase struct {
	name    string
	method  string
	host    string
	headers map[string]string
	status  int
	reached bool
	want    map[string]string // response headers ("" must be absent)
	msg     string            // in the refusal's message
}

func runGuard(t *testing.T, base string, reached *int, cases []guardCase) {
	t.Helper()
	for _, c := range cases {
		before := *reached
		req, _ := http.NewRequest(c.method, base+"/x", nil)
		if c.host != "" {
			req.Host = c.host
		}
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || (*reached > before) != c.reached {
			t.Errorf("%s: %d (handler reached %v), want %d (%v): %s", c.name, resp.StatusCode, *reached > before, c.status, c.reached, body)
		}
		for k, v := range c.want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got, v)
			}
		}
		if c.msg != "" {
			var e struct {
				Error struct{ Message, Status string }
			}
			if json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, c.msg) || e.Error.Status != "PERMISSION_DENIED" {
				t.Errorf("%s: body %s, want a PERMISSION_DENIED message with %q", c.name, body, c.msg)
			}
		}
	}
}

func TestGuardDefault(t *testing.T) {
	t.Parallel()
	base, reached := startGuarded(t, nil)
	evil := "https://evil.example"
	runGuard(t, base, reached, []guardCase{
		{name: "no origin (curl, Node, admin SDKs)", method: "GET", status: 200, reached: true, want: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "bearer owner without origin", method: "DELETE", headers: map[string]string{"Authorization": "Bearer owner"}, status: 200, reached: true},
		{name: "loopback origin", method: "GET", headers: map[string]string{"Origin": "http://localhost:5173"}, status: 200, reached: true,
			want: map[string]string{"Access-Control-Allow-Origin": "http://localhost:5173", "Access-Control-Allow-Credentials": "true"}},
		{name: "loopback preflight", method: "OPTIONS", headers: map[string]string{"Origin": "http://127.0.0.1:9876", "Access-Control-Request-Method": "DELETE",
			"Access-Control-Request-Headers": "authorization,content-type"}, status: 204,
			want: map[string]string{"Access-Control-Allow-Origin": "http://127.0.0.1:9876", "Access-Control-Allow-Headers": "authorization,content-type"}},
		{name: "foreign simple POST (a wipe without preflight)", method: "POST", headers: map[string]string{"Origin": evil}, status: 403,
			want: map[string]string{"Access-Control-Allow-Origin": ""}, msg: `origin "https://evil.example"`},
		{name: "foreign GET names the flag", method: "GET", headers: map[string]string{"Origin": evil}, status: 403, msg: "--allow-origin=https://evil.example"},
		{name: "foreign bearer owner", method: "DELETE", headers: map[string]string{"Origin": evil, "Authorization": "Bearer owner"}, status: 403},
		{name: "foreign preflight", method: "OPTIONS", headers: map[string]string{"Origin": evil, "Access-Control-Request-Method": "PUT"}, status: 403,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""}},
		{name: "foreign private network preflight", method: "OPTIONS", headers: map[string]string{"Origin": evil, "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Private-Network": "true"}, status: 403, want: map[string]string{"Access-Control-Allow-Private-Network": ""}},
		{name: "sandboxed page (null origin)", method: "POST", headers: map[string]string{"Origin": "null"}, status: 403},
		{name: "DNS rebinding", method: "GET", host: "rebind.evil.example:9000", status: 403, msg: "DNS rebinding"},
		{name: "DNS rebinding with a same-origin request", method: "POST", host: "rebind.evil.example:9000", headers: map[string]string{"Origin": "http://rebind.evil.example:9000"}, status: 403},
		{name: "localhost host", method: "GET", host: "localhost:9000", status: 200, reached: true},
	})
}

func TestGuardListed(t *testing.T) {
	t.Parallel()
	lan := "http://192.168.1.20:5173"
	base, reached := startGuarded(t, &Policy{Origins: []string{lan, "https://abc.tunnel.example"}})
	runGuard(t, base, reached, []guardCase{
		{name: "listed origin", method: "GET", headers: map[string]string{"Origin": lan}, status: 200, reached: true,
			want: map[string]string{"Access-Control-Allow-Origin": lan}},
		{name: "listed origin's private network preflight", method: "OPTIONS", headers: map[string]string{"Origin": "https://abc.tunnel.example",
			"Access-Control-Request-Method": "GET", "Access-Control-Request-Private-Network": "true"}, status: 204,
			want: map[string]string{"Access-Control-Allow-Private-Network": "true", "Access-Control-Allow-Origin": "https://abc.tunnel.example"}},
		{name: "the tunnel's host", method: "GET", host: "abc.tunnel.example", status: 200, reached: true},
		{name: "another origin", method: "GET", headers: map[string]string{"Origin": "http://192.168.1.21:5173"}, status: 403},
	})
	if w := (&Policy{Origins: []string{lan}}).Warnings(); len(w) != 0 {
		t.Errorf("warnings for a listed origin: %v", w)
	}
	if w := (&Policy{Origins: []string{"*"}}).Warnings(); len(w) != 1 || !strings.Contains(w[0], "--allow-origin=*") {
		t.Errorf("warnings for *: %v", w)
	}
}

// TestGuardPolicyLate: a port's policy can be set after it serves.
func TestGuardPolicyLate(t *testing.T) {
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	p := NewPort(l, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	go p.Serve()
	defer p.Close()
	get := func() int {
		req, _ := http.NewRequest("GET", "http://"+l.Addr().String(), nil)
		req.Header.Set("Origin", "http://dev.lan:3000")
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get(); s != 403 {
		t.Fatalf("before: %d", s)
	}
	p.SetPolicy(&Policy{Origins: []string{"http://dev.lan:3000"}})
	if s := get(); s != 200 {
		t.Fatalf("after: %d", s)
	}
}

// TestGuardAnswersOversizedBodies: a body refused as too large gets its 413
// read by the client, not a connection reset (the handler stops reading at
// its limit; the port drops the rest after the answer).
func TestGuardAnswersOversizedBodies(t *testing.T) {
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	p := NewPort(l, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20)); err != nil {
			http.Error(w, "Request payload size exceeds the limit: 1048576 bytes.", http.StatusRequestEntityTooLarge)
			return
		}
		w.Write([]byte("ok"))
	}))
	go p.Serve()
	defer p.Close()
	// A client that sends its whole body before reading (as curl and
	// Node do with a small socket buffer) must get to the answer.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	size := 30 << 20
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n", size)
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatalf("sending 30 MiB: %v", err)
	}
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(status, " 413 ") {
		t.Errorf("status line %q, %v", status, err)
	}
	for _, size := range []int{10, 30 << 20} {
		resp, err := http.Post("http://"+l.Addr().String(), "application/json", strings.NewReader(strings.Repeat("x", size)))
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := map[bool]int{true: 200, false: 413}[size == 10]; resp.StatusCode != want || (want == 413 && !strings.Contains(string(b), "exceeds the limit")) {
			t.Errorf("%d bytes: %d %s", size, resp.StatusCode, b)
		}
		if size == 10 && resp.ContentLength != 2 {
			t.Errorf("a read body's answer lost its Content-Length: %d", resp.ContentLength)
		}
	}
}

// ownCORS is a handler that answers CORS itself, as the functions port's
// functions do (an allowed origin, reflected).
type ownCORS struct{ reached *int }

func (h ownCORS) AnswersCORS() {}
func (h ownCORS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	*h.reached++
	w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Write([]byte("data"))
}

// TestGuardHandlerAnswersCORS: behind a CORSAnswerer the policy still
// refuses foreign origins and rebinding hosts, the handler's own CORS
// answers reach the client without the Guard's, and a listed origin's
// Private Network Access preflight is still allowed by the policy.
func TestGuardHandlerAnswersCORS(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reached := new(int)
	p := NewPort(l, nil, ownCORS{reached})
	lan := "http://192.168.1.20:5173"
	p.SetPolicy(&Policy{Origins: []string{lan}})
	go p.Serve()
	t.Cleanup(func() { p.Close() })
	runGuard(t, "http://"+l.Addr().String(), reached, []guardCase{
		{name: "loopback origin", method: "POST", headers: map[string]string{"Origin": "http://localhost:5173"}, status: 200, reached: true,
			want: map[string]string{"Access-Control-Allow-Origin": "http://localhost:5173", "Access-Control-Allow-Credentials": ""}},
		{name: "the handler's preflight", method: "OPTIONS", headers: map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"},
			status: 204, reached: true, want: map[string]string{"Access-Control-Allow-Methods": "POST", "Access-Control-Max-Age": "", "Access-Control-Allow-Private-Network": ""}},
		{name: "a listed origin's private network preflight", method: "OPTIONS", headers: map[string]string{"Origin": lan, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Private-Network": "true"}, status: 204, reached: true,
			want: map[string]string{"Access-Control-Allow-Private-Network": "true", "Access-Control-Allow-Origin": lan}},
		{name: "foreign origin", method: "POST", headers: map[string]string{"Origin": "https://evil.example"}, status: 403, msg: `origin "https://evil.example"`},
		{name: "foreign private network preflight", method: "OPTIONS", headers: map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Private-Network": "true"}, status: 403, want: map[string]string{"Access-Control-Allow-Private-Network": ""}},
		{name: "DNS rebinding", method: "POST", host: "rebind.evil.example:5001", status: 403, msg: "DNS rebinding"},
	})
}

// loopbackOriginCases are origins whose fast reading (plainOriginHost)
// must agree with url.Parse's: the usual forms and their near misses.
var loopbackOriginCases = []string{
	"http://localhost:5173", "https://localhost", "http://LOCALHOST:80", "http://127.0.0.1:9876", "http://127.8.9.1",
	"http://app.localhost:3000", "http://localhost.evil.example", "http://127.0.0.1.evil.example", "http://192.168.1.20:5173",
	"http://[::1]:3000", "http://[::1]", "http://[::1", "http://[localhost]", "http://[127.0.0.1]", "http://localhost:",
	"http://localhost:abc", "http://localhost:80:90", "http://localhost:-1", "http://localhost/", "http://localhost?x",
	"http://localhost#x", "http://user@localhost", "http://evil@127.0.0.1", "http://localhost%2e", "http://", "https://",
	"HTTP://localhost", "ftp://localhost", "null", "", "file://", "http://loc alhost", "http://localhost\x00", "http://-.localhost",
	"http://127.0.0.1:99999", "http://0x7f.0.0.1", "http://2130706433", "http://127.1", "http://::1", "http://localhost.",
}

func TestLoopbackOriginAgreesWithURLParse(t *testing.T) {
	t.Parallel()
	for _, o := range loopbackOriginCases {
		if got, want := loopbackOrigin(o), loopbackOriginParsed(o); got != want {
			t.Errorf("loopbackOrigin(%q) = %v, url.Parse's reading %v", o, got, want)
		}
	}
}

func FuzzLoopbackOrigin(f *testing.F) {
	for _, o := range loopbackOriginCases {
		f.Add(o)
	}
	f.Fuzz(func(t *testing.T, o string) {
		if got, want := loopbackOrigin(o), loopbackOriginParsed(o); got != want {
			t.Errorf("loopbackOrigin(%q) = %v, url.Parse's reading %v", o, got, want)
		}
	})
}

// TestSetCORS checks setCORS against Header's Set and Add, with and
// without a Vary the handler set before, and that a later Add to its
// headers does not write into another's value.
func TestSetCORS(t *testing.T) {
	t.Parallel()
	for _, expose := range []bool{false, true} {
		for _, vary := range []bool{false, true} {
			got, want := http.Header{}, http.Header{}
			if vary {
				got.Set("Vary", "Accept-Encoding")
				want.Set("Vary", "Accept-Encoding")
			}
			setCORS(got, "http://localhost:5173", expose)
			want.Set("Access-Control-Allow-Origin", "http://localhost:5173")
			want.Set("Access-Control-Allow-Credentials", "true")
			want.Add("Vary", "Origin")
			if expose {
				want.Set("Access-Control-Expose-Headers", exposedHeaders)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("expose %v, vary %v: %v, want %v", expose, vary, got, want)
			}
			for k := range got {
				got.Add(k, "later")
			}
			for k, v := range want {
				if g := got[k]; !reflect.DeepEqual(g[:len(g)-1], v) {
					t.Errorf("expose %v, vary %v: after Add, %s = %q, want %q then \"later\"", expose, vary, k, g, v)
				}
			}
		}
	}
}
