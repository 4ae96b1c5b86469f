package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/event"
)

// Errors of invocations; match with errors.Is.
var (
	// ErrNotFound is a function id no codebase exports.
	ErrNotFound = errors.New("function not found")
	// ErrNotEvent is DeliverEvent to a function that is not an event
	// function.
	ErrNotEvent = errors.New("not an event function")
	// ErrTimeout is an invocation that ran past its timeoutSeconds.
	ErrTimeout = errors.New("function timed out")
	// ErrCrashed is an invocation whose worker process ended under it.
	ErrCrashed = errors.New("function worker crashed")
)

// Limits of what an invocation keeps for its event.
const (
	maxLogLines    = 50
	maxLogLineSize = 2048
	// maxEventResponse bounds what is read of an event function's
	// acknowledgement.
	maxEventResponse = 1 << 20
)

// inlineBody bounds the request bodies read whole before they are sent
// to the worker; longer ones stream.
const inlineBody = 64 << 10

// TimeoutMessage is the body of a timed-out HTTP invocation: a 504, as
// Cloud Run answers a gen-2 function past its timeout (the client SDK
// reads 504 as deadline-exceeded).
const TimeoutMessage = "upstream request timeout"

// CrashBody is the body of an HTTP invocation whose worker ended under
// it (process.exit, an uncaught exception), as the emulator answers.
const CrashBody = `{"code":"ECONNRESET"}`

// invocation is one run in flight.
type invocation struct {
	id        string
	start     time.Time
	mu        sync.Mutex
	logs      []event.LogLine
	dropped   int
	scriptErr *ScriptError
	ended     chan struct{} // closed when the harness reports the response written
	endOnce   sync.Once
	// writes are the events of the writes the function made (their
	// Actor.Invocation is id), the first event.MaxInvocationWrites;
	// moreWrites counts the rest.
	writes     []string
	moreWrites int
	worker     *worker // the worker running it, once attached
}

// noteWrite adds a write event to the invocation that made it: the
// engine taps the event stream with it (writes are emitted while the
// function awaits them, before its invocation event).
func (e *Engine) noteWrite(ev event.Event) {
	if ev.Actor.Invocation == "" || (ev.Kind != event.KindCommit && ev.Kind != event.KindMutation) {
		return
	}
	v, ok := e.running.Load(ev.Actor.Invocation)
	if !ok {
		return // a write after its invocation ended, or another engine's
	}
	inv := v.(*invocation)
	inv.mu.Lock()
	if len(inv.writes) < event.MaxInvocationWrites {
		inv.writes = append(inv.writes, ev.ID)
	} else {
		inv.moreWrites++
	}
	inv.mu.Unlock()
}

// endWait bounds how long an answered invocation waits for the
// harness's end report, after which its log lines are all in.
const endWait = 250 * time.Millisecond

func (i *invocation) markEnded() { i.endOnce.Do(func() { close(i.ended) }) }

// awaitEnd waits until the control pipe has delivered the invocation's
// lines (they precede its end report), at most endWait.
func (i *invocation) awaitEnd() {
	t := time.NewTimer(endWait)
	defer t.Stop()
	select {
	case <-i.ended:
	case <-t.C:
	}
}

func (i *invocation) addLog(severity, text string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if len(i.logs) >= maxLogLines {
		i.dropped++
		return
	}
	if len(text) > maxLogLineSize {
		text = text[:maxLogLineSize] + "…"
	}
	i.logs = append(i.logs, event.LogLine{Severity: severity, Text: text})
}

func (e *Engine) newInvocation() *invocation {
	inv := &invocation{id: "inv-" + strconv.FormatInt(e.invSeq.Add(1), 10), start: time.Now(), ended: make(chan struct{})}
	e.running.Store(inv.id, inv)
	return inv
}

// attach registers the invocation with its worker, so the worker's log
// and error reports reach it.
func (w *worker) attach(inv *invocation) {
	inv.worker = w
	w.mu.Lock()
	w.invs[inv.id] = inv
	w.mu.Unlock()
}

func (w *worker) detach(inv *invocation) {
	w.mu.Lock()
	delete(w.invs, inv.id)
	w.mu.Unlock()
}

