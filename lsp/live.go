package lsp

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/config"
	"github.com/pyric/pyric/sandbox/service"
)

// LiveSessions finds the session of a running `pyric serve` without
// configuration: for a project with a firebase.json it asks the Emulator
// Suite hub (emulators.hub.port, else 4400) which address serves the UI,
// and reads the captured session from there (/__pyric/capture, what
// `pyric capture save --url` reads); with no hub answering it tries
// firebase.json's emulators.ui.port. Fetches run in the background and
// their result is kept: Session answers from what was last fetched (or
// Fallback, usually FileSessions, while nothing was), so a slow or hung
// server never holds up the editor.
type LiveSessions struct {
	// Fallback answers while no server does; nil means FileSessions.
	Fallback SessionSource
	// HubPort replaces the hub's default port 4400 (tests).
	HubPort int
	// Client makes the requests; nil means one with a 3 s timeout.
	Client *http.Client
	// Registrations are the services that check what they recorded in
	// a session read (capture.DecodeWith); the default Fallback gets
	// them too.
	Registrations []service.Registration

	mu    sync.Mutex
	byDir map[string]*liveEntry
}

// liveEntry is one project's live session.
type liveEntry struct {
	s       *Session
	stamp   string // changes when the session does (see watchSessions)
	fetched time.Time
	busy    bool
}

// liveRefresh is how old a fetched session may get before the next
// Session call fetches again (in the background).
const liveRefresh = time.Second

// captureRoute is where `pyric serve`'s UI port serves the session.
const captureRoute = "/__pyric/capture"

// Session implements SessionSource.
func (l *LiveSessions) Session(rulesPath string) *Session {
	fallback := l.Fallback
	if fallback == nil {
		fallback = FileSessions{Registrations: l.Registrations}
	}
	p, err := config.Discover(filepath.Dir(rulesPath))
	if err != nil || p.Dir == "" {
		return fallback.Session(rulesPath)
	}
	l.mu.Lock()
	if l.byDir == nil {
		l.byDir = map[string]*liveEntry{}
	}
	e := l.byDir[p.Dir]
	if e == nil {
		e = &liveEntry{}
		l.byDir[p.Dir] = e
	}
	if !e.busy && time.Since(e.fetched) > liveRefresh {
		e.busy = true
		go l.refresh(e, p.Ports)
	}
	s := e.s
	l.mu.Unlock()
	if s != nil {
		return s
	}
	return fallback.Session(rulesPath)
}

// stamp returns what identifies the live session of a rules file's
// project as last fetched ("" when there is none), without fetching.
func (l *LiveSessions) stamp(rulesPath string) string {
	p, err := config.Discover(filepath.Dir(rulesPath))
	if err != nil || p.Dir == "" {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byDir[p.Dir]; e != nil {
		return e.stamp
	}
	return ""
}

// refresh fetches a project's session and stores it (nil when no server
// answers).
func (l *LiveSessions) refresh(e *liveEntry, ports map[string]int) {
	s, err := l.fetch(ports)
	l.mu.Lock()
	defer l.mu.Unlock()
	e.busy, e.fetched = false, time.Now()
	if err != nil {
		e.s, e.stamp = nil, ""
		return
	}
	e.s = s
	e.stamp = fmt.Sprintf("%s#%d", s.Source, len(s.Fixture.Events))
	if n := len(s.Fixture.Events); n > 0 {
		e.stamp += "@" + strconv.FormatUint(s.Fixture.Events[n-1].Seq, 10)
	}
}

func (l *LiveSessions) client() *http.Client {
	if l.Client != nil {
		return l.Client
	}
	return &http.Client{Timeout: 3 * time.Second}
}

// fetch finds the UI address (the hub's list, else firebase.json's ui
// port) and reads the session there.
func (l *LiveSessions) fetch(ports map[string]int) (*Session, error) {
	hub := l.HubPort
	if p := ports["hub"]; p != 0 {
		hub = p
	}
	if hub == 0 {
		hub = 4400
	}
	var ui string
	var list map[string]struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	if err := l.getJSON("http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(hub))+"/emulators", 1<<20, &list); err == nil {
		if e, ok := list["ui"]; ok && e.Port != 0 {
			host := e.Host
			if host == "" || host == "0.0.0.0" || host == "::" {
				host = "127.0.0.1"
			}
			ui = net.JoinHostPort(host, strconv.Itoa(e.Port))
		}
	}
	if ui == "" && ports["ui"] != 0 {
		ui = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports["ui"]))
	}
	if ui == "" {
		return nil, fmt.Errorf("no running server found")
	}
	url := "http://" + ui + captureRoute
	b, err := l.get(url, maxSessionBytes)
	if err != nil {
		return nil, err
	}
	fx, err := capture.DecodeWith(b, l.Registrations)
	if err != nil {
		return nil, err
	}
	s := &Session{Source: url, Fixture: fx}
	for _, e := range fx.Events {
		if e.Kind == event.KindRequest && e.Request != nil {
			s.Requests = append(s.Requests, e)
		}
	}
	return s, nil
}

func (l *LiveSessions) get(url string, limit int64) ([]byte, error) {
	resp, err := l.client().Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: more than %d bytes", url, limit)
	}
	return b, nil
}

func (l *LiveSessions) getJSON(url string, limit int64, v any) error {
	b, err := l.get(url, limit)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
