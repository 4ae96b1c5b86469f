package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/memlimit"
	"github.com/pyric/pyric/internal/priority"
)

// gated serves h behind admit(g, …) as Guard does.
func gated(g *gate, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, a := admit(g, r)
		serve(a, h, w, r)
	}
}

// waitQueued waits until n requests queue at g (a test hangs, and fails at
// its deadline, if they never do).
func waitQueued(t *testing.T, g *gate, n int64) {
	t.Helper()
	for g.waiting.Load() != n {
		time.Sleep(time.Millisecond)
	}
}

func heavyRequest(ctx context.Context) *http.Request {
	return httptest.NewRequestWithContext(ctx, "POST", "/", bytes.NewReader(make([]byte, HeavyBodyBytes+1)))
}

// TestHeavyBodiesQueueAtTheGate: with one slot, a second heavy request's
// body read waits until the first request's handler returned, then runs;
// a light request and a heavy one refused before its body is read pass
// meanwhile.
func TestHeavyBodiesQueueAtTheGate(t *testing.T) {
	g := newGate(1, BodyBudget)
	release := make(chan struct{})
	firstRead := make(chan struct{})
	var reservedWhileHeld int64
	first := gated(g, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		reservedWhileHeld = memlimit.Reserved()
		close(firstRead)
		<-release
	})
	go first(httptest.NewRecorder(), heavyRequest(context.Background()))
	<-firstRead

	secondRead := make(chan int, 1)
	second := gated(g, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		secondRead <- len(b)
	})
	go second(httptest.NewRecorder(), heavyRequest(context.Background()))

	light := make(chan int, 1)
	gated(g, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		light <- len(b)
	})(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(`{"fields":{}}`)))
	if n := <-light; n != len(`{"fields":{}}`) {
		t.Fatalf("light request read %d bytes", n)
	}
	refused := false
	gated(g, func(w http.ResponseWriter, r *http.Request) { refused = true })(httptest.NewRecorder(), heavyRequest(context.Background()))
	if !refused {
		t.Fatal("a heavy request that never reads its body did not run while the slot was taken")
	}

	waitQueued(t, g, 1)
	select {
	case n := <-secondRead:
		t.Fatalf("the second heavy request read %d bytes while the first held the only slot", n)
	default:
	}
	close(release)
	select {
	case n := <-secondRead:
		if n != HeavyBodyBytes+1 {
			t.Fatalf("second request read %d bytes, want %d", n, HeavyBodyBytes+1)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second heavy request still waits after the first returned")
	}
	// The admitted request held memory headroom for what it read.
	if reservedWhileHeld < heavyExpansion*(HeavyBodyBytes+1) {
		t.Errorf("%d bytes reserved while a %d-byte body was held, want at least %d×", reservedWhileHeld, HeavyBodyBytes+1, heavyExpansion)
	}
}

// TestAdmittedRequestGivesItsReservationBack: once every heavy handler
// returned, nothing stays reserved in the memory policy.
func TestAdmittedRequestGivesItsReservationBack(t *testing.T) {
	g := newGate(1, BodyBudget)
	r := httptest.NewRequest("POST", "/", bytes.NewReader(make([]byte, 5*HeavyBodyBytes)))
	gated(g, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if memlimit.Reserved() < heavyExpansion*5*HeavyBodyBytes {
			t.Errorf("%d bytes reserved after reading %d", memlimit.Reserved(), 5*HeavyBodyBytes)
		}
	})(httptest.NewRecorder(), r)
	if n := memlimit.Reserved(); n != 0 {
		t.Errorf("%d bytes still reserved after the handler returned", n)
	}
}

// TestUndeclaredHeavyBodyTakesASlotPastTheSize: a body of unknown length
// is read whole freely (it is not known to be
// heavy before), then its last read waits for a slot.
func TestUndeclaredHeavyBodyTakesASlotPastTheSize(t *testing.T) {
	g := newGate(1, BodyBudget)
	g.slots <- struct{}{} // taken by someone else
	r := httptest.NewRequest("POST", "/", io.MultiReader(bytes.NewReader(make([]byte, 2*HeavyBodyBytes))))
	r.ContentLength = -1
	got := make(chan int64, 1)
	returned := make(chan struct{})
	go func() {
		gated(g, func(w http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			got <- n
		})(httptest.NewRecorder(), r)
		close(returned)
	}()
	waitQueued(t, g, 1)
	select {
	case n := <-got:
		t.Fatalf("read %d bytes of an undeclared heavy body without a slot", n)
	default:
	}
	<-g.slots
	if n := <-got; n != 2*HeavyBodyBytes {
		t.Fatalf("read %d bytes, want %d", n, 2*HeavyBodyBytes)
	}
	<-returned
	if len(g.slots) != 0 {
		t.Fatal("the slot was not given back when the handler returned")
	}
}