// crashedBy reports whether the worker has died, and whether the
// invocation itself made it die (an uncaught exception or process.exit
// during it).
func (w *worker) crashedBy(inv *invocation) (dead, self bool) {
	select {
	case <-w.exited:
	case <-time.After(2 * time.Second):
		return false, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return true, w.crashInv == inv.id
}

// ServeFunction runs the HTTP-invoked function id (onRequest, onCall,
// a blocking or task function) for r, as if r had reached the function
// itself: the function sees path (with r's query) as its URL. It answers
// 404 for an unknown id, 504 past the function's timeout and 500 when the
// function throws or its worker dies; the worker is then replaced.
//
// It returns once the response is written, so a client's next request on
// the same connection is served at once; the invocation's last log lines
// and its event follow (within endWait).
func (e *Engine) ServeFunction(w http.ResponseWriter, r *http.Request, id, path string) {
	e.serveFunction(w, r, id, path, false)
}

// serveFunction is ServeFunction; with waitEvent it returns only once the
// invocation's event is emitted.
func (e *Engine) serveFunction(w http.ResponseWriter, r *http.Request, id, path string, waitEvent bool) {
	cb, ep := e.lookup(id)
	if cb == nil {
		http.Error(w, fmt.Sprintf("Function %s does not exist", id), http.StatusNotFound)
		return
	}
	inv := e.newInvocation()
	outcome, status, answered := e.serve(cb, ep, inv, w, r, path)
	finish := func() {
		if answered {
			// The log lines and the error report of an answered
			// invocation come on the control pipe, before its end.
			inv.awaitEnd()
			inv.worker.detach(inv)
			inv.mu.Lock()
			if inv.scriptErr != nil {
				outcome = "error"
			}
			inv.mu.Unlock()
		}
		e.emit(r.Context(), ep, inv, outcome, status)
	}
	if waitEvent || !answered || !e.finishLater() {
		finish()
		return
	}
	go func() {
		defer e.finishing.Done()
		finish()
	}()
}

// finishLater counts an invocation whose event is emitted after its
// handler returned; false once the engine is closing (Close waits for
// those counted).
func (e *Engine) finishLater() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.finishing.Add(1)
	return true
}

// NoInstanceMessage answers a request that found every worker busy for
// longer than the function's timeout, as production answers when no
// instance is available (429).
const NoInstanceMessage = "The request was aborted because there was no available instance."

// acquireFor reserves a worker for an invocation. Starting a worker (a
// cold start) does not count toward the function's timeout, as in
// production; waiting is bounded by the timeout plus a worker's start.
func (cb *codebase) acquireFor(ctx context.Context, ep *Endpoint) (*worker, error) {
	actx, cancel := context.WithTimeout(ctx, cb.e.timeout(ep)+loadTimeout)
	defer cancel()
	wk, err := cb.acquire(actx, ep)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, errNoInstance
	}
	return wk, err
}

var errNoInstance = errors.New(NoInstanceMessage)

// inspectTimeout stands for no timeout: under the inspector a developer
// holds invocations at breakpoints, and the Emulator Suite turns
// timeouts off when debugging.
const inspectTimeout = 24 * time.Hour

// timeout is how long an invocation of ep may run: its timeoutSeconds,
// or no bound while the functions run under the inspector.
func (e *Engine) timeout(ep *Endpoint) time.Duration {
	if e.opts.InspectPort > 0 {
		return inspectTimeout
	}
	return ep.Timeout
}

