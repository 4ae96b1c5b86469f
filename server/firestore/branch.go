package firestoreserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/httpjson"
)

// BranchOptions configure a BranchHandler.
type BranchOptions struct {
	// LiveRules returns the live firestore.rules (name, text, ok); a fork
	// without candidate rules is decided by them. Nil or !ok: a fork
	// must name its rules.
	LiveRules func() (name, text string, ok bool)
	// Session returns the live session encoded as a fixture file
	// (capture.Encode), replayed when a fork names no fixture; nil: a
	// fork must name one.
	Session func() ([]byte, error)
	// Decode reads a fixture file's events (capture.Decode's): the
	// fixture a fork names, and Session's. The adapter takes the fixture
	// format as functions so that it imports no tool above the engines.
	Decode func(fixture []byte) ([]event.Event, error)
	// MaxBranches bounds the branches kept (default 16); past it the
	// oldest is discarded.
	MaxBranches int
	// MaxBody bounds a request body (default 64 MiB).
	MaxBody int64
}

// BranchHandler serves branches of sb's live Firestore database over
// HTTP; mount it under a prefix P with http.StripPrefix(P, h):
//
//	POST   P                {"rules": "...", "fixture": {...}} fork the live
//	                        state with candidate rules (default the live
//	                        ones) and apply the fixture's writes; without a
//	                        fixture, fork the state the live session
//	                        started from and re-run the session's writes
//	                        (Studio's "re-run against edited rules" for a
//	                        whole session). Answers the id, the replay's
//	                        verdicts and the diff against live
//	GET    P                the open branches' ids
//	GET    P/{id}           the branch's replay result and its diff against
//	                        live now
//	POST   P/{id}/promote   write the branch onto live as the admin; the
//	                        branch is gone
//	DELETE P/{id}           discard the branch
//
// Bad input is 400 naming the problem (rules that do not compile come with
// their positioned diagnostics), an unknown id 404.
func BranchHandler(sb *sandbox.Sandbox, opts BranchOptions) http.Handler {
	if opts.MaxBranches <= 0 {
		opts.MaxBranches = 16
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 64 << 20
	}
	return &branches{sb: sb, opts: opts, open: map[string]*openBranch{}}
}

type branches struct {
	sb   *sandbox.Sandbox
	opts BranchOptions

	mu    sync.Mutex
	next  int
	order []string
	open  map[string]*openBranch
}

// openBranch is one fork kept between requests; mu serialises its use
// (a Branch is not safe for concurrent use).
type openBranch struct {
	mu     sync.Mutex
	br     *firestore.Branch
	rules  string
	result *service.Report
}

// BranchReply is the JSON answer about one branch.
type BranchReply struct {
	ID string `json:"id"`
	// Rules is the name of the rules file deciding the branch.
	Rules string `json:"rules"`
	// Replay compares each replayed client request's verdict with the
	// captured one (as verify does).
	Replay *service.Report `json:"replay,omitempty"`
	// Changes are the differences from the live database (before: live,
	// after: the branch); after a promote, what was written.
	Changes   []firestore.BranchChange `json:"changes"`
	Documents int                      `json:"documents"`
	Promoted  bool                     `json:"promoted,omitempty"`
	Discarded bool                     `json:"discarded,omitempty"`
}

type branchError struct {
	Error       string          `json:"error"`
	Diagnostics []diagnosticOut `json:"diagnostics,omitempty"`
}

type diagnosticOut struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Severity string `json:"severity"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message"`
}

func (h *branches) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The path after the mount point (stripped by http.StripPrefix):
	// "", "{id}" or "{id}/promote".
	rest := strings.Trim(r.URL.Path, "/")
	parts := strings.Split(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodPost:
		h.fork(w, r)
	case rest == "" && r.Method == http.MethodGet:
		h.mu.Lock()
		ids := append([]string{}, h.order...)
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"branches": ids})
	case rest == "":
		methodNotAllowed(w, "GET, POST")
	case len(parts) == 1 && r.Method == http.MethodGet:
		h.with(w, parts[0], false, func(ob *openBranch) (int, *BranchReply, error) {
			live, err := forkLive(h.sb)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, &BranchReply{ID: parts[0], Rules: ob.rules, Replay: ob.result, Changes: nonNil(ob.br.Diff(live.Docs())), Documents: ob.br.Len()}, nil
		})
	case len(parts) == 1 && r.Method == http.MethodDelete:
		h.with(w, parts[0], true, func(ob *openBranch) (int, *BranchReply, error) {
			return http.StatusOK, &BranchReply{ID: parts[0], Rules: ob.rules, Changes: []firestore.BranchChange{}, Documents: ob.br.Len(), Discarded: true}, nil
		})
	case len(parts) == 1:
		methodNotAllowed(w, "GET, DELETE")
	case len(parts) == 2 && parts[1] == "promote" && r.Method == http.MethodPost:
		h.with(w, parts[0], true, func(ob *openBranch) (int, *BranchReply, error) {
			changes, err := promote(r.Context(), h.sb, ob.br)
			if err != nil {
				return 0, nil, fmt.Errorf("promote: %w", err)
			}
			return http.StatusOK, &BranchReply{ID: parts[0], Rules: ob.rules, Changes: nonNil(changes), Documents: ob.br.Len(), Promoted: true}, nil
		})
	case len(parts) == 2 && parts[1] == "promote":
		methodNotAllowed(w, "POST")
	default:
		writeJSON(w, http.StatusNotFound, branchError{Error: fmt.Sprintf("no branch route %q: use POST …/branch, GET|DELETE …/branch/{id}, POST …/branch/{id}/promote", r.URL.Path)})
	}
}

