package messagingserver_test

import (
	"bufio"
	"context"
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

// TestOnServerPort serves the handler on the one-port listener `pyric
// serve` uses: a delivery stream works through it, and Drain ends the
// stream so Shutdown is not held by it.
func TestOnServerPort(t *testing.T) {
	t.Parallel()
	eng, err := messaging.NewEngine(service.Env{Project: project}, messaging.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := eng.MintToken(admin, project, messaging.MintRequest{})
	h := messagingserver.NewHandler(eng, messagingserver.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := server.NewPort(l, nil, h)
	go port.Serve()
	base := "http://" + l.Addr().String()

	resp, err := http.Get(base + "/emulator/v1/projects/" + project + "/tokens/" + tok.Token + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, ":") {
		t.Fatalf("stream opened with %q", line)
	}
	if st, out := do(t, "POST", base+"/v1/projects/"+project+"/messages:send", `{"message": {"token": "`+tok.Token+`"}}`); st != 200 {
		t.Fatalf("send: %d %v", st, out)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: message") {
			break
		}
	}
	h.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := port.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown held by the stream: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("shutdown took %v", took)
	}
	rest := new(strings.Builder)
	bufio.NewReader(r).WriteTo(rest)
	if !strings.Contains(rest.String(), "event: end") {
		t.Fatalf("stream did not end: %q", rest)
	}
}
