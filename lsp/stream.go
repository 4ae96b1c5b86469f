package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxMessageBytes bounds one message's body: a 1 MB rules file sent whole
// fits many times over, and a hostile Content-Length can't make the server
// allocate gigabytes.
const MaxMessageBytes = 64 << 20

// maxHeaderBytes bounds the header block of one message.
const maxHeaderBytes = 8 << 10

// JSON-RPC error codes the stream answers with itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

var errNoLength = errors.New("lsp: message without a Content-Length header")

// stream is the base protocol's framing (Content-Length headers, then a
// JSON body) as a jsonrpc2.ObjectStream. Unlike jsonrpc2's own
// VSCodeObjectCodec it reads each body whole before decoding, so a body
// that is not JSON, or not a JSON-RPC message, is answered with a JSON-RPC
// error and the next message is read normally; only a header that can't
// be framed (there is no way to find the next message after it) ends the
// connection.
type stream struct {
	r *bufio.Reader
	c io.Closer

	// Writes go through a queue drained by one goroutine, so the read
	// loop never waits on the client reading what the server sends
	// (a client whose own read loop is busy writing to us would
	// otherwise deadlock both). The queue holds at most maxQueued
	// messages; past that writers wait.
	out       chan []byte
	stop      chan struct{} // closed by Close
	drained   chan struct{} // closed when the writer is done
	writeErr  atomic.Pointer[error]
	closeOnce sync.Once
}

const maxQueued = 4096

// drainTimeout bounds how long Close waits for queued messages to reach
// a client that stopped reading.
const drainTimeout = 5 * time.Second

func newStream(r io.Reader, w io.Writer, c io.Closer) *stream {
	s := &stream{r: bufio.NewReader(r), c: c, out: make(chan []byte, maxQueued), stop: make(chan struct{}), drained: make(chan struct{})}
	go s.writeLoop(w)
	return s
}

func (s *stream) writeLoop(w io.Writer) {
	defer close(s.drained)
	write := func(b []byte) {
		if s.writeErr.Load() != nil {
			return // the client is gone: drop
		}
		if _, err := w.Write(b); err != nil {
			s.writeErr.Store(&err)
		}
	}
	for {
		select {
		case b := <-s.out:
			write(b)
		case <-s.stop:
			for {
				select {
				case b := <-s.out:
					write(b)
				default:
					return
				}
			}
		}
	}
}

// readFrame reads one message body. A body over MaxMessageBytes is skipped
// and reported as errTooLarge (the stream stays usable).
func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	read := 0
	for {
		line, err := r.ReadString('\n')
		read += len(line)
		if err != nil {
			if err == io.EOF && read > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if read > maxHeaderBytes {
			return nil, fmt.Errorf("lsp: message header over %d bytes", maxHeaderBytes)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length < 0 {
				if read <= 2 {
					continue // a stray blank line between messages
				}
				return nil, errNoLength
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("lsp: malformed header line %q", clip(line))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("lsp: bad Content-Length %q", clip(value))
			}
			length = int(min(n, 1<<62))
		}
	}
	if length > MaxMessageBytes {
		if _, err := io.CopyN(io.Discard, r, int64(length)); err != nil {
			return nil, err
		}
		return nil, errTooLarge{length}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

type errTooLarge struct{ n int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("message of %d bytes is over the server's limit of %d", e.n, MaxMessageBytes)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// ReadObject implements jsonrpc2.ObjectStream.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := readFrame(s.r)
		var big errTooLarge
		if errors.As(err, &big) {
			s.writeError(codeInvalidRequest, big.Error())
			continue
		}
		if err != nil {
			return err
		}
		if !json.Valid(body) {
			s.writeError(codeParseError, "the message body is not JSON")
			continue
		}
		if err := json.Unmarshal(body, v); err != nil {
			s.writeError(codeInvalidRequest, "not a JSON-RPC 2.0 request, notification or response: "+err.Error())
			continue
		}
		return nil
	}
}

// writeError answers a message that could not be read (its id unknown, so
// null, as JSON-RPC 2.0 prescribes).
func (s *stream) writeError(code int, msg string) {
	_ = s.WriteObject(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
}

// WriteObject implements jsonrpc2.ObjectStream: it frames the message
// and queues it for the writer.
func (s *stream) WriteObject(obj any) error {
	if err := s.writeErr.Load(); err != nil {
		return *err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	msg := make([]byte, 0, len(data)+32)
	msg = fmt.Appendf(msg, "Content-Length: %d\r\n\r\n", len(data))
	msg = append(msg, data...)
	select {
	case <-s.stop:
		return io.ErrClosedPipe
	default:
	}
	select {
	case s.out <- msg:
		return nil
	case <-s.stop:
		return io.ErrClosedPipe
	}
}

// Close implements jsonrpc2.ObjectStream: queued messages are written
// (for at most drainTimeout) and the input is closed.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		select {
		case <-s.drained:
		case <-time.After(drainTimeout):
		}
	})
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}
