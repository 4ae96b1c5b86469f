package server

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/internal/memlimit"
	"github.com/pyric/pyric/internal/priority"
)

// HeavyBodyBytes is the request body size past which a request is heavy
// work: reading and decoding a body that large (a Firestore write carrying
// a 100,000-element list, a 30 MB Messaging send refused at its limit, a
// Realtime Database PUT of megabytes) costs whole CPU-seconds and tens of
// megabytes of short-lived objects, where a light request (a document
// read, a small write) costs microseconds. Production's Firestore document
// limit is 1 MiB, so no ordinary request of the Firebase SDKs reaches it.
const HeavyBodyBytes = 1 << 20

// heavyExpansion is how many bytes of short-lived objects a heavy request
// allocates per byte of its body, as measured on the heaviest one: a
// Firestore create of a 100,000-element list (a 2.5 MB body) allocates
// 81 MB (2 million objects) to decode, check, store and answer it. An
// admitted request reserves that much headroom in the memory policy
// (memlimit.Reserve) for the body it read, for as long as it holds its
// slot.
const heavyExpansion = 32

// BodyBudget bounds the bytes of heavy request bodies being read and held
// at once, process-wide: as large as the largest single body a handler
// accepts (a Realtime Database REST write, 256 MiB, production's limit),
// so any write production accepts fits when it comes alone. A heavy body
// that would pass it is refused with 503 and Retry-After (the gate answers,
// whatever the handler made of the failed read) instead of every
// concurrent sender making the process hold its body.
const BodyBudget = 256 << 20

// chargeStep is how far ahead of the bytes read a body's charge against
// the budget runs (and the most one read of a heavy body asks for), so
// the budget's lock is taken once a MiB, not once a read.
const chargeStep = 1 << 20

// heavyWork is the process's gate: heavy request bodies read within
// BodyBudget, and heavy work admitted at most one fewer than the process's
// processors (the CPUs it may use, not the runtime's Ps, of which
// SpareProcessor adds one) at a time (at least one), process-wide since
// the processors are. The others queue, in the order their bodies were read, for as long
// as their client waits, instead of being refused. Without it four
// concurrent heavy requests on two cores kept every processor busy and
// the collector's assists on them, and a light read waited its turn
// behind them (#34: a light read's p99 went from 3 ms quiet to 60 ms).
var heavyWork = newGate(max(1, processors-1), BodyBudget)

// gate is a counting semaphore of processors and a byte budget for the
// bodies being read.
type gate struct {
	slots   chan struct{}
	waiting atomic.Int64 // requests queued for a slot
	bodies  memlimit.Budget
}

func newGate(slots int, budget int64) *gate {
	return &gate{slots: make(chan struct{}, slots), bodies: memlimit.Budget{Max: budget}}
}

// enter waits for a slot, in arrival order, for as long as ctx lasts.
func (g *gate) enter(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) leave() { <-g.slots }

// HeavyWork reports the process's heavy requests: how many hold a slot,
// how many queue for one, and how many slots there are (for diagnostics
// and tests).
func HeavyWork() (admitted, waiting, slots int) {
	return len(heavyWork.slots), int(heavyWork.waiting.Load()), cap(heavyWork.slots)
}

// BodyBudgetError is the failed read of a heavy body that would pass
// BodyBudget; the gate answers its request 503 with Message.
type BodyBudgetError struct{ Used, Budget int64 }

func (e *BodyBudgetError) Error() string { return e.Message() }

// Message is the refusal's text, for a person.
func (e *BodyBudgetError) Message() string {
	return fmt.Sprintf("pyric: too many large request bodies in flight: the bodies being read already hold %d of the %d MiB they may; retry when they finish",
		e.Used>>20, e.Budget>>20)
}

