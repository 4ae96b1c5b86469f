// Package server holds what Pyric's wire adapters share: the one-port
// listener that serves gRPC (HTTP/2) and HTTP/1.1 on the same port, as the
// official Firestore emulator does, the origin and host policy every port
// applies (Policy, Guard), and the gate every port's heavy requests (bodies
// past HeavyBodyBytes) pass: the bytes of the bodies being read are bounded
// (BodyBudget), their work takes one fewer processor than the process has
// and runs below light requests' priority (Guard for HTTP, AdmitMessage for
// gRPC). The adapters themselves live in the subpackages (server/firestore,
// server/auth).
package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
)

// http2Preface is what every HTTP/2 connection with prior knowledge starts
// with (RFC 9113 §3.4). gRPC clients (grpc-go, grpc-js) always send it on
// an insecure channel; no HTTP/1.x request can start with it.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// sniffTimeout bounds how long a new connection may take to send the bytes
// that decide its protocol.
const sniffTimeout = 10 * time.Second

// Port serves one TCP listener: connections that open with the HTTP/2
// preface go to a native grpc.Server, every other connection to an
// http.Server (HTTP/1.1: REST, WebChannel, the emulator endpoints). This is
// the official emulator's routing by HTTP version (its
// HttpVersionRoutingHandler).
//
// Sniffing the preface and handing the connection to grpc.Server.Serve is
// chosen over h2c plus grpc.Server.ServeHTTP because the latter runs gRPC
// on net/http's HTTP/2 server, which grpc-go documents as slower and
// lacking some features; BenchmarkPort in listen_test.go measures both.
type Port struct {
	l    net.Listener
	grpc *grpc.Server
	http *http.Server

	grpcL *connQueue
	httpL *connQueue

	policy atomic.Pointer[Policy] // the origin and host policy; nil: loopback only

	mu       sync.Mutex
	closed   bool
	sniffing map[net.Conn]struct{} // connections whose protocol is not known yet
	serveErr chan error
}

// NewPort prepares a Port on l; g and h may be nil (connections for a
// missing side are answered by nothing and closed). Call Serve to start.
// h is served behind the origin and host policy (Guard): loopback origins
// only until SetPolicy says more.
func NewPort(l net.Listener, g *grpc.Server, h http.Handler) *Port {
	p := &Port{l: l, grpc: g, grpcL: newConnQueue(l.Addr()), httpL: newConnQueue(l.Addr()),
		sniffing: map[net.Conn]struct{}{}, serveErr: make(chan error, 3)}
	if h != nil {
		p.http = &http.Server{Handler: Guard(h, &p.policy), ReadHeaderTimeout: 30 * time.Second}
	}
	return p
}

// SetPolicy sets the origin and host policy of the port's HTTP side (gRPC
// connections come from no browser: HTTP/2 with prior knowledge is not
// something a web page can open).
func (p *Port) SetPolicy(pol *Policy) { p.policy.Store(pol) }

// Addr is the listener's address.
func (p *Port) Addr() net.Addr { return p.l.Addr() }

// Serve accepts connections until Shutdown or Close and returns nil then,
// or the first error of the accept loop.
func (p *Port) Serve() error {
	if p.grpc != nil {
		go func() { p.serveErr <- ignoreClosed(p.grpc.Serve(p.grpcL)) }()
	}
	if p.http != nil {
		go func() { p.serveErr <- ignoreClosed(p.http.Serve(p.httpL)) }()
	}
	var delay time.Duration
	for {
		c, err := p.l.Accept()
		if err != nil {
			if p.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Temporary failure (e.g. EMFILE): back off as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return nil
		}
		p.sniffing[c] = struct{}{}
		p.mu.Unlock()
		go p.route(c)
	}
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) || errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

func (p *Port) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// route reads just enough of the connection to tell HTTP/2 from HTTP/1.x
// (one byte usually suffices: only "PRI" starts with 'P','R') and queues it
// for the right server, replaying what was read.
func (p *Port) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	// The bytes are read into the conn that will replay them: a buffer of
	// route's own would escape to the heap too (Read is an interface's).
	pc := &prefixConn{Conn: c}
	buf := &pc.buf
	n := 0
	h2 := false
	for {
		m, err := c.Read(buf[n:])
		n += m
		if n > 0 && !bytes.HasPrefix([]byte(http2Preface), buf[:n]) {
			break
		}
		if n == len(buf) {
			h2 = true
			break
		}
		if err != nil {
			if n == 0 {
				p.mu.Lock()
				delete(p.sniffing, c)
				p.mu.Unlock()
				c.Close()
				return
			}
			break // let the HTTP server answer the partial request
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	p.mu.Lock()
	_, live := p.sniffing[c]
	delete(p.sniffing, c)
	p.mu.Unlock()
	if !live { // closed by Shutdown or Close
		return
	}
	pc.prefix = buf[:n]
	q := p.httpL
	if h2 {
		q = p.grpcL
	}
	if (h2 && p.grpc == nil) || (!h2 && p.http == nil) || !q.put(pc) {
		c.Close()
	}
}

// Shutdown stops accepting connections and waits, until ctx ends, for
// in-flight requests to finish (gRPC GracefulStop, http.Server.Shutdown);
// then it closes whatever is left. Long-lived streams (Listen, Write,
// WebChannel) should be ended by their adapters before Shutdown, or they
// hold it until ctx ends.
func (p *Port) Shutdown(ctx context.Context) error {
	if !p.markClosed() {
		return nil
	}
	p.l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		if p.grpc != nil {
			wg.Go(p.grpc.GracefulStop)
		}
		if p.http != nil {
			wg.Go(func() { _ = p.http.Shutdown(ctx) })
		}
		wg.Wait()
	}()
	select {
	case <-done:
		p.grpcL.Close()
		p.httpL.Close()
		return nil
	case <-ctx.Done():
		p.stop()
		<-done
		return ctx.Err()
	}
}

// Close stops everything at once, dropping in-flight requests.
func (p *Port) Close() error {
	if !p.markClosed() {
		return nil
	}
	p.l.Close()
	p.stop()
	return nil
}

func (p *Port) stop() {
	if p.grpc != nil {
		p.grpc.Stop()
	}
	if p.http != nil {
		p.http.Close()
	}
	p.grpcL.Close()
	p.httpL.Close()
}

// markClosed flags the port closed (false if it already was) and drops
// the connections still being sniffed.
func (p *Port) markClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.closed = true
	for c := range p.sniffing {
		c.Close()
	}
	clear(p.sniffing)
	return true
}

// prefixConn replays the sniffed bytes before reading from the connection.
// They are kept in the conn itself (buf), so a connection costs the port
// one allocation for them and the conn, not three.
type prefixConn struct {
	net.Conn
	prefix []byte // what is left to replay, of buf
	buf    [len(http2Preface)]byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// connQueue is a net.Listener fed with already accepted connections.
type connQueue struct {
	addr  net.Addr
	ch    chan net.Conn
	done  chan struct{}
	close sync.Once
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

// put hands c to the server's Accept; false when the queue is closed.
func (q *connQueue) put(c net.Conn) bool {
	select {
	case q.ch <- c:
		return true
	case <-q.done:
		return false
	}
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error {
	q.close.Do(func() { close(q.done) })
	return nil
}

func (q *connQueue) Addr() net.Addr { return q.addr }
