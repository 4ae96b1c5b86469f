package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/config"
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/verify"
)

// Session is what the developer's own session shows about rules: its
// decided requests.
type Session struct {
	// Source names where the session came from, for the lens titles.
	Source   string
	Requests []event.Event
	// Fixture is the whole session, for replaying it against the buffer
	// (nil when the source has none).
	Fixture *capture.Fixture
}

// SessionSource finds the session relevant to a rules file, or nil. It
// must not block: the server calls it while answering the editor.
type SessionSource interface {
	Session(rulesPath string) *Session
}

// FileSessions reads the session `pyric serve` captures: the project's
// .pyric/last-session.json (the project is firebase.json's directory,
// else the file's). A running `pyric serve` rewrites that file shortly
// after each request, so reading it shows live traffic without ever
// waiting on the server; a fixture kept there works the same way. Files
// are re-read only when their modification time changes.
type FileSessions struct {
	// Registrations are the services that check what they recorded in
	// a session read (capture.DecodeWith).
	Registrations []service.Registration
}

var sessionCache struct {
	sync.Mutex
	byPath map[string]cachedSession
}

type cachedSession struct {
	mod  time.Time
	size int64
	s    *Session
}

// maxSessionBytes bounds the fixture read for lenses.
const maxSessionBytes = 256 << 20

// Session implements SessionSource.
func (fs FileSessions) Session(rulesPath string) *Session {
	dir := filepath.Dir(rulesPath)
	if p, err := config.Discover(dir); err == nil && p.Dir != "" {
		dir = p.Dir
	}
	return loadSession(filepath.Join(dir, ".pyric", "last-session.json"), fs.Registrations)
}

