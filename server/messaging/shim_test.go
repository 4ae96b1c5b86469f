package messagingserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/messaging/messagingtest"
)

// TestStream reads a token's delivery stream as a browser's EventSource
// would.
func TestStream(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	tok := mint(t, s, `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/emulator/v1/projects/"+project+"/tokens/"+tok+"/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewReader(resp.Body)
	if first, _ := lines.ReadString('\n'); !strings.HasPrefix(first, ":") {
		t.Fatalf("first line %q", first)
	}
	// The watcher is registered before the first byte is sent, so this
	// send is delivered.
	st, out := do(t, "POST", s.URL+"/v1/projects/"+project+"/messages:send", `{"message": {"token": "`+tok+`", "data": {"k": "v"}}}`)
	if st != 200 {
		t.Fatalf("send: %d %v", st, out)
	}
	var event, data string
	for data == "" {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
	var d messaging.Delivery
	if err := json.Unmarshal([]byte(data), &d); err != nil || event != "message" || d.Name != out["name"] || d.Payload.Data["k"] != "v" {
		t.Fatalf("event %q delivery %+v %v", event, d, err)
	}
	// deleteToken ends the stream.
	do(t, "DELETE", s.URL+"/emulator/v1/projects/"+project+"/tokens/"+tok, "")
	rest, _ := io.ReadAll(lines)
	if !strings.Contains(string(rest), "event: end") {
		t.Fatalf("stream after delete: %q", rest)
	}
	if st, _ := do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/tokens/"+tok+"/stream", ""); st != 404 {
		t.Fatalf("stream of a deleted token: %d", st)
	}
}

// TestShimInChromium runs the shim in a headless Chromium page on another
// origin, as a web app would use it.
func TestShimInChromium(t *testing.T) {
	bin := e2etest.Chromium(t)
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	script, _ := filepath.Abs("testdata/shim_browser.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := e2etest.RunNode(t, ctx, script, "PYRIC_MESSAGING_URL="+s.URL, "CHROMIUM="+bin)
	checkShim(t, out, "browser")
}

// TestShimInNode runs the served shim module in Node: getToken is stable
// per instance, onMessage receives the send, deleteToken makes later
// sends UNREGISTERED.
func TestShimInNode(t *testing.T) {
	e2etest.NeedNode(t)
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	resp, err := http.Get(s.URL + "/emulator/v1/messaging.js")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("shim: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	shim := filepath.Join(t.TempDir(), "messaging.mjs")
	if err := os.WriteFile(shim, src, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/shim_node.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	out := e2etest.RunNode(t, ctx, script, "PYRIC_MESSAGING_URL="+s.URL, "PYRIC_SHIM_FILE="+shim, "NODE_OPTIONS=--experimental-eventsource --no-warnings")
	checkShim(t, out, "from pyric")
}

// checkShim checks what a shim scenario printed.
func checkShim(t *testing.T, out, body string) {
	t.Helper()
	var got struct {
		Token, Again string
		Payload      messaging.ClientPayload
		Deleted      bool
		After        struct {
			Status int
			Body   map[string]any
		}
		Supported bool
	}
	e2etest.LastJSONLine(t, out, &got)
	if got.Token == "" || got.Token != got.Again || len(got.Token) != 142 || !strings.Contains(got.Token, ":APA91b") {
		t.Fatalf("tokens %q %q", got.Token, got.Again)
	}
	if got.Payload.From != messaging.SenderID(project) || got.Payload.MessageID == "" || got.Payload.Notification["title"] != "Hello" || got.Payload.Notification["body"] != body || got.Payload.Data["attempt"] == "" {
		t.Fatalf("payload %+v", got.Payload)
	}
	if !got.Deleted || got.After.Status != 404 || !strings.Contains(toJSON(got.After.Body), "UNREGISTERED") || !got.Supported {
		t.Fatalf("after deleteToken: %+v", got)
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
