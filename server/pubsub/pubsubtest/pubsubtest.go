// Package pubsubtest starts Pub/Sub servers for tests: Pyric's (an
// engine behind server/pubsub on a free port) and the official emulator
// (the Debian package google-cloud-cli-pubsub-emulator), the oracle of
// the differential tests, and connects the official Go client to either.
package pubsubtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/internal/freeport"
	"github.com/pyric/pyric/internal/needs"
	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
	server "github.com/pyric/pyric/server/pubsub"
)

// Pyric starts an engine (in memory unless env has a Bucket) behind
// server/pubsub on a free port and returns the engine and host:port; both
// stop when the test ends.
func Pyric(t testing.TB, env service.Env, opts engine.Options) (*engine.Engine, string) {
	t.Helper()
	e, err := engine.NewEngine(env, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(e)
	port := server.NewPort(l, srv)
	go port.Serve()
	t.Cleanup(func() {
		srv.Drain()
		port.Close()
		e.Close()
	})
	return e, l.Addr().String()
}

// EmulatorScript returns the official emulator's launcher, or "".
func EmulatorScript() string {
	if p := os.Getenv("PYRIC_PUBSUB_EMULATOR"); p != "" {
		return p
	}
	const p = "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator"
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// Emulator is a running official Pub/Sub emulator.
type Emulator struct {
	Host   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *bytes.Buffer
}

var (
	sharedMu sync.Mutex
	shared   *Emulator
)

// Official returns the official emulator this test binary shares,
// starting it on first use; it skips the test (fails under
// PYRIC_E2E_REQUIRED=1) when the emulator or Java is missing. Tests
// using it must name their topics and subscriptions uniquely.
func Official(t testing.TB) *Emulator {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		return shared
	}
	script := EmulatorScript()
	if script == "" {
		needs.Missing(t, "official Pub/Sub emulator not installed (Debian package google-cloud-cli-pubsub-emulator)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		needs.Missing(t, "java not found; the official Pub/Sub emulator needs it")
	}
	port, err := freeport.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	e := &Emulator{Host: fmt.Sprintf("127.0.0.1:%d", port), log: &bytes.Buffer{}, exited: make(chan struct{})}
	e.cmd = exec.Command(script, "--host=127.0.0.1", fmt.Sprintf("--port=%d", port))
	e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("start the Pub/Sub emulator: %v", err)
	}
	go func() { e.cmd.Wait(); close(e.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-e.exited:
			t.Fatalf("the Pub/Sub emulator exited before serving:\n%s", e.log.String())
		default:
		}
		resp, err := http.Get("http://" + e.Host + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			e.Stop()
			t.Fatalf("the Pub/Sub emulator did not start within 60s:\n%s", e.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	shared = e
	return e
}

// StopAll stops the shared emulator; call it from TestMain.
func StopAll() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}

// Stop kills the emulator (its launcher's process group: the script
// starts java as a child).
func (e *Emulator) Stop() {
	if e.cmd != nil && e.cmd.Process != nil {
		e.cmd.Process.Kill()
		<-e.exited
	}
}

// ClientOptions connect a Google client to host without credentials, as
// PUBSUB_EMULATOR_HOST does.
func ClientOptions(host string) []option.ClientOption {
	return []option.ClientOption{option.WithEndpoint(host), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())), option.WithTelemetryDisabled()}
}

// Client returns the official Go client connected to host, closed when
// the test ends.
func Client(t testing.TB, host, project string) *pubsub.Client {
	t.Helper()
	c, err := pubsub.NewClient(context.Background(), project, ClientOptions(host)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