func loadSession(path string, regs []service.Registration) *Session {
	st, err := os.Stat(path)
	if err != nil || st.Size() > maxSessionBytes {
		return nil
	}
	sessionCache.Lock()
	defer sessionCache.Unlock()
	if c, ok := sessionCache.byPath[path]; ok && c.mod.Equal(st.ModTime()) && c.size == st.Size() {
		return c.s
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	fx, err := capture.DecodeWith(b, regs)
	if err != nil {
		return nil
	}
	s := &Session{Source: path, Fixture: fx}
	for _, e := range fx.Events {
		if e.Kind == event.KindRequest && e.Request != nil {
			s.Requests = append(s.Requests, e)
		}
	}
	if sessionCache.byPath == nil {
		sessionCache.byPath = map[string]cachedSession{}
	}
	sessionCache.byPath[path] = cachedSession{mod: st.ModTime(), size: st.Size(), s: s}
	return s
}

// eventService is the events' service name of a kind.
func eventService(k Kind) string {
	switch k {
	case Firestore:
		return "firestore"
	case Storage:
		return "storage"
	case Database:
		return "database"
	}
	return ""
}

// allowTally is what a session's requests did at one allow.
type allowTally struct {
	allow           *ast.Allow
	match           *matchInfo
	allowed, denied int
	denials         []event.Event
}

// tally attributes each decided request of the session to the allow that
// decided it: by its block's pattern and index (robust to edits above
// it), else by the line and column recorded.
func (a *analysis) tally(s *Session) []*allowTally {
	if s == nil || a.rs == nil {
		return nil
	}
	var out []*allowTally
	byKey := map[string]*allowTally{}
	byPos := map[[2]int]*allowTally{}
	for _, m := range a.matches {
		for i, al := range m.m.Allows {
			t := &allowTally{allow: al, match: m}
			out = append(out, t)
			byKey[fmt.Sprintf("%s#%d", m.full, i)] = t
			byPos[[2]int{al.Span.Start.Line, al.Span.Start.Column}] = t
		}
	}
	svc := eventService(a.kind)
	for _, e := range s.Requests {
		if e.Service != svc || e.Request.Rule == nil {
			continue
		}
		r := e.Request.Rule
		t := byKey[fmt.Sprintf("%s#%d", r.MatchPath, r.Index)]
		if t == nil {
			t = byPos[[2]int{r.Line, r.Column}]
		}
		if t == nil {
			continue
		}
		switch e.Request.Verdict {
		case event.Allow:
			t.allowed++
		case event.Deny:
			t.denied++
			t.denials = append(t.denials, e)
		}
	}
	return out
}

func (s *Server) sessionFor(a *analysis) *Session {
	if a.rs == nil {
		return nil
	}
	return s.opts.Sessions.Session(a.file.Name)
}

// codeLenses answers textDocument/codeLens: on each allow, how many of
// the session's requests it allowed and denied, and on each allow whose
// captured verdicts the buffer would change, the requests that would
// flip (from the last background replay of this version, see
// replaySession).
func codeLenses(s *Server, a *analysis) any {
	out := []CodeLens{}
	sess := s.sessionFor(a)
	tallies := a.tally(sess)
	for _, t := range tallies {
		title := fmt.Sprintf("session: %d allowed, %d denied", t.allowed, t.denied)
		out = append(out, CodeLens{Range: a.doc.rangeOf(t.allow.Span), Command: &Command{Title: title, Command: ""}})
	}
	s.mu.Lock()
	var flips []verify.Divergence
	if d, ok := s.docs[a.doc.uri]; ok && d.replayed == a.doc.version && d.replayText == a.doc.text {
		flips = d.flips
	}
	s.mu.Unlock()
	if len(flips) == 0 || sess == nil {
		return out
	}
	byID := map[string]event.Event{}
	for _, e := range sess.Requests {
		byID[e.ID] = e
	}
	for _, f := range flips {
		r := Range{}
		if e, ok := byID[f.EventID]; ok && e.Request.Rule != nil {
			for _, t := range tallies {
				if t.match.full == e.Request.Rule.MatchPath && indexOf(t.match.m.Allows, t.allow) == e.Request.Rule.Index {
					r = a.doc.rangeOf(t.allow.Span)
				}
			}
		}
		who := "unauthenticated"
		if f.UID != "" {
			who = "uid " + f.UID
		}
		title := fmt.Sprintf("would change: %s %s (%s) %s", f.Method, f.Path, who, f.Kind)
		if f.Explanation != "" {
			title += " — " + source.ClipText(oneLine(f.Explanation), 160)
		}
		out = append(out, CodeLens{Range: r, Command: &Command{Title: title, Command: ""}})
	}
	return out
}

func indexOf[T comparable](xs []T, x T) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// maxReplayEvents bounds the sessions replayed against every buffer
// version: a longer one is replayed only by pyric verify.
const maxReplayEvents = 5000

// replaySession replays the session against the buffer (pyric verify's
// replay, verify.Run, with the buffer as the candidate rules) and keeps
// the requests whose verdict would flip, for the lenses. It runs in the
// document's worker after the diagnostics are published, so it never
// delays them.
func (s *Server) replaySession(d *openDoc, snap *document) {
	if (d.kind != Firestore && d.kind != Storage) || len(s.opts.Registrations) == 0 {
		return
	}
	sess := s.opts.Sessions.Session(uriPath(snap.uri))
	if sess == nil || sess.Fixture == nil || len(sess.Fixture.Events) > maxReplayEvents {
		return
	}
	f := source.NewFile(uriPath(snap.uri), snap.text)
	svc := eventService(d.kind)
	opts := verify.Options{Services: []string{svc}, Registrations: s.opts.Registrations, Candidates: map[string]*source.File{svc: f}}
	res, err := verify.Run(sess.Fixture, opts)
	var flips []verify.Divergence
	if err == nil && res != nil {
		if sr := res.Services[eventService(d.kind)]; sr != nil {
			for _, dv := range sr.Sorted() {
				if dv.Kind == verify.NowDenied || dv.Kind == verify.NowAllowed {
					flips = append(flips, dv)
				}
			}
		}
	}
	s.mu.Lock()
	changed := len(flips) > 0 || len(d.flips) > 0
	d.replayed, d.replayText, d.flips = snap.version, snap.text, flips
	s.mu.Unlock()
	if changed {
		s.refreshLenses()
	}
}

// refreshLenses asks the client to fetch the lenses again (a replay
// finished after it last asked). It is a request to the client, sent
// without waiting for the answer: a client that does not support it
// answers with an error, which is ignored.
func (s *Server) refreshLenses() {
	s.pubMu.Lock()
	conn := s.conn
	s.pubMu.Unlock()
	if conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.DispatchCall(ctx, "workspace/codeLens/refresh", nil); err != nil {
		s.log.Printf("codeLens refresh: %v", err)
	}
}

// inlayHints answers textDocument/inlayHint with the same counts at the
// end of each allow.
func inlayHints(s *Server, a *analysis) any {
	out := []InlayHint{}
	for _, t := range a.tally(s.sessionFor(a)) {
		if t.allowed+t.denied == 0 {
			continue
		}
		out = append(out, InlayHint{Position: a.doc.position(t.allow.Span.End.Offset), Label: fmt.Sprintf("✓%d ✗%d", t.allowed, t.denied), PaddingLeft: true})
	}
	return out
}

// maxLiveDenials bounds the information diagnostics per allow.
const maxLiveDenials = 5

// liveDiagnostics are the session's denied requests, as information on
// the allow that decided them (the most recent few per allow).
func (s *Server) liveDiagnostics(d *document, kind Kind) []Diagnostic {
	if kind != Firestore && kind != Storage {
		return nil
	}
	sess := s.opts.Sessions.Session(uriPath(d.uri))
	if sess == nil || len(sess.Requests) == 0 {
		return nil // no session: no second parse
	}
	a := analyze(d, kind)
	var out []Diagnostic
	for _, t := range a.tally(sess) {
		n := len(t.denials)
		for i := max(0, n-maxLiveDenials); i < n; i++ {
			e := t.denials[i]
			who := "unauthenticated"
			if e.Identity.UID != "" {
				who = "uid " + e.Identity.UID
			}
			msg := fmt.Sprintf("session denied %s %s (%s)", e.Method, e.Path, who)
			r := a.doc.rangeOf(t.allow.Span)
			if st, ok := failingStep(e.Request.Trace); ok {
				if st.Error != "" {
					msg += fmt.Sprintf(": `%s` failed: %s", st.Text, st.Error)
				} else {
					msg += fmt.Sprintf(": `%s` was %s", st.Text, st.Value)
				}
				if st.Line > 0 && st.Line <= len(a.doc.lines) {
					// The step's column counts characters from 1.
					start := Position{Line: st.Line - 1, Character: max(st.Column-1, 0)}
					r = Range{Start: start, End: start}
					if off, err := a.doc.offset(start); err == nil {
						r.End = a.doc.position(min(off+len(st.Text), len(a.doc.text)))
					}
				}
			}
			out = append(out, Diagnostic{Range: r, Severity: SeverityInformation, Code: "SESSION_DENIED", Source: "pyric session", Message: msg})
		}
	}
	return out
}

// failingStep is the sub-expression that decided a denial: the first
// that failed with an error, else the deepest that was false.
func failingStep(trace []event.Step) (event.Step, bool) {
	for _, st := range trace {
		if st.Error != "" && !st.Skipped {
			return st, true
		}
	}
	best, ok := event.Step{}, false
	for _, st := range trace {
		if !st.Skipped && st.Value == "false" && (!ok || st.Depth >= best.Depth) {
			best, ok = st, true
		}
	}
	return best, ok
}

// sessionPoll is how often open documents' sessions are checked for new
// traffic.
const sessionPoll = 2 * time.Second

// watchSessions re-diagnoses an open rules document when its session file
// changes, so live denials follow the traffic. Only file metadata is read
// here; the worker loads the file.
func (s *Server) watchSessions(done <-chan struct{}) {
	defer s.workers.Done()
	seen := map[string]time.Time{}
	stamps := map[string]string{}
	live, _ := s.opts.Sessions.(*LiveSessions)
	t := time.NewTicker(sessionPoll)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		docs := make([]*openDoc, 0, len(s.docs))
		for _, d := range s.docs {
			if d.kind == Firestore || d.kind == Storage {
				docs = append(docs, d)
			}
		}
		s.mu.Unlock()
		for _, d := range docs {
			kick := func() {
				select {
				case d.kick <- struct{}{}:
				default:
				}
			}
			if live != nil {
				// Session starts a background fetch when the last is
				// old; a changed stamp is traffic the server saw.
				path := uriPath(d.uri)
				live.Session(path)
				st := live.stamp(path)
				if prev, ok := stamps[d.uri]; ok && prev != st {
					kick()
				}
				stamps[d.uri] = st
			}
			dir := filepath.Dir(uriPath(d.uri))
			if p, err := config.Discover(dir); err == nil && p.Dir != "" {
				dir = p.Dir
			}
			st, err := os.Stat(filepath.Join(dir, ".pyric", "last-session.json"))
			if err != nil {
				continue
			}
			if prev, ok := seen[d.uri]; ok && !prev.Equal(st.ModTime()) {
				kick()
			}
			seen[d.uri] = st.ModTime()
		}
	}
}
