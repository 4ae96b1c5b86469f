package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/memlimit"
)

// gated serves h behind admit(g, …) as Guard does.
func gated(g *gate, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, done := admit(g, r)
		defer done()
		h(w, r)
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
	g := newGate(1)
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

	select {
	case n := <-secondRead:
		t.Fatalf("the second heavy request read %d bytes while the first held the only slot", n)
	case <-time.After(50 * time.Millisecond):
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
	g := newGate(1)
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
// reads its first HeavyBodyBytes freely, then waits for a slot.
func TestUndeclaredHeavyBodyTakesASlotPastTheSize(t *testing.T) {
	g := newGate(1)
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
	select {
	case n := <-got:
		t.Fatalf("read %d bytes of an undeclared heavy body without a slot", n)
	case <-time.After(50 * time.Millisecond):
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
	g := newGate(1)
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
// reads a heavy body while every slot is taken, and gives back a slot it
// held.
func TestStreamedBodyDoesNotQueue(t *testing.T) {
	g := newGate(1)
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
		if len(g.slots) != 1 {
			t.Error("a heavy body read without a slot")
		}
		Streams(r.Context())
		if len(g.slots) != 0 {
			t.Error("Streams kept the slot")
		}
		close(held)
	})(httptest.NewRecorder(), heavyRequest(context.Background()))
	<-held
}
