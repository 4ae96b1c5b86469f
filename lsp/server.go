package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pyric/pyric/internal/config"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/verify"
)

// Options configure a Server.
type Options struct {
	// Debounce is how long diagnostics wait after a change for the next
	// one; 0 means DefaultDebounce, a negative value none.
	Debounce time.Duration
	// Log receives the server's own log lines (stderr for `pyric lsp`);
	// nil discards them.
	Log io.Writer
	// Sessions supplies the verdicts of the developer's sessions for the
	// lenses and live denials; nil finds them per workspace: a running
	// pyric serve's (LiveSessions), else the captured file (FileSessions),
	// both reading sessions with Registrations.
	Sessions SessionSource
	// Registrations are the services the session replay (pyric verify's,
	// for the flip lenses) replays with and that check what they recorded
	// in a session read, e.g. backend.Services; nil: no replay, so no
	// flip lenses.
	Registrations []service.Registration
}

// DefaultDebounce is the pause after a change before diagnostics run.
const DefaultDebounce = 150 * time.Millisecond

// Server is one language server connection's state.
type Server struct {
	opts Options
	log  *log.Logger

	mu     sync.Mutex
	docs   map[string]*openDoc
	roots  []string // workspace folder paths
	closed bool

	conn    *jsonrpc2.Conn
	exit    chan struct{}
	exitOne sync.Once
	workers sync.WaitGroup
	pubMu   sync.Mutex
}

// openDoc is a document with its diagnostics worker.
type openDoc struct {
	*document
	kind      Kind
	kick      chan struct{} // a change happened; capacity 1
	done      chan struct{} // closed when the document is
	published int           // the last version whose diagnostics were sent
	cached    *analysis     // the parse of the current version, when made
	// linted is the last lint, the base of an incremental re-diagnosis.
	linted *linted
	// The last replay of the session against the buffer: the version and
	// text replayed, and the requests whose verdict would flip.
	replayed   int
	replayText string
	flips      []verify.Divergence
}

// New returns a server.
func New(opts Options) *Server {
	if opts.Debounce == 0 {
		opts.Debounce = DefaultDebounce
	}
	out := opts.Log
	if out == nil {
		out = io.Discard
	}
	if opts.Sessions == nil {
		opts.Sessions = &LiveSessions{Registrations: opts.Registrations}
	}
	return &Server{opts: opts, log: log.New(out, "pyric lsp: ", log.LstdFlags), docs: map[string]*openDoc{}, exit: make(chan struct{})}
}

// Serve speaks the protocol on r and w until the client sends exit, the
// input ends or ctx is done.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	var closer io.Closer
	if c, ok := r.(io.Closer); ok {
		closer = c
	}
	// The connection reads (and so may publish) as soon as it exists:
	// publish takes pubMu, held until s.conn is set.
	s.pubMu.Lock()
	st := newStream(r, w, closer)
	s.conn = jsonrpc2.NewConn(ctx, st, jsonrpc2.HandlerWithError(s.handle),
		jsonrpc2.SetLogger(s.log))
	conn := s.conn
	s.pubMu.Unlock()
	stop := make(chan struct{})
	switch s.opts.Sessions.(type) {
	case FileSessions, *LiveSessions:
		s.workers.Add(1)
		go s.watchSessions(stop)
	}
	select {
	case <-ctx.Done():
	case <-conn.DisconnectNotify():
	case <-s.exit:
	}
	s.mu.Lock()
	s.closed = true
	for _, d := range s.docs {
		close(d.done)
	}
	s.docs = map[string]*openDoc{}
	s.mu.Unlock()
	close(stop)
	err := conn.Close()
	// The connection may have been closed by its read loop (end of
	// input), which is still flushing: wait for the queued messages.
	st.Close()
	s.workers.Wait()
	if err == jsonrpc2.ErrClosed {
		err = nil
	}
	return err
}

// errorf is a JSON-RPC error with a code.
func errorf(code int64, format string, args ...any) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func decode(req *jsonrpc2.Request, v any) error {
	if req.Params == nil {
		return errorf(jsonrpc2.CodeInvalidParams, "%s: missing params", req.Method)
	}
	if err := json.Unmarshal(*req.Params, v); err != nil {
		return errorf(jsonrpc2.CodeInvalidParams, "%s: %v", req.Method, err)
	}
	return nil
}