// serve runs the invocation and writes its response; answered is true
// when the worker answered (its end report is then due on the control
// pipe).
func (e *Engine) serve(cb *codebase, ep *Endpoint, inv *invocation, w http.ResponseWriter, r *http.Request, path string) (outcome string, status int, answered bool) {
	wk, err := cb.acquireFor(r.Context(), ep)
	if err != nil {
		outcome, status = e.failHTTP(r.Context(), r, w, ep, err)
		return outcome, status, false
	}
	defer cb.release(wk, ep.ID)
	ctx, cancel := context.WithTimeout(r.Context(), e.timeout(ep))
	defer cancel()
	wk.attach(inv)
	defer func() {
		if !answered { // else the end report detaches it
			wk.detach(inv)
		}
	}()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	body := r.Body
	if r.ContentLength > 0 && r.ContentLength <= inlineBody {
		// A body read first goes to the worker in the same write as the
		// headers (a streamed one follows them in writes of its own).
		b := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return "error", http.StatusBadRequest, false
		}
		body = io.NopCloser(bytes.NewReader(b))
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, "http://worker"+path, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "error", http.StatusBadRequest, false
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	out.ContentLength = r.ContentLength
	if r.Body == nil || r.Body == http.NoBody {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	setInvocationHeaders(out.Header, ep, inv, "http")
	resp, err := wk.client.Do(out)
	if err != nil {
		if ctx.Err() == nil {
			if dead, _ := wk.crashedBy(inv); dead {
				err = fmt.Errorf("%w: %v", ErrCrashed, wk.deathError())
			}
		}
		outcome, status := e.failHTTP(ctx, r, w, ep, err)
		if outcome == "timeout" {
			e.printf("functions[%s]: timed out after %s; its worker is replaced\n", ep.ID, ep.Timeout)
			cb.retire(wk, false)
		}
		return outcome, status, false
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, vs := range resp.Header {
		if k == "Connection" || k == "Keep-Alive" {
			continue
		}
		h[k] = vs
	}
	if _, ok := resp.Header["Content-Type"]; !ok {
		// The function set none (a streaming callable's server-sent
		// events): none goes out, as under the Emulator Suite, instead of
		// the type net/http would sniff from the first bytes.
		h["Content-Type"] = nil
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				break
			}
			if resp.ContentLength < 0 {
				rc.Flush() // streaming responses (SSE of streaming callables) go out as written
			}
		}
		if rerr != nil {
			if rerr != io.EOF && errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
				e.printf("functions[%s]: timed out after %s while answering; its worker is replaced\n", ep.ID, ep.Timeout)
				cb.retire(wk, false)
				return "timeout", resp.StatusCode, false
			}
			break
		}
	}
	// The client has its answer now; the invocation's last log lines
	// and its event follow without holding it.
	rc.Flush()
	if resp.StatusCode >= 500 {
		return "error", resp.StatusCode, true
	}
	return "ok", resp.StatusCode, true
}

// failHTTP answers an invocation that got no response from its function.
func (e *Engine) failHTTP(ctx context.Context, r *http.Request, w http.ResponseWriter, ep *Endpoint, err error) (string, int) {
	switch {
	case r.Context().Err() != nil:
		return "cancelled", 0
	case errors.Is(err, errNoInstance):
		http.Error(w, NoInstanceMessage, http.StatusTooManyRequests)
		return "error", http.StatusTooManyRequests
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		http.Error(w, TimeoutMessage, http.StatusGatewayTimeout)
		return "timeout", http.StatusGatewayTimeout
	case errors.Is(err, ErrCrashed):
		// The emulator's answer when the worker dies under a request
		// (its proxy's socket error); the cause goes to the log and the
		// invocation event.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, CrashBody)
		return "crash", http.StatusInternalServerError
	}
	http.Error(w, err.Error(), http.StatusInternalServerError)
	return "error", http.StatusInternalServerError
}

func setInvocationHeaders(h http.Header, ep *Endpoint, inv *invocation, mode string) {
	h.Set("X-Pyric-Fn", ep.ID)
	h.Set("X-Pyric-Inv", inv.id)
	h.Set("X-Pyric-Mode", mode)
	h.Set("X-Pyric-Platform", ep.Platform)
}

// CallHTTP runs an HTTP-invoked function with a request built from the
// arguments and returns its response, its body read whole (bounded by
// 10 MiB): the synchronous call the Auth engine makes to a blocking
// function, and tools that re-invoke a function.
func (e *Engine) CallHTTP(ctx context.Context, id, method, path string, header http.Header, body []byte) (*http.Response, error) {
	if _, ep := e.lookup(id); ep == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	r, err := http.NewRequestWithContext(ctx, method, "http://function"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if header != nil {
		r.Header = header.Clone()
	}
	rec := &recorder{header: http.Header{}, limit: 10 << 20}
	e.serveFunction(rec, r, id, r.URL.Path, true)
	if rec.status == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec.status = http.StatusOK
	}
	return &http.Response{StatusCode: rec.status, Status: strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), ContentLength: int64(rec.body.Len())}, nil
}

// recorder is a bounded in-memory ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	limit  int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len()+len(p) > r.limit {
		return 0, errors.New("function response too large")
	}
	return r.body.Write(p)
}