func (h *branches) fork(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBody))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, branchError{Error: fmt.Sprintf("request body: %v (at most %d bytes)", err, h.opts.MaxBody)})
		return
	}
	var req struct {
		Rules     string          `json:"rules"`
		RulesName string          `json:"rulesName"`
		Fixture   json.RawMessage `json:"fixture"`
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeJSON(w, http.StatusBadRequest, branchError{Error: fmt.Sprintf(`the body must be {"rules": "...", "fixture": {...}}: %v`, err)})
			return
		}
	}
	name, text := req.RulesName, req.Rules
	if name == "" {
		name = "firestore.rules"
	}
	if text == "" {
		ok := false
		if h.opts.LiveRules != nil {
			name, text, ok = h.opts.LiveRules()
		}
		if !ok {
			writeJSON(w, http.StatusBadRequest, branchError{Error: "no candidate rules and no live firestore.rules: send {\"rules\": \"...\"}"})
			return
		}
	}
	gate, diags := firestore.NewRulesGate(source.NewFile(name, text))
	if gate == nil || diags.HasErrors() {
		writeJSON(w, http.StatusBadRequest, branchError{Error: name + " does not compile", Diagnostics: diagnosticsOut(name, diags)})
		return
	}
	live, err := forkLive(h.sb)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, branchError{Error: "read live: " + err.Error()})
		return
	}
	if h.opts.Decode == nil {
		writeJSON(w, http.StatusInternalServerError, branchError{Error: "this server reads no fixtures"})
		return
	}
	var events []event.Event
	start := live.Docs()
	if len(req.Fixture) > 0 && string(req.Fixture) != "null" {
		if events, err = h.opts.Decode(req.Fixture); err != nil {
			writeJSON(w, http.StatusBadRequest, branchError{Error: "fixture: " + err.Error()})
			return
		}
	} else {
		// The live session, through its JSON form (the form a fixture
		// file has), from the state it started in.
		var data []byte
		err = fmt.Errorf("this server has no live session to replay: name a fixture")
		if h.opts.Session != nil {
			if data, err = h.opts.Session(); err == nil {
				events, err = h.opts.Decode(data)
			}
		}
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, branchError{Error: "the live session: " + err.Error()})
			return
		}
		start, _ = firestore.InitialDocuments(events, start)
	}
	br, err := firestore.Fork(start, gate)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, branchError{Error: "fork: " + err.Error()})
		return
	}
	res, err := br.Apply(events)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, branchError{Error: "fixture: " + err.Error()})
		return
	}
	changes := br.Diff(live.Docs())
	h.mu.Lock()
	h.next++
	id := "b" + strconv.Itoa(h.next)
	h.open[id] = &openBranch{br: br, rules: name, result: res}
	h.order = append(h.order, id)
	for len(h.order) > h.opts.MaxBranches {
		delete(h.open, h.order[0])
		h.order = h.order[1:]
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusCreated, BranchReply{ID: id, Rules: name, Replay: res, Changes: nonNil(changes), Documents: br.Len()})
}

// with runs fn on the branch id, under its lock; remove takes it out of
// the open set first (promote, discard), so it is used once.
func (h *branches) with(w http.ResponseWriter, id string, remove bool, fn func(*openBranch) (int, *BranchReply, error)) {
	h.mu.Lock()
	ob := h.open[id]
	if ob != nil && remove {
		delete(h.open, id)
		for i, o := range h.order {
			if o == id {
				h.order = append(h.order[:i:i], h.order[i+1:]...)
				break
			}
		}
	}
	h.mu.Unlock()
	if ob == nil {
		writeJSON(w, http.StatusNotFound, branchError{Error: fmt.Sprintf("no branch %q (promoted, discarded, or never forked)", id)})
		return
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	code, reply, err := fn(ob)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, context.Canceled) {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, branchError{Error: err.Error()})
		return
	}
	writeJSON(w, code, reply)
}

func diagnosticsOut(file string, ds source.Diagnostics) []diagnosticOut {
	var out []diagnosticOut
	for _, d := range ds {
		out = append(out, diagnosticOut{File: file, Line: d.Span.Start.Line, Column: d.Span.Start.Column,
			Severity: d.Severity.String(), Code: d.Code, Message: d.Message})
	}
	return out
}

func nonNil(c []firestore.BranchChange) []firestore.BranchChange {
	if c == nil {
		return []firestore.BranchChange{}
	}
	return c
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, branchError{Error: "method not allowed here: use " + allow})
}

// branchAPI is how the branch and index endpoints write JSON: plain
// application/json, one value a line.
var branchAPI = httpjson.Style{Newline: true}

func writeJSON(w http.ResponseWriter, code int, v any) { branchAPI.JSON(w, code, v) }

// forkLive forks the live Firestore default database of sb, without
// rules.
func forkLive(sb *sandbox.Sandbox) (*firestore.Branch, error) {
	fs, ok := sandbox.Lookup[*firestore.Service](sb)
	if !ok {
		return nil, fmt.Errorf("the sandbox runs no Firestore to fork")
	}
	return fs.Fork(nil)
}

// promote writes br onto sb's live Firestore (Service.Promote).
func promote(ctx context.Context, sb *sandbox.Sandbox, br *firestore.Branch) ([]firestore.BranchChange, error) {
	fs, ok := sandbox.Lookup[*firestore.Service](sb)
	if !ok {
		return nil, fmt.Errorf("the sandbox runs no Firestore to promote onto")
	}
	return fs.Promote(ctx, br)
}