// TestQueuedHeavyRequestGivesUpWithItsClient: a request queued at the gate
// whose client went away fails its read with the context's error and
// takes no slot.
func TestQueuedHeavyRequestGivesUpWithItsClient(t *testing.T) {
	g := newGate(1, BodyBudget)
	g.slots <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go gated(g, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		errc <- err
	})(httptest.NewRecorder(), heavyRequest(ctx))
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("read error %v, want context.Canceled", err)
	}
	if len(g.slots) != 1 {
		t.Fatalf("%d slots taken, want the other request's 1", len(g.slots))
	}
}

// TestStreamedBodyDoesNotQueue: a handler that streams its body (Streams)
// reads a heavy body while every slot is taken, and gives back the budget
// its reads took.
func TestStreamedBodyDoesNotQueue(t *testing.T) {
	g := newGate(1, BodyBudget)
	g.slots <- struct{}{}
	got := make(chan int, 1)
	go gated(g, func(w http.ResponseWriter, r *http.Request) {
		Streams(r.Context())
		b, _ := io.ReadAll(r.Body)
		got <- len(b)
	})(httptest.NewRecorder(), heavyRequest(context.Background()))
	select {
	case n := <-got:
		if n != HeavyBodyBytes+1 {
			t.Fatalf("read %d bytes", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a streamed body waited for a slot")
	}
	<-g.slots

	held := make(chan struct{})
	gated(g, func(w http.ResponseWriter, r *http.Request) {
		var one [1]byte
		r.Body.Read(one[:])
		if g.bodies.Used() == 0 {
			t.Error("a heavy body's first read charged nothing to the budget")
		}
		Streams(r.Context())
		if g.bodies.Used() != 0 {
			t.Errorf("Streams kept %d bytes of the budget", g.bodies.Used())
		}
		io.Copy(io.Discard, r.Body)
		if len(g.slots) != 0 || g.bodies.Used() != 0 {
			t.Error("a streamed body took a slot or the budget")
		}
		close(held)
	})(httptest.NewRecorder(), heavyRequest(context.Background()))
	<-held
}

// TestSlowSenderHoldsNoSlot: a client trickling a 2 MiB body holds no
// slot while it sends: with one slot, another heavy request is admitted
// (and runs to its end) while the slow one is still sending; the slow one
// is admitted once its body is read, after the other's slot came back.
func TestSlowSenderHoldsNoSlot(t *testing.T) {
	g := newGate(1, BodyBudget)
	const size = 2 << 20
	pr, pw := io.Pipe()
	slow := httptest.NewRequest("POST", "/", pr)
	slow.ContentLength = size
	var mu sync.Mutex
	var order []string
	admitted := func(name string) {
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
	}
	slowDone := make(chan struct{})
	go func() {
		gated(g, func(w http.ResponseWriter, r *http.Request) {
			if n, _ := io.Copy(io.Discard, r.Body); n == size && len(g.slots) == 1 {
				admitted("slow")
			}
		})(httptest.NewRecorder(), slow)
		close(slowDone)
	}()
	// Past HeavyBodyBytes sent (io.Pipe's Write returns once read), and
	// still sending.
	if _, err := pw.Write(make([]byte, HeavyBodyBytes+1)); err != nil {
		t.Fatal(err)
	}
	if len(g.slots) != 0 {
		t.Fatal("a heavy body still being sent holds a slot")
	}
	gated(g, func(w http.ResponseWriter, r *http.Request) {
		if n, _ := io.Copy(io.Discard, r.Body); n == HeavyBodyBytes+1 && len(g.slots) == 1 {
			admitted("fast")
		}
	})(httptest.NewRecorder(), heavyRequest(context.Background()))
	if _, err := pw.Write(make([]byte, size-(HeavyBodyBytes+1))); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	<-slowDone
	if got := strings.Join(order, ","); got != "fast,slow" {
		t.Fatalf("admitted %q, want the fast request while the slow one was sending, then the slow one (fast,slow)", got)
	}
	if len(g.slots) != 0 || g.bodies.Used() != 0 {
		t.Fatalf("%d slots and %d budget bytes still taken", len(g.slots), g.bodies.Used())
	}
}

// TestBodyBudgetRefusesPastIt: a heavy body that would pass the in-flight
// byte budget is answered 503 with Retry-After and the gate's message,
// whatever its handler made of the failed read, while a body within it
// is read; the budget comes back when the requests end.
func TestBodyBudgetRefusesPastIt(t *testing.T) {
	g := newGate(1, 3<<20)
	pr, pw := io.Pipe()
	holder := httptest.NewRequest("POST", "/", pr)
	holder.ContentLength = 2 << 20
	holderDone := make(chan struct{})
	go func() {
		gated(g, func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })(httptest.NewRecorder(), holder)
		close(holderDone)
	}()
	pw.Write(make([]byte, 1)) // the holder's first read charged its body

	rec := httptest.NewRecorder()
	big := httptest.NewRequest("POST", "/", bytes.NewReader(make([]byte, 2<<20)))
	var readErr error
	gated(g, func(w http.ResponseWriter, r *http.Request) {
		_, readErr = io.ReadAll(r.Body)
		http.Error(w, "could not read the body", http.StatusBadRequest) // what a handler says
	})(rec, big)
	var budgetErr *BodyBudgetError
	if !errors.As(readErr, &budgetErr) {
		t.Fatalf("read error %v, want a BodyBudgetError", readErr)
	}
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "too many large request bodies in flight") || strings.Contains(rec.Body.String(), "could not read") {
		t.Fatalf("answer %d %q (Retry-After %q), want the gate's 503", rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"))
	}

	// A handler that writes nothing after the failed read: the gate answers.
	rec = httptest.NewRecorder()
	gated(g, func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body) })(rec, httptest.NewRequest("POST", "/", bytes.NewReader(make([]byte, 2<<20))))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("answer %d, want 503", rec.Code)
	}

	pw.Write(make([]byte, 2<<20-1))
	pw.Close()
	<-holderDone
	if g.bodies.Used() != 0 {
		t.Fatalf("%d budget bytes still taken", g.bodies.Used())
	}
	rec = httptest.NewRecorder()
	gated(g, func(w http.ResponseWriter, r *http.Request) {
		if b, err := io.ReadAll(r.Body); err != nil || len(b) != 2<<20 {
			t.Errorf("read %d bytes, %v", len(b), err)
		}
	})(rec, httptest.NewRequest("POST", "/", bytes.NewReader(make([]byte, 2<<20))))
	if rec.Code != http.StatusOK {
		t.Fatalf("a body within the budget answered %d", rec.Code)
	}
}