// admission is one request's place at the gate. Its body's bytes are
// charged to the budget as they are read; once the whole body is read (its
// declared length, or the end of a body of unknown length) and it is heavy
// (past HeavyBodyBytes), the last read waits for a slot, and the rest of
// the request — decoding, rules, the commit — runs as admitted heavy work
// on a thread of lower priority (priority.LowerThread). Reading costs the network's
// pace and the budget's bytes, not a processor, so a slow client sending a
// heavy body never holds a slot while it sends; a request refused before
// its body is read (a write the rules deny) neither queues nor charges;
// one refused part-way (past a handler's size limit) takes no slot. All is
// given back when the handler returns, or when it says it streams its body
// (Streams).
type admission struct {
	gate   *gate
	ctx    context.Context
	length int64 // Content-Length, -1 when unknown

	mu        sync.Mutex
	read      int64
	charged   int64            // budget bytes taken
	held      bool             // a slot
	exempt    bool             // streamed, or the handler returned: never (again) charge or take a slot
	refused   *BodyBudgetError // the read the budget refused
	unreserve func()           // the memory reservation's release
}

type admissionKey struct{}

// admit wraps r's body for the gate; it returns nil, leaving r as it is,
// for requests that cannot become heavy — no body, or a declared length
// within HeavyBodyBytes, past which net/http reads nothing — so the gate
// costs the light requests nothing.
func admit(g *gate, r *http.Request) (*http.Request, *admission) {
	if r.Body == nil || r.Body == http.NoBody || (r.ContentLength >= 0 && r.ContentLength <= HeavyBodyBytes) {
		return r, nil
	}
	a := &admission{gate: g, ctx: r.Context(), length: r.ContentLength}
	r = r.WithContext(context.WithValue(r.Context(), admissionKey{}, a))
	r.Body = &admittedBody{ReadCloser: r.Body, a: a}
	return r, a
}

// charge covers a read of up to n more bytes with the budget.
func (a *admission) charge(n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.exempt {
		return nil
	}
	if a.refused != nil {
		return a.refused
	}
	need := a.read + int64(n)
	if a.length >= 0 {
		need = min(need, a.length)
	}
	if need <= a.charged {
		return nil
	}
	to := need + chargeStep
	if a.length >= 0 {
		to = min(to, a.length)
	}
	if !a.gate.bodies.Take(to - a.charged) {
		a.refused = &BodyBudgetError{Used: a.gate.bodies.Used(), Budget: a.gate.bodies.Max}
		return a.refused
	}
	a.charged = to
	return nil
}

// complete notes n bytes read and whether the body ended (err, the read's
// error); it says whether the request now needs a slot.
func (a *admission) complete(n int, err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.read += int64(n)
	ended := err == io.EOF || (err == nil && a.length >= 0 && a.read >= a.length)
	return ended && a.read > HeavyBodyBytes && !a.held && !a.exempt
}

// enter takes a slot for the request, reserves memory headroom for its
// body's work and lowers the priority of the calling goroutine's thread
// for good (see priority.LowerThread): it must be the goroutine that runs the rest
// of the request and ends with it (Guard's for the handler, AdmitMessage's
// caller's). It fails when the client gave up while the request queued.
func (a *admission) enter() error {
	if err := a.gate.enter(a.ctx); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.exempt || a.held { // finished or streamed meanwhile
		a.gate.leave()
		return nil
	}
	a.held = true
	a.unreserve = memlimit.Reserve(heavyExpansion * a.read)
	priority.LowerThread()
	return nil
}

// finish gives the slot and the budget back for good.
func (a *admission) finish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.exempt = true
	a.gate.bodies.Give(a.charged)
	a.charged = 0
	if a.held {
		a.held = false
		a.unreserve()
		a.gate.leave()
	}
}

// refusal is the budget's refusal of the request's body, or nil.
func (a *admission) refusal() *BodyBudgetError {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused
}

type admittedBody struct {
	io.ReadCloser
	a *admission
}

