package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/freeport"
)

// cdp is a minimal Chrome DevTools protocol client: numbered commands
// answered by id, and the events in between.
type cdp struct {
	c      *websocket.Conn
	mu     sync.Mutex
	next   int
	waits  map[int]chan json.RawMessage
	events chan cdpEvent
}

type cdpEvent struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func dialInspector(t *testing.T, port int) *cdp {
	t.Helper()
	var list []struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/json/list")
	if err != nil {
		t.Fatalf("the inspector's target list: %v", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) != 1 {
		t.Fatalf("the inspector lists %d targets (%v), want the one worker", len(list), err)
	}
	c, _, err := websocket.Dial(context.Background(), list[0].WebSocketDebuggerURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	d := &cdp{c: c, waits: map[int]chan json.RawMessage{}, events: make(chan cdpEvent, 1024)}
	t.Cleanup(func() { c.Close(websocket.StatusNormalClosure, "") })
	go func() {
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
				cdpEvent
			}
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			if m.ID != 0 {
				d.mu.Lock()
				ch := d.waits[m.ID]
				delete(d.waits, m.ID)
				d.mu.Unlock()
				if ch != nil {
					if m.Error != nil {
						ch <- append(json.RawMessage(`{"error":`), append(m.Error, '}')...)
					} else {
						ch <- m.Result
					}
				}
				continue
			}
			select {
			case d.events <- m.cdpEvent:
			default:
			}
		}
	}()
	return d
}

// call sends a command and returns its result.
func (d *cdp) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	d.mu.Lock()
	d.next++
	id := d.next
	ch := make(chan json.RawMessage, 1)
	d.waits[id] = ch
	d.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := d.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case r := <-ch:
		if strings.HasPrefix(string(r), `{"error":`) {
			t.Fatalf("%s: %s", method, r)
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer", method)
	}
	return nil
}

// await waits for an event of the method.
func (d *cdp) await(t *testing.T, method string) json.RawMessage {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-d.events:
			if e.Method == method {
				return e.Params
			}
		case <-deadline:
			t.Fatalf("no %s within 60s", method)
		}
	}
}

// lineOf is the 0-based line of the first line of file containing s.
func lineOf(t *testing.T, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return i
		}
	}
	t.Fatalf("%s has no line with %q", file, s)
	return 0
}

type fnResult struct {
	status int
	body   string
}