// handle dispatches one request or notification. It runs on the
// connection's read loop, so notifications are applied in order; a panic
// becomes an internal error instead of ending the server.
func (s *Server) handle(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Printf("panic in %s: %v\n%s", req.Method, p, debug.Stack())
			result, err = nil, errorf(jsonrpc2.CodeInternalError, "%s: internal error: %v", req.Method, p)
		}
	}()
	switch req.Method {
	case "initialize":
		var p InitializeParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		return s.initialize(p), nil
	case "initialized", "$/cancelRequest", "$/setTrace", "workspace/didChangeConfiguration", "textDocument/didSave":
		return nil, nil
	case "shutdown":
		return nil, nil
	case "exit":
		s.exitOne.Do(func() { close(s.exit) })
		return nil, nil
	case "workspace/didChangeWorkspaceFolders":
		var p DidChangeWorkspaceFoldersParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s.changeFolders(p)
		return nil, nil
	case "workspace/didChangeWatchedFiles":
		// firebase.json or a session changed (the VS Code extension
		// watches both): documents are re-detected and re-diagnosed.
		s.rescan(ctx)
		return nil, nil
	case "textDocument/didOpen":
		var p DidOpenTextDocumentParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s.open(p.TextDocument)
		return nil, nil
	case "textDocument/didChange":
		var p DidChangeTextDocumentParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		return nil, s.change(p)
	case "textDocument/didClose":
		var p DidCloseTextDocumentParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s.close(ctx, p.TextDocument.URI)
		return nil, nil
	}
	if h, ok := requests[req.Method]; ok {
		return h(s, req)
	}
	if req.Notif {
		return nil, nil // unknown notifications are ignored, as the protocol asks
	}
	return nil, errorf(jsonrpc2.CodeMethodNotFound, "method not supported: %s", req.Method)
}

// requests are the document requests, each taking the document's
// current analysis.
var requests = map[string]func(*Server, *jsonrpc2.Request) (any, error){
	"textDocument/hover":      positionRequest(hover),
	"textDocument/definition": positionRequest(definition),
	"textDocument/completion": func(s *Server, req *jsonrpc2.Request) (any, error) {
		var p TextDocumentPositionParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		a, off, err := s.at(p)
		if err != nil {
			return nil, err
		}
		return completion(a, off, s.sessionFor(a)), nil
	},
	"textDocument/codeAction": func(s *Server, req *jsonrpc2.Request) (any, error) {
		var p CodeActionParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		return s.codeActions(p)
	},
	"textDocument/prepareRename":  positionRequest(prepareRename),
	"textDocument/documentSymbol": documentRequest(documentSymbols),
	"textDocument/formatting":     documentRequest(formatting),
	"textDocument/codeLens":       documentRequest(codeLenses),
	"textDocument/inlayHint":      documentRequest(inlayHints),
	"textDocument/references": func(s *Server, req *jsonrpc2.Request) (any, error) {
		var p ReferenceParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		a, off, err := s.at(p.TextDocumentPositionParams)
		if err != nil {
			return nil, err
		}
		return references(a, off, p.Context.IncludeDeclaration), nil
	},
	"textDocument/rename": func(s *Server, req *jsonrpc2.Request) (any, error) {
		var p RenameParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		a, off, err := s.at(p.TextDocumentPositionParams)
		if err != nil {
			return nil, err
		}
		return rename(a, off, p.NewName)
	},
}

func positionRequest(f func(a *analysis, off int) any) func(*Server, *jsonrpc2.Request) (any, error) {
	return func(s *Server, req *jsonrpc2.Request) (any, error) {
		var p TextDocumentPositionParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		a, off, err := s.at(p)
		if err != nil {
			return nil, err
		}
		return f(a, off), nil
	}
}

func documentRequest(f func(s *Server, a *analysis) any) func(*Server, *jsonrpc2.Request) (any, error) {
	return func(s *Server, req *jsonrpc2.Request) (any, error) {
		var p DocumentParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		a, err := s.analysisOf(p.TextDocument.URI)
		if err != nil {
			return nil, err
		}
		return f(s, a), nil
	}
}

