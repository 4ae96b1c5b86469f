package server

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// discardWriter is a ResponseWriter that keeps only its header map.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkGuard measures what Guard adds to a request that passes it, as
// net/http hands it over (Host and local address of a loopback port):
// one from a Node or Go client (no Origin), and one from a web page on a
// loopback dev server, whose answer carries the CORS headers.
func BenchmarkGuard(b *testing.B) {
	var pol atomic.Pointer[Policy]
	h := Guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), &pol)
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9099})
	for _, origin := range []string{"", "http://localhost:5173"} {
		name := "no-origin"
		if origin != "" {
			name = "loopback-origin"
		}
		b.Run(name, func(b *testing.B) {
			r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:9099/x", http.NoBody)
			if origin != "" {
				r.Header.Set("Origin", origin)
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, r)
			}
		})
	}
}