func get(url string) <-chan fnResult {
	out := make(chan fnResult, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			out <- fnResult{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- fnResult{status: resp.StatusCode, body: string(b)}
	}()
	return out
}

// TestInspectFunctions debugs a function through --inspect-functions as
// a developer's debugger does: it attaches to the Node inspector over
// the Chrome DevTools protocol, sets a breakpoint in the function's
// source, invokes it and is paused there; invocations wait while it is
// paused (they are serialized), a function's timeout does not end a
// paused invocation (as the Emulator Suite disables timeouts when
// debugging), and resuming answers every request.
func TestInspectFunctions(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	port, err := freeport.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(e2etest.FunctionsDir(), "js")
	s := startServe(t, "--project", "demo-inspect", "--in-memory", "--functions-source", src, "--inspect-functions", strconv.Itoa(port))
	defer s.stop()
	if s.Functions == "" {
		t.Fatalf("no functions endpoint: %s", s.stderr)
	}
	d := dialInspector(t, port)
	d.call(t, "Debugger.enable", map[string]any{})
	d.call(t, "Runtime.enable", map[string]any{})
	index := filepath.Join(src, "index.js")
	urlRegex := strings.ReplaceAll(filepath.ToSlash(index), ".", `\.`) + "$"
	base := fmt.Sprintf("http://%s/demo-inspect", s.Functions)

	// A breakpoint in hello: the invocation pauses on it.
	line := lineOf(t, index, `logger.info("hello called"`)
	var bp struct {
		BreakpointID string `json:"breakpointId"`
	}
	json.Unmarshal(d.call(t, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": line, "urlRegex": urlRegex}), &bp)
	hello := get(base + "/us-central1/hello?x=1")
	var paused struct {
		CallFrames []struct {
			FunctionName string `json:"functionName"`
			Location     struct {
				LineNumber int `json:"lineNumber"`
			} `json:"location"`
		} `json:"callFrames"`
		HitBreakpoints []string `json:"hitBreakpoints"`
	}
	json.Unmarshal(d.await(t, "Debugger.paused"), &paused)
	if len(paused.CallFrames) == 0 || paused.CallFrames[0].Location.LineNumber != line || len(paused.HitBreakpoints) != 1 || paused.HitBreakpoints[0] != bp.BreakpointID {
		t.Fatalf("paused at %+v, want line %d on breakpoint %s", paused, line, bp.BreakpointID)
	}
	// While hello is paused, another function's invocation waits.
	v1 := get(base + "/europe-west1/helloV1")
	select {
	case r := <-v1:
		t.Fatalf("helloV1 answered %d %q while hello was paused: invocations are not serialized", r.status, r.body)
	case r := <-hello:
		t.Fatalf("hello answered %d %q while paused", r.status, r.body)
	case <-time.After(time.Second):
	}
	d.call(t, "Debugger.resume", map[string]any{})
	if r := <-hello; r.status != 200 || !strings.Contains(r.body, `"path":"/"`) {
		t.Errorf("hello after resuming: %d %s", r.status, r.body)
	}
	if r := <-v1; r.status != 201 || r.body != "v1 GET /" {
		t.Errorf("helloV1 after hello: %d %q", r.status, r.body)
	}
	d.call(t, "Debugger.removeBreakpoint", map[string]any{"breakpointId": bp.BreakpointID})

	// Without a breakpoint, concurrent invocations still run one at a
	// time: nap counts the naps running when it starts.
	var naps []<-chan fnResult
	for range 3 {
		naps = append(naps, get(base+"/us-central1/nap"))
	}
	for _, n := range naps {
		if r := <-n; r.status != 200 || r.body != `{"concurrent":1}` {
			t.Errorf("nap: %d %s, want it alone in its worker", r.status, r.body)
		}
	}

	// A function paused past its timeout is not timed out.
	line = lineOf(t, index, `res.send("quick")`)
	d.call(t, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": line, "urlRegex": urlRegex})
	quick := get(base + "/us-central1/quick")
	d.await(t, "Debugger.paused")
	time.Sleep(1500 * time.Millisecond) // past quick's timeoutSeconds: 1
	d.call(t, "Debugger.resume", map[string]any{})
	if r := <-quick; r.status != 200 || r.body != "quick" {
		t.Errorf("quick after a pause past its timeout: %d %q", r.status, r.body)
	}
}

// TestInspectFunctionsCodebases: with two codebases (e2e/functions'
// firebase.json lists js and ts), --inspect-functions PORT gives each
// codebase's runtime an inspector of its own, as firebase-tools'
// --inspect-functions does (it refuses a single PORT for several
// codebases and picks free ports from 9229): js on PORT, ts on the next
// free port after it (the test holds PORT+1), each named on stderr. A
// debugger attached to each over the DevTools protocol (/json/list) is
// in that codebase's runtime, and a breakpoint in one codebase pauses
// its invocations only: the other codebase keeps answering.
func TestInspectFunctionsCodebases(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	t.Chdir(e2etest.FunctionsDir())
	// The second codebase's inspector would take port+1: it is held, so
	// the codebase must skip to the next free one.
	port, err := freeport.Run(2)
	if err != nil {
		t.Fatal(err)
	}
	held, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	s := startServe(t, "--project", "demo-inspect-cb", "--in-memory", "--inspect-functions", strconv.Itoa(port))
	defer s.stop()
	if s.Functions == "" {
		t.Fatalf("no functions endpoint: %s", s.stderr)
	}
	ports := map[string]int{}
	re := regexp.MustCompile(`codebase (\w+) \(([^)]*)\) runs under the Node inspector at 127\.0\.0\.1:(\d+)`)
	for _, m := range re.FindAllStringSubmatch(s.stderr.String(), -1) {
		ports[m[1]], _ = strconv.Atoi(m[3])
	}
	if ports["js"] != port || ports["ts"] <= port+1 || len(ports) != 2 {
		t.Fatalf("inspector ports %v, want js on %d and ts on a free port after %d:\n%s", ports, port, port+1, s.stderr)
	}
	for cb, p := range ports {
		d := dialInspector(t, p)
		var cwd struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		json.Unmarshal(d.call(t, "Runtime.evaluate", map[string]any{"expression": "process.cwd()", "returnByValue": true}), &cwd)
		if want := filepath.Join(e2etest.FunctionsDir(), cb); cwd.Result.Value != want {
			t.Errorf("the inspector on %d is in %q, want codebase %s's runtime in %s", p, cwd.Result.Value, cb, want)
		}
		if cb != "js" {
			continue
		}
		// A breakpoint in js's hello pauses it; ts's tsHello answers
		// meanwhile.
		d.call(t, "Debugger.enable", map[string]any{})
		index := filepath.Join(e2etest.FunctionsDir(), "js", "index.js")
		line := lineOf(t, index, `logger.info("hello called"`)
		d.call(t, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": line, "urlRegex": strings.ReplaceAll(filepath.ToSlash(index), ".", `\.`) + "$"})
		base := fmt.Sprintf("http://%s/demo-inspect-cb/us-central1", s.Functions)
		hello := get(base + "/hello")
		d.await(t, "Debugger.paused")
		select {
		case r := <-get(base + "/tsHello"):
			if r.status != 200 {
				t.Errorf("tsHello while js is paused: %d %q", r.status, r.body)
			}
		case <-time.After(60 * time.Second):
			t.Error("tsHello waited for js's paused invocation")
		}
		d.call(t, "Debugger.resume", map[string]any{})
		if r := <-hello; r.status != 200 {
			t.Errorf("hello after resuming: %d %s", r.status, r.body)
		}
	}
}