// at returns the analysis of a document and a position's byte offset.
func (s *Server) at(p TextDocumentPositionParams) (*analysis, int, error) {
	a, err := s.analysisOf(p.TextDocument.URI)
	if err != nil {
		return nil, 0, err
	}
	off, err := a.doc.offset(p.Position)
	if err != nil {
		return nil, 0, errorf(jsonrpc2.CodeInvalidParams, "%v", err)
	}
	return a, off, nil
}

// analysisOf returns the parse of a document's current version, made on
// first use.
func (s *Server) analysisOf(uri string) (*analysis, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	if !ok {
		return nil, errorf(jsonrpc2.CodeInvalidParams, "document not open: %s", uri)
	}
	if d.cached == nil || d.cached.doc.version != d.version || d.cached.doc.text != d.text {
		snap := *d.document
		d.cached = analyze(&snap, d.kind)
	}
	return d.cached, nil
}

func (s *Server) initialize(p InitializeParams) any {
	s.mu.Lock()
	for _, f := range p.WorkspaceFolders {
		s.roots = append(s.roots, uriPath(f.URI))
	}
	if len(s.roots) == 0 && p.RootURI != "" {
		s.roots = append(s.roots, uriPath(p.RootURI))
	}
	s.mu.Unlock()
	return map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": "utf-16",
			"textDocumentSync": map[string]any{
				"openClose": true,
				"change":    2, // incremental
				"save":      map[string]any{"includeText": false},
			},
			"hoverProvider":      true,
			"definitionProvider": true,
			"referencesProvider": true,
			"renameProvider":     map[string]any{"prepareProvider": true},
			"completionProvider": map[string]any{
				"triggerCharacters": []string{".", " ", "{", "$"},
			},
			"documentSymbolProvider":     true,
			"documentFormattingProvider": true,
			"codeLensProvider":           map[string]any{"resolveProvider": false},
			"inlayHintProvider":          true,
			"codeActionProvider":         map[string]any{"codeActionKinds": []string{"quickfix"}},
			"workspace": map[string]any{
				"workspaceFolders": map[string]any{"supported": true, "changeNotifications": true},
			},
		},
		"serverInfo": map[string]any{"name": "pyric lsp"},
	}
}

func (s *Server) changeFolders(p DidChangeWorkspaceFoldersParams) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range p.Event.Removed {
		dir := uriPath(f.URI)
		for i, r := range s.roots {
			if r == dir {
				s.roots = append(s.roots[:i], s.roots[i+1:]...)
				break
			}
		}
	}
	for _, f := range p.Event.Added {
		s.roots = append(s.roots, uriPath(f.URI))
	}
}

// configuredKind says which rules file the firebase.json of a workspace
// folder holding path names it as, if any. Each folder is its own project
// (a multi-root workspace may hold several); the folder nearest the file
// wins.
func (s *Server) configuredKind(path string) Kind {
	s.mu.Lock()
	roots := append([]string(nil), s.roots...)
	s.mu.Unlock()
	best, kind := -1, Unknown
	for _, root := range roots {
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == ".." || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator) {
			continue
		}
		if len(root) <= best {
			continue
		}
		p, err := config.Discover(root)
		if err != nil || p.Dir == "" {
			continue
		}
		best = len(root)
		kind = Unknown
		switch path {
		case p.FirestoreRules:
			kind = Firestore
		case p.StorageRules:
			kind = Storage
		case p.DatabaseRules:
			kind = Database
		}
	}
	return kind
}

