package messagingserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	messagingserver "github.com/pyric/pyric/server/messaging"
)

// TestOversizedSendOnPort: a 30 MB send, written whole before the client
// reads (as curl and Node do), is answered 413 with FCM's message on the
// port `pyric serve` uses, not with a connection reset.
func TestOversizedSendOnPort(t *testing.T) {
	t.Parallel()
	eng, err := messaging.NewEngine(service.Env{Project: project}, messaging.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := server.NewPort(l, nil, messagingserver.NewHandler(eng, messagingserver.Options{}))
	go p.Serve()
	defer p.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	size := 30 << 20
	fmt.Fprintf(c, "POST /v1/projects/%s/messages:send HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer owner\r\nContent-Length: %d\r\n\r\n", project, size)
	if _, err := c.Write([]byte(strings.Repeat(" ", size))); err != nil {
		t.Fatalf("sending 30 MB: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(b), "Request payload size exceeds the limit") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}