// DeliverEvent runs the event function id with payload as its body (a
// CloudEvent for a gcfv2 function, {"data", "context"} for gcfv1) and
// waits for its outcome: nil once it returned or its promise resolved,
// a *ScriptError when it threw or rejected, ErrTimeout past its
// timeoutSeconds, ErrCrashed when it ended its worker. An event whose
// worker died because of another invocation is delivered again on a
// fresh worker, so a crash loses no other event.
func (e *Engine) DeliverEvent(ctx context.Context, id string, payload []byte) error {
	cb, ep := e.lookup(id)
	if cb == nil {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if ep.Event == nil && ep.Schedule == nil {
		return fmt.Errorf("%w: %s is a %s function", ErrNotEvent, id, ep.Kind())
	}
	e.kept.keep(id, payload)
	inv := e.newInvocation()
	var err error
	outcome := "ok"
	for attempt := 0; attempt < 2; attempt++ {
		var retry bool
		outcome, retry, err = e.deliver(ctx, cb, ep, inv, payload)
		if !retry {
			break
		}
	}
	e.emit(ctx, ep, inv, outcome, 0)
	return err
}

func (e *Engine) deliver(ctx context.Context, cb *codebase, ep *Endpoint, inv *invocation, payload []byte) (outcome string, retry bool, err error) {
	wk, err := cb.acquireFor(ctx, ep)
	if err != nil {
		return "error", false, fmt.Errorf("function %s: %w", ep.ID, err)
	}
	defer cb.release(wk, ep.ID)
	tctx, cancel := context.WithTimeout(ctx, e.timeout(ep))
	defer cancel()
	wk.attach(inv)
	defer wk.detach(inv)
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, "http://worker/", bytes.NewReader(payload))
	if err != nil {
		return "error", false, err
	}
	req.Header.Set("Content-Type", "application/json")
	setInvocationHeaders(req.Header, ep, inv, "event")
	resp, err := wk.client.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return "cancelled", false, ctx.Err()
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			e.printf("functions[%s]: timed out after %s; its worker is replaced\n", ep.ID, ep.Timeout)
			cb.retire(wk, false)
			return "timeout", false, fmt.Errorf("%w: %s ran past its %s timeout", ErrTimeout, ep.ID, ep.Timeout)
		}
		dead, self := wk.crashedBy(inv)
		if dead && !self {
			return "crash", true, fmt.Errorf("%w: %v", ErrCrashed, wk.deathError())
		}
		if dead {
			return "crash", false, fmt.Errorf("%w: %v", ErrCrashed, wk.deathError())
		}
		return "error", false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxEventResponse))
	inv.awaitEnd()
	if resp.StatusCode == http.StatusOK {
		return "ok", false, nil
	}
	var failed struct {
		Error *ScriptError `json:"error"`
	}
	if json.Unmarshal(body, &failed) == nil && failed.Error != nil {
		return "error", false, failed.Error
	}
	return "error", false, fmt.Errorf("function %s answered %d: %s", ep.ID, resp.StatusCode, strings.TrimSpace(string(body)))
}

// emit puts the invocation on the sandbox's event stream.
func (e *Engine) emit(ctx context.Context, ep *Endpoint, inv *invocation, outcome string, status int) {
	e.running.Delete(inv.id)
	inv.mu.Lock()
	logs := inv.logs
	writes, moreWrites := inv.writes, inv.moreWrites
	if inv.dropped > 0 {
		logs = append(logs, event.LogLine{Severity: "INFO", Text: fmt.Sprintf("… %d more line(s)", inv.dropped)})
	}
	var scriptErr *ScriptError
	if inv.scriptErr != nil {
		scriptErr = inv.scriptErr
	}
	inv.mu.Unlock()
	trigger := ep.Kind()
	if ep.Event != nil {
		trigger = ep.Event.EventType
	} else if ep.Blocking != nil {
		trigger = ep.Blocking.EventType
	}
	ev := event.Event{Kind: event.KindInvocation, Service: Name, Method: ep.Kind(), Path: ep.ID,
		Actor: event.Actor{Kind: event.ActorSystem},
		Invocation: &event.Invocation{Function: ep.ID, Codebase: ep.Codebase, TriggerType: trigger,
			CauseEventID: event.CauseOf(ctx), InvocationID: inv.id, InvocationMs: float64(time.Since(inv.start).Microseconds()) / 1000,
			Outcome: outcome, HTTPStatus: status, Logs: logs, Writes: writes, MoreWrites: moreWrites}}
	if outcome != "ok" {
		msg := outcome
		if scriptErr != nil {
			msg = scriptErr.Message
		} else if outcome == "timeout" {
			msg = fmt.Sprintf("the function ran past its %s timeout", ep.Timeout)
		}
		ev.Err = &event.Failure{Code: outcome, Message: msg}
	}
	e.events.Emit(ev)
}
