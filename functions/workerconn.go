package functions

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// workerClient sends invocations to one worker over its unix socket:
// HTTP/1.1 on connections it keeps open, the request written and its
// response read by the calling goroutine. (net/http's Transport hands
// each request to a writer goroutine and each response from a reader
// goroutine, and waits for the reader again at the body's end: wakeups
// that cost more than the rest of pyric's part of a callable.)
type workerClient struct {
	sock string

	mu     sync.Mutex
	idle   []*workerConn
	closed bool
}

type workerConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// maxIdleWorkerConns bounds the connections kept open to one worker.
const maxIdleWorkerConns = 64

// errWorkerClientClosed is a request to a worker whose process ended.
var errWorkerClientClosed = errors.New("the functions worker's connection is closed")

// longAgo is a deadline in the past: it interrupts a blocked read or
// write at once.
var longAgo = time.Unix(1, 0)

func (wc *workerClient) get(ctx context.Context) (*workerConn, error) {
	wc.mu.Lock()
	if wc.closed {
		wc.mu.Unlock()
		return nil, errWorkerClientClosed
	}
	if n := len(wc.idle); n > 0 {
		c := wc.idle[n-1]
		wc.idle = wc.idle[:n-1]
		wc.mu.Unlock()
		return c, nil
	}
	wc.mu.Unlock()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", wc.sock)
	if err != nil {
		return nil, err
	}
	return &workerConn{c: c, br: bufio.NewReaderSize(c, 32<<10), bw: bufio.NewWriterSize(c, 32<<10)}, nil
}

func (wc *workerClient) put(c *workerConn) {
	wc.mu.Lock()
	if !wc.closed && len(wc.idle) < maxIdleWorkerConns {
		wc.idle = append(wc.idle, c)
		c = nil
	}
	wc.mu.Unlock()
	if c != nil {
		c.c.Close()
	}
}

// close closes the idle connections and refuses new requests.
func (wc *workerClient) close() {
	wc.mu.Lock()
	idle := wc.idle
	wc.idle, wc.closed = nil, true
	wc.mu.Unlock()
	for _, c := range idle {
		c.c.Close()
	}
}

// Do sends req (its context bounds the whole exchange, the body's
// reading included) and returns the response; the caller closes its
// body. A body of unknown or large size is written while the response is
// read, so a function that answers before reading it all (a 413) does not
// block the write.
func (wc *workerClient) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	conn, err := wc.get(ctx)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.c.SetDeadline(longAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	// The body is sent whole: a client's Expect: 100-continue was
	// answered by pyric's server already.
	req.Header.Del("Expect")
	streamed := req.Body != nil && req.Body != http.NoBody && (req.ContentLength < 0 || req.ContentLength > inlineBody)
	write := func() error {
		if err := req.Write(conn.bw); err != nil {
			return err
		}
		return conn.bw.Flush()
	}
	var written chan error
	if streamed {
		written = make(chan error, 1)
		go func() { written <- write() }()
	} else if err := write(); err != nil {
		return fail(err)
	}
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(conn.br, req)
		if err != nil {
			if written != nil {
				conn.c.Close()
				<-written
			}
			return fail(err)
		}
		// Informational answers (103 Early Hints) precede the response.
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		break
	}
	resp.Body = &workerBody{rc: resp.Body, wc: wc, conn: conn, stop: stop, written: written, reuse: !resp.Close}
	return resp, nil
}

// workerBody is a response body: at its end the connection goes back to
// the idle ones, unless the exchange left it unusable.
type workerBody struct {
	rc      io.ReadCloser
	wc      *workerClient
	conn    *workerConn
	stop    func() bool
	written chan error // the streamed request body's write, nil when written before
	reuse   bool
	done    bool
}

func (b *workerBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		b.finish(false)
	}
	return n, err
}

func (b *workerBody) Close() error {
	if !b.done {
		b.finish(false)
	}
	return nil
}

// finish releases the connection once: to the idle ones when the body
// was read to its end, the request written whole, and the context never
// interrupted it.
func (b *workerBody) finish(atEOF bool) {
	b.done = true
	reuse := atEOF && b.reuse && b.stop()
	if b.written != nil {
		if !reuse {
			b.conn.c.Close()
		}
		if err := <-b.written; err != nil {
			reuse = false
		}
	}
	if reuse {
		b.wc.put(b.conn)
		return
	}
	b.stop()
	b.conn.c.Close()
}
