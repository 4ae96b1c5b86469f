package lsp_test

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/lsp"
)

// client is a test's end of a connection to an in-process server.
type client struct {
	t    testing.TB
	conn *jsonrpc2.Conn

	mu    sync.Mutex
	diags map[string][]lsp.PublishDiagnosticsParams
	cond  *sync.Cond
}

type pipe struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipe) Close() error {
	for _, c := range p.closers {
		c.Close()
	}
	return nil
}

// start runs a server on pipes and returns an initialized client.
func start(t testing.TB, opts lsp.Options, root string) *client {
	t.Helper()
	if opts.Registrations == nil {
		// The services the session replay uses, as pyric lsp passes them.
		opts.Registrations = backend.Services(&backend.Options{})
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	srv := lsp.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, sr, sw) }()
	c := &client{t: t, diags: map[string][]lsp.PublishDiagnosticsParams{}}
	c.cond = sync.NewCond(&c.mu)
	c.conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(pipe{Reader: cr, Writer: cw, closers: []io.Closer{cr, cw}}, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			if req.Method == "textDocument/publishDiagnostics" {
				var p lsp.PublishDiagnosticsParams
				if err := json.Unmarshal(*req.Params, &p); err != nil {
					t.Errorf("publishDiagnostics: %v", err)
				}
				c.mu.Lock()
				c.diags[p.URI] = append(c.diags[p.URI], p)
				c.cond.Broadcast()
				c.mu.Unlock()
			}
			return nil, nil
		}))
	t.Cleanup(func() {
		c.conn.Notify(context.Background(), "exit", nil)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the server did not stop after exit")
		}
		cancel()
		c.conn.Close()
	})
	init := map[string]any{"processId": nil, "capabilities": map[string]any{}}
	if root != "" {
		init["workspaceFolders"] = []lsp.WorkspaceFolder{{URI: fileURI(root), Name: "root"}}
	}
	var res struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	c.call("initialize", init, &res)
	if res.Capabilities["hoverProvider"] != true {
		t.Fatalf("capabilities: %v", res.Capabilities)
	}
	c.notify("initialized", map[string]any{})
	return c
}

func (c *client) call(method string, params, result any) {
	c.t.Helper()
	if err := c.callErr(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) callErr(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// waitDiags waits for the diagnostics of a version of a document.
func (c *client) waitDiags(uri string, version int) []lsp.Diagnostic {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	timer := time.AfterFunc(30*time.Second, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for _, p := range c.diags[uri] {
			if p.Version != nil && *p.Version == version {
				return p.Diagnostics
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no diagnostics for %s version %d (got %d publishes)", uri, version, len(c.diags[uri]))
		}
		c.cond.Wait()
	}
}

func (c *client) open(uri, languageID, text string) {
	c.t.Helper()
	c.notify("textDocument/didOpen", lsp.DidOpenTextDocumentParams{TextDocument: lsp.TextDocumentItem{URI: uri, LanguageID: languageID, Version: 1, Text: text}})
}

func fileURI(p string) string { return "file://" + p }
