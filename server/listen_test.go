package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// startPort serves a health service over gRPC and a "hello" handler over
// HTTP/1.1 on one port.
func startPort(t testing.TB) (*Port, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	healthpb.RegisterHealthServer(g, health.NewServer())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s", r.Proto, r.URL.Path)
	})
	p := NewPort(l, g, h)
	done := make(chan error, 1)
	go func() { done <- p.Serve() }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, l.Addr().String()
}

func TestPortServesBothProtocols(t *testing.T) {
	t.Parallel()
	_, addr := startPort(t)

	resp, err := http.Get("http://" + addr + "/v1/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello HTTP/1.1 /v1/x" {
		t.Errorf("HTTP/1.1 body = %q", body)
	}

	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health = %v, %v", r, err)
	}
}

// A request that trickles in byte by byte, and one shorter than the HTTP/2
// preface, must still be recognized as HTTP/1.
func TestPortSniffsShortAndSlowRequests(t *testing.T) {
	t.Parallel()
	_, addr := startPort(t)
	for _, tc := range []struct {
		name  string
		req   string
		delay time.Duration
	}{
		{"http/1.0 shorter than the preface", "GET / HTTP/1.0\r\n\r\n", 0},
		{"byte by byte", "PUT /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := range len(tc.req) {
				if _, err := c.Write([]byte{tc.req[i]}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(tc.delay) // a slow client, byte by byte: what the case tests
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			status, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || !strings.Contains(status, " 200 ") {
				t.Errorf("status line %q, %v", status, err)
			}
		})
	}
}

// A connection that never sends anything must not keep Close waiting, and
// a port that is closed refuses new connections.
func TestPortCloseWithIdleConnection(t *testing.T) {
	t.Parallel()
	p, addr := startPort(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Wait until the port holds the connection (accepted, protocol not yet
	// known), so Shutdown really has an idle connection to deal with.
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		held := len(p.sniffing)
		p.mu.Unlock()
		if held == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the port never accepted the connection")
		}
		runtime.Gosched()
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("idle connection still open after Shutdown")
	}
	if _, err := http.Get("http://" + addr + "/"); err == nil {
		t.Errorf("port still accepts after Shutdown")
	}
}

// BenchmarkPort compares the preface-sniffing Port (native grpc.Server) with
// the alternative: net/http serving unencrypted HTTP/2 and handing gRPC
// requests to grpc.Server.ServeHTTP. Run with -bench Port -cpu 1,4.
func BenchmarkPort(b *testing.B) {
	check := func(b *testing.B, addr string) {
		conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		hc := healthpb.NewHealthClient(conn)
		ctx := context.Background()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("sniff+grpc.Serve", func(b *testing.B) {
		_, addr := startPort(b)
		check(b, addr)
	})
	b.Run("h2c+grpc.ServeHTTP", func(b *testing.B) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		g := grpc.NewServer()
		healthpb.RegisterHealthServer(g, health.NewServer())
		var protos http.Protocols
		protos.SetHTTP1(true)
		protos.SetUnencryptedHTTP2(true)
		hs := &http.Server{Protocols: &protos, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
				g.ServeHTTP(w, r)
				return
			}
			http.NotFound(w, r)
		})}
		go hs.Serve(l)
		defer hs.Close()
		check(b, l.Addr().String())
	})
}

// FuzzPort writes arbitrary bytes to the port, then checks it still serves
// both protocols: no input may take the listener down.
func FuzzPort(f *testing.F) {
	for _, seed := range []string{
		"", "P", "PRI", "PRI * HTTP/2.0\r\n", http2Preface, http2Preface + "garbage",
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", "PRX * HTTP/1.1\r\n\r\n", "\x00\x01\x02", "PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nab",
	} {
		f.Add([]byte(seed))
	}
	_, addr := startPort(f)
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		f.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(data)
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		c.Read(make([]byte, 1024))
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("gRPC after %q: %v", data, err)
		}
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("HTTP after %q: %v", data, err)
		}
		resp.Body.Close()
	})
}

func ExampleNewPort() {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	g := grpc.NewServer()
	healthpb.RegisterHealthServer(g, health.NewServer())
	p := NewPort(l, g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "Ok") }))
	go p.Serve()
	defer p.Close()

	resp, _ := http.Get("http://" + l.Addr().String() + "/")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conn, _ := grpc.NewClient("passthrough:///"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	st, _ := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(string(body), st.GetStatus())
	// Output: Ok SERVING
}
