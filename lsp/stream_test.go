package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/pyric/pyric/internal/await"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

func frame(body string) string {
	return "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// FuzzReadFrame feeds arbitrary bytes to the message decoder: it must
// return a body, an error or io.EOF — never panic, never read a body over
// MaxMessageBytes into memory.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n{}"))
	f.Add([]byte("Content-Length: -1\r\n\r\n"))
	f.Add([]byte("Content-Type: x\r\n\r\n"))
	f.Add([]byte("\r\n" + frame("{}") + frame("not json")))
	f.Add([]byte("Content-Length: 5\n\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for i := 0; i < 100; i++ {
			body, err := readFrame(r)
			if err != nil {
				return
			}
			if len(body) > MaxMessageBytes {
				t.Fatalf("body of %d bytes", len(body))
			}
		}
	})
}

// TestMalformedMessages sends bodies that are not JSON, not JSON-RPC, an
// unknown method and bad params: each gets a JSON-RPC error and the
// server keeps answering.
func TestMalformedMessages(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		frame(`{not json`),
		frame(`[1,2,3]`),
		frame(`{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}`),
		frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":5}}`),
		frame(`{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///nope"},"position":{"line":0,"character":0}}}`),
		frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a/firestore.rules","languageId":"","version":1,"text":"service cloud.firestore {"}}}`),
		frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a/firestore.rules"},"position":{"line":-3,"character":0}}}`),
		frame(`{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a/firestore.rules"},"position":{"line":99,"character":99}}}`),
		frame(`{"jsonrpc":"2.0","id":7,"method":"shutdown"}`),
	}, "")
	pr, pw := io.Pipe()
	var out lockedBuffer
	go func() {
		pw.Write([]byte(in))
		// Exit once the opened file's diagnostics and the answer to
		// shutdown went out: an earlier exit ends the server before them.
		await.Poll(10*time.Second, func() bool {
			s := out.String()
			return strings.Contains(s, "textDocument/publishDiagnostics") && strings.Contains(s, `"id":7`)
		})
		pw.Write([]byte(frame(`{"jsonrpc":"2.0","method":"exit"}`)))
	}()
	s := New(Options{Debounce: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Serve(ctx, pr, &out); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(strings.NewReader(out.String()))
	byID := map[string]map[string]any{}
	var nullErrors []float64
	for {
		body, err := readFrame(r)
		if err != nil {
			break
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("server wrote %q", body)
		}
		if m["method"] != nil {
			continue
		}
		id, _ := json.Marshal(m["id"])
		if string(id) == "null" {
			nullErrors = append(nullErrors, m["error"].(map[string]any)["code"].(float64))
			continue
		}
		byID[string(id)] = m
	}
	if len(nullErrors) != 2 || nullErrors[0] != codeParseError || nullErrors[1] != codeInvalidRequest {
		t.Errorf("errors for unreadable messages: %v", nullErrors)
	}
	wantErr := map[string]float64{"2": -32601, "3": -32602, "4": -32602, "5": -32602}
	for id, code := range wantErr {
		e, _ := byID[id]["error"].(map[string]any)
		if e == nil || e["code"].(float64) != code {
			t.Errorf("id %s: want error %v, got %v", id, code, byID[id])
		}
	}
	for _, id := range []string{"1", "6", "7"} {
		if m, ok := byID[id]; !ok || m["error"] != nil {
			t.Errorf("id %s: want a result, got %v", id, m)
		}
	}
}

// FuzzServe runs a whole server on arbitrary input (seeded with a real
// session's messages): whatever arrives, Serve returns when the input
// ends, without a panic.
func FuzzServe(f *testing.F) {
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`) +
		frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a/firestore.rules","languageId":"","version":1,"text":"service cloud.firestore { match /a/{b} { allow read: if b.size() > 1; } }"}}}`) +
		frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a/firestore.rules","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":40},"end":{"line":0,"character":44}},"text":"x"}]}}`) +
		frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a/firestore.rules"},"position":{"line":0,"character":45}}}`) +
		frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///a/firestore.rules"},"position":{"line":0,"character":50}}}`) +
		frame(`{"jsonrpc":"2.0","id":4,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///a/firestore.rules"}}}`)))
	f.Add([]byte(frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a/database.rules.json","languageId":"json","version":1,"text":"{\"rules\": {\".read\": \"auth != null\"}}"}}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(Options{Debounce: -1, Sessions: noSessions{}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done := make(chan struct{})
		go func() {
			s.Serve(ctx, bytes.NewReader(data), io.Discard)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
			t.Fatalf("Serve did not return on %q", data)
		}
	})
}

type noSessions struct{}

func (noSessions) Session(string) *Session { return nil }

// lockedBuffer is a bytes.Buffer the server writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