func (s *Server) open(item TextDocumentItem) {
	path := uriPath(item.URI)
	kind := DetectKind(path, item.LanguageID, item.Text, s.configuredKind(path))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if old, ok := s.docs[item.URI]; ok {
		close(old.done)
	}
	d := &openDoc{
		document: newDocument(item.URI, item.LanguageID, item.Version, item.Text),
		kind:     kind,
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	s.docs[item.URI] = d
	if kind == Unknown {
		return
	}
	s.workers.Add(1)
	go s.diagnoseLoop(d)
	d.kick <- struct{}{}
}

func (s *Server) change(p DidChangeTextDocumentParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[p.TextDocument.URI]
	if !ok {
		return errorf(jsonrpc2.CodeInvalidParams, "didChange: document not open: %s", p.TextDocument.URI)
	}
	for _, c := range p.ContentChanges {
		if err := d.apply(c); err != nil {
			// The client's copy and ours differ from here on: ask for
			// the document again by reporting it.
			s.log.Printf("%s: %v", p.TextDocument.URI, err)
			return errorf(jsonrpc2.CodeInvalidParams, "didChange: %v", err)
		}
	}
	d.version = p.TextDocument.Version
	select {
	case d.kick <- struct{}{}:
	default:
	}
	return nil
}

func (s *Server) close(ctx context.Context, uri string) {
	s.mu.Lock()
	d, ok := s.docs[uri]
	if ok {
		delete(s.docs, uri)
		close(d.done)
	}
	s.mu.Unlock()
	if ok && d.kind != Unknown {
		s.publish(ctx, uri, nil, []Diagnostic{})
	}
}

// diagnoseLoop is an open document's diagnostics worker: after a change
// it waits for the debounce pause, lints the text of that moment and
// publishes the result unless the document changed meanwhile (the next
// round publishes then). One lint runs per document at a time, so fast
// typing never queues work.
func (s *Server) diagnoseLoop(d *openDoc) {
	defer s.workers.Done()
	defer func() {
		if p := recover(); p != nil {
			s.log.Printf("panic diagnosing %s: %v\n%s", d.uri, p, debug.Stack())
		}
	}()
	for {
		select {
		case <-d.done:
			return
		case <-d.kick:
		}
		if s.opts.Debounce > 0 {
			t := time.NewTimer(s.opts.Debounce)
		wait:
			for {
				select {
				case <-d.done:
					t.Stop()
					return
				case <-d.kick: // still typing: wait again
					t.Reset(s.opts.Debounce)
				case <-t.C:
					break wait
				}
			}
		}
		s.mu.Lock()
		snap := *d.document
		s.mu.Unlock()
		f := source.NewFile(uriPath(snap.uri), snap.text)
		s.mu.Lock()
		prev := d.linted
		s.mu.Unlock()
		l, ok := rediagnose(prev, f)
		if !ok {
			l = newLinted(d.kind, f)
		}
		s.mu.Lock()
		d.linted = l // written only by this worker; code actions read it
		s.mu.Unlock()
		diags := toProtocol(&snap, l.diags)
		diags = append(diags, s.liveDiagnostics(&snap, d.kind)...)
		s.mu.Lock()
		current := d.version == snap.version && d.text == snap.text
		open := s.docs[d.uri] == d
		s.mu.Unlock()
		if current && open {
			v := snap.version
			s.publish(context.Background(), snap.uri, &v, diags)
			s.replaySession(d, &snap)
		}
	}
}

func (s *Server) publish(ctx context.Context, uri string, version *int, diags []Diagnostic) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if err := s.conn.Notify(ctx, "textDocument/publishDiagnostics", PublishDiagnosticsParams{URI: uri, Version: version, Diagnostics: diags}); err != nil && err != jsonrpc2.ErrClosed {
		s.log.Printf("publish diagnostics: %v", err)
	}
}

// rescan re-detects each open document's language (firebase.json may name
// other files now) and re-diagnoses every document: one whose language
// changed is opened anew, the others are kicked.
func (s *Server) rescan(ctx context.Context) {
	s.mu.Lock()
	docs := make([]*openDoc, 0, len(s.docs))
	for _, d := range s.docs {
		docs = append(docs, d)
	}
	s.mu.Unlock()
	for _, d := range docs {
		s.mu.Lock()
		item := TextDocumentItem{URI: d.uri, LanguageID: d.languageID, Version: d.version, Text: d.text}
		s.mu.Unlock()
		path := uriPath(item.URI)
		if kind := DetectKind(path, item.LanguageID, item.Text, s.configuredKind(path)); kind != d.kind {
			s.open(item)
			if kind == Unknown {
				s.publish(ctx, item.URI, nil, []Diagnostic{})
			}
			continue
		}
		select {
		case d.kick <- struct{}{}:
		default:
		}
	}
}