func (b *admittedBody) Read(p []byte) (int, error) {
	if len(p) > chargeStep {
		p = p[:chargeStep]
	}
	if err := b.a.charge(len(p)); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	if b.a.complete(n, err) {
		if werr := b.a.enter(); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// Streams tells the gate that the request of ctx streams its body to disk
// as it arrives, holding a buffer's worth at a time (a Storage upload): it
// costs the network's pace, not a burst of CPU and memory, so it is
// neither charged to the budget nor queued.
func Streams(ctx context.Context) {
	if a, ok := ctx.Value(admissionKey{}).(*admission); ok {
		a.finish()
	}
}

// BodyStreamer is a handler that streams every request body it reads as
// the bytes arrive, never decoding one whole (Storage: object bytes go to
// disk a buffer at a time and its metadata bodies are bounded): Guard
// serves it without the gate, as Streams would exempt each of its
// requests, but without first giving the request its admission and a
// goroutine of its own (a request with a body of undeclared length, as
// the GCS Go client sends every upload, paid that goroutine's start and
// the wake-up of the connection's goroutine at its end).
type BodyStreamer interface {
	http.Handler
	StreamsBodies()
}

// AdmitMessage admits a request message of size bytes already read by its
// transport (a gRPC message) as the gate admits a heavy HTTP body: past
// HeavyBodyBytes it waits for a slot, reserves memory for its work and
// lowers the calling goroutine's thread for good, so the caller must run
// it on a goroutine that ends with the request (OwnGoroutine). release
// gives the slot back; err is ctx's when the client gave up while the
// message queued.
func AdmitMessage(ctx context.Context, size int64) (release func(), err error) {
	if size <= HeavyBodyBytes {
		return func() {}, nil
	}
	a := &admission{gate: heavyWork, ctx: ctx, length: size, read: size}
	if err := a.enter(); err != nil {
		return nil, err
	}
	return a.finish, nil
}

// OwnGoroutine runs f on a goroutine of its own and waits for it: heavy
// work lowers its thread's priority for good (priority.LowerThread), so it must
// run on a goroutine that ends with it, not on one a server reuses (a
// keep-alive connection's, a gRPC stream worker). A panic in f is logged
// with its stack and raised again in the caller.
func OwnGoroutine(f func()) {
	panicked := make(chan any, 1)
	go func() {
		ok := false
		defer func() {
			if ok {
				panicked <- nil
				return
			}
			v := recover()
			if v != http.ErrAbortHandler {
				log.Printf("pyric: panic in heavy work: %v\n%s", v, debug.Stack())
			}
			panicked <- panicValue{v}
		}()
		f()
		ok = true
	}()
	if v := <-panicked; v != nil {
		panic(v.(panicValue).v)
	}
}

type panicValue struct{ v any }

// gatedWriter answers a request whose body the budget refused with the
// gate's 503, whatever its handler made of the failed read.
type gatedWriter struct {
	http.ResponseWriter
	a        *admission
	answered bool // the gate's refusal, or the handler's answer, went out
	refused  bool // the gate's refusal went out
}

func (w *gatedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *gatedWriter) WriteHeader(code int) {
	if w.answered {
		if !w.refused {
			w.ResponseWriter.WriteHeader(code)
		}
		return
	}
	w.answered = true
	if e := w.a.refusal(); e != nil {
		w.refused = true
		w.ResponseWriter.Header().Set("Retry-After", "1")
		refusal.Fail(w.ResponseWriter, errcode.Unavailable, e.Message())
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	if !w.answered {
		w.WriteHeader(http.StatusOK)
	}
	if w.refused {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *gatedWriter) Flush() {
	if !w.refused {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// serveAdmitted serves h for a request that may become heavy work (a
// of admit): on a goroutine of its own, so that its thread, lowered
// once the request is admitted, is discarded with it; with the budget's
// refusal answered by the gate.
func serveAdmitted(a *admission, h http.Handler, w http.ResponseWriter, r *http.Request) {
	gw := &gatedWriter{ResponseWriter: w, a: a}
	defer a.finish()
	OwnGoroutine(func() { h.ServeHTTP(gw, r) })
	if !gw.answered && a.refusal() != nil {
		gw.WriteHeader(http.StatusServiceUnavailable)
	}
}
