package studio_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/pyric/pyric/sandbox"
)

// BenchmarkEventsPage: one filtered page (100 denials) out of a 10k-event
// history.
func BenchmarkEventsPage(b *testing.B) {
	e := start(b, sandbox.Options{})
	emit(e.b.Sandbox, 10000, "firestore")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := http.Get(e.srv.URL + "/api/events?verdict=deny&uid=u1&limit=100")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
}

// BenchmarkEmitWithSubscribers: the engine-side cost of an event with 8
// SSE subscribers attached.
func BenchmarkEmitWithSubscribers(b *testing.B) {
	e := start(b, sandbox.Options{})
	for i := 0; i < 8; i++ {
		r, err := http.Get(e.srv.URL + "/api/events/stream")
		if err != nil {
			b.Fatal(err)
		}
		defer r.Body.Close()
		go io.Copy(io.Discard, r.Body)
	}
	b.ResetTimer()
	emit(e.b.Sandbox, b.N, "firestore")
}
