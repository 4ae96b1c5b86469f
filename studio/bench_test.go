package studio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/pyric/pyric/internal/testfs"
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

// BenchmarkDocumentsPage100k: one page (300) of the Studio's document
// list in the middle of a 100k-document collection, as the virtual list
// asks for it while scrolling.
func BenchmarkDocumentsPage100k(b *testing.B) {
	e := start(b, sandbox.Options{})
	fs := testfs.Of(e.b.Sandbox).Admin()
	for i := 0; i < 100000; i++ {
		if err := fs.SetDocument(context.Background(), fmt.Sprintf("big/d%06d", i), map[string]any{"n": i}); err != nil {
			b.Fatal(err)
		}
	}
	var p struct{ NextPageToken string }
	for i := 0; i < 20; i++ { // page 20: 6k documents in
		r, err := http.Get(e.srv.URL + "/api/firestore/documents?collection=big&pageSize=300&pageToken=" + url.QueryEscape(p.NextPageToken))
		if err != nil {
			b.Fatal(err)
		}
		if i < 19 {
			p.NextPageToken = ""
			json.NewDecoder(r.Body).Decode(&p)
		}
		r.Body.Close()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := http.Get(e.srv.URL + "/api/firestore/documents?collection=big&pageSize=300&pageToken=" + url.QueryEscape(p.NextPageToken))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
}

// BenchmarkDatabaseTree100k: one page (50 children, after a key in the
// middle) of a Realtime Database node with 100k children.
func BenchmarkDatabaseTree100k(b *testing.B) {
	e := startAll(b)
	big := make(map[string]any, 100000)
	for i := 0; i < 100000; i++ {
		big[fmt.Sprintf("k%06d", i)] = map[string]any{"n": i}
	}
	body, _ := json.Marshal(big)
	req, _ := http.NewRequest("PUT", e.srv.URL+"/api/database/value?path=big", bytes.NewReader(body))
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		b.Fatalf("seed: %v %v", err, r)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := http.Get(e.srv.URL + "/api/database/tree?path=big&limit=50&after=k050000")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
}