// TestAdmittedWorkRunsOnALoweredThread: an admitted heavy request's
// handler runs on a thread of priority.Lowered, and the next request on the same
// keep-alive connection runs at the process's priority (the lowered
// thread is not reused).
func TestAdmittedWorkRunsOnALoweredThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread priorities are Linux's")
	}
	base := priority.ThreadNice()
	var mu sync.Mutex
	var nices []int
	srv := httptest.NewServer(Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		nices = append(nices, priority.ThreadNice())
		mu.Unlock()
	}), nil))
	defer srv.Close()
	c := srv.Client()
	for _, size := range []int{HeavyBodyBytes + 1, 10, HeavyBodyBytes + 1, 0} {
		resp, err := c.Post(srv.URL, "application/octet-stream", bytes.NewReader(make([]byte, size)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	want := []int{priority.Lowered, base, priority.Lowered, base}
	if fmt.Sprint(nices) != fmt.Sprint(want) {
		t.Fatalf("handlers ran at nice %v, want %v (heavy, light, heavy, light)", nices, want)
	}
	// The lowered threads are discarded, and no thread was cloned from
	// one (a new thread inherits its creator's nice): the test hangs, and
	// fails at its deadline, if one stays. The main thread is the
	// exception: the runtime cannot end it, so when heavy work happened to
	// run on it, it parks it for good instead (it runs nothing again).
	for priority.LoweredThreads() != 0 {
		time.Sleep(time.Millisecond)
	}
}

// streamer is a BodyStreamer that reports what its requests saw.
type streamer struct {
	got func(r *http.Request, n int)
}

func (s streamer) StreamsBodies() {}
func (s streamer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.got(r, len(b))
}

// TestBodyStreamerBypassesTheGate: Guard serves a BodyStreamer's heavy
// body of undeclared length (as the GCS Go client sends uploads) while
// every slot of the process's gate is taken, charges none of it to the
// budget, and gives the request no admission; a handler that is no
// BodyStreamer, served the same body, is admitted.
func TestBodyStreamerBypassesTheGate(t *testing.T) {
	for range cap(heavyWork.slots) {
		heavyWork.slots <- struct{}{}
	}
	defer func() {
		for range cap(heavyWork.slots) {
			<-heavyWork.slots
		}
	}()
	undeclared := func() *http.Request {
		r := heavyRequest(context.Background())
		r.ContentLength = -1
		r.Host = "127.0.0.1"
		return r
	}
	done := make(chan int, 1)
	h := Guard(streamer{got: func(r *http.Request, n int) {
		if r.Context().Value(admissionKey{}) != nil {
			t.Error("a BodyStreamer's request was given an admission")
		}
		if used := heavyWork.bodies.Used(); used != 0 {
			t.Errorf("a BodyStreamer's body took %d bytes of the budget", used)
		}
		done <- n
	}}, nil)
	go h.ServeHTTP(httptest.NewRecorder(), undeclared())
	select {
	case n := <-done:
		if n != HeavyBodyBytes+1 {
			t.Fatalf("read %d bytes", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a BodyStreamer's heavy body waited for a slot")
	}

	admitted := make(chan bool, 1)
	plain := Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		admitted <- r.Context().Value(admissionKey{}) != nil
	}), nil)
	plain.ServeHTTP(httptest.NewRecorder(), undeclared())
	if !<-admitted {
		t.Fatal("a plain handler's body of undeclared length was not admitted")
	}
}
