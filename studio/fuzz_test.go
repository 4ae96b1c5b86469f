package studio

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/server"
)

// FuzzParseSeq: event ids from URLs and Last-Event-ID never panic, and
// valid ones round-trip.
func FuzzParseSeq(f *testing.F) {
	for _, s := range []string{"", "evt-1", "12", "evt-", "evt-x", "-1", "evt-18446744073709551616", "evt-007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSeq(s)
		if err == nil && n > 0 && !strings.HasSuffix(s, "0") && strings.TrimLeft(strings.TrimPrefix(s, "evt-"), "0") == "" {
			t.Fatalf("%q parsed as %d", s, n)
		}
	})
}

// FuzzFilterAndGuard: query strings and Host/Origin headers never panic.
func FuzzFilterAndGuard(f *testing.F) {
	f.Add("service=firestore&verdict=deny", "localhost:4000", "http://localhost:4000")
	f.Add("studio=maybe", "[::1]:4000", "null")
	f.Add("%zz", "evil.example", "http://[::1")
	f.Fuzz(func(t *testing.T, q, host, origin string) {
		r := httptest.NewRequest("GET", "/api/events", nil)
		r.URL.RawQuery = q
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		_, _ = parseFilter(r)
		if msg := checkOrigin(nil, r); msg == "" && host != "" && !server.LoopbackHost(host) {
			t.Fatalf("host %q accepted", host)
		}
	})
}
