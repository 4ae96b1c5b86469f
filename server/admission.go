package server

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"sync"

	"github.com/pyric/pyric/internal/memlimit"
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
// (memlimit.Reserve) per byte it has read, a step of reserveStep bytes
// ahead (within its declared length), for as long as it holds its slot: a body refused at a handler's
// limit (a 30 MB Messaging send read to its 1 MB) reserves for what was
// read, not for what it declared.
const (
	heavyExpansion = 32
	reserveStep    = 1 << 20
)

// heavyWork admits heavy requests, at most one fewer than the process's
// processors at a time (at least one), process-wide since the processors
// are: the others queue, in arrival order of their first body read, for as
// long as their client waits, instead of being refused. Without it four
// concurrent heavy requests on two cores kept every processor busy and
// the collector's assists on them, and a light read waited its turn
// behind them (#34: a light read's p99 went from 3 ms quiet to 60 ms).
var heavyWork = newGate(max(1, runtime.GOMAXPROCS(0)-1))

// gate is a counting semaphore.
type gate struct{ slots chan struct{} }

func newGate(n int) *gate { return &gate{slots: make(chan struct{}, n)} }

// admission is one request's place at the heavy-work gate. Its slot is
// taken on the first body read once the request is known to be heavy (its
// declared length, or the bytes read so far, pass HeavyBodyBytes), so a
// request refused before its body is read (a write the rules deny) never
// queues; it is given back when the handler returns, or when the handler
// says it streams its body (Streams).
type admission struct {
	gate     *gate
	ctx      context.Context
	declared bool  // Content-Length past HeavyBodyBytes
	length   int64 // Content-Length, -1 when unknown

	mu         sync.Mutex
	read       int64
	held       bool
	exempt     bool     // streamed, or the handler returned: never (again) take a slot
	reservedTo int64    // body bytes the reservations cover
	unreserve  []func() // the reservations' releases
}

type admissionKey struct{}

// admit wraps r's body so that reading a heavy one waits for a slot of g;
// done gives the slot back. Requests that cannot become heavy — no body,
// or a declared length within HeavyBodyBytes, past which net/http reads
// nothing — are left as they are: the gate costs the light requests
// nothing.
func admit(g *gate, r *http.Request) (_ *http.Request, done func()) {
	if r.Body == nil || r.Body == http.NoBody || (r.ContentLength >= 0 && r.ContentLength <= HeavyBodyBytes) {
		return r, func() {}
	}
	a := &admission{gate: g, ctx: r.Context(), declared: r.ContentLength > HeavyBodyBytes, length: r.ContentLength}
	r = r.WithContext(context.WithValue(r.Context(), admissionKey{}, a))
	r.Body = &admittedBody{ReadCloser: r.Body, a: a}
	return r, a.finish
}

// wait takes a slot if the next read of n bytes makes the request heavy;
// it fails when the client gave up while the request queued.
func (a *admission) wait(n int) error {
	a.mu.Lock()
	need := !a.held && !a.exempt && (a.declared || a.read+int64(n) > HeavyBodyBytes)
	a.mu.Unlock()
	if !need {
		return nil
	}
	select {
	case a.gate.slots <- struct{}{}:
	case <-a.ctx.Done():
		return a.ctx.Err()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.exempt || a.held { // finished or streamed meanwhile
		<-a.gate.slots
		return nil
	}
	a.held = true
	a.reserve()
	return nil
}

// reserve covers the bytes read so far and the next reserveStep (no more
// than a declared length) with memory headroom; a.mu is held.
func (a *admission) reserve() {
	if !a.held || (a.read < a.reservedTo) {
		return
	}
	to := a.read + reserveStep
	if a.length > 0 {
		to = max(min(to, a.length), a.read)
	}
	if to <= a.reservedTo {
		return
	}
	a.unreserve = append(a.unreserve, memlimit.Reserve(heavyExpansion*(to-a.reservedTo)))
	a.reservedTo = to
}

// finish gives the slot back for good.
func (a *admission) finish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.exempt = true
	if a.held {
		a.held = false
		for _, release := range a.unreserve {
			release()
		}
		a.unreserve = nil
		<-a.gate.slots
	}
}

type admittedBody struct {
	io.ReadCloser
	a *admission
}

func (b *admittedBody) Read(p []byte) (int, error) {
	if err := b.a.wait(len(p)); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	b.a.mu.Lock()
	b.a.read += int64(n)
	b.a.reserve()
	b.a.mu.Unlock()
	return n, err
}

// Streams tells the heavy-work gate that the request of ctx streams its
// body to disk as it arrives, holding a buffer's worth at a time (a
// Storage upload): it costs the network's pace, not a burst of CPU and
// memory, so it neither queues nor keeps a queued heavy request (a
// Firestore write decoding its list) waiting for as long as a slow client
// sends gigabytes.
func Streams(ctx context.Context) {
	if a, ok := ctx.Value(admissionKey{}).(*admission); ok {
		a.finish()
	}
}
