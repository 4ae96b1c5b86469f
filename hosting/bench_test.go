package hosting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/hosting"
)

// benchProject writes a one-site project: a small page and a 32 MiB file.
func benchProject(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	pub := filepath.Join(dir, "public")
	if err := os.MkdirAll(pub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pub, "index.html"), []byte("<!doctype html><title>app</title><div id=root></div><script src=/app.js></script>\n"), 0o644)
	big := make([]byte, 32<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	os.WriteFile(filepath.Join(pub, "big.bin"), big, 0o644)
	os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"hosting": {"site": "bench", "public": "public",
		"headers": [{"source": "**/*.@(js|css)", "headers": [{"key": "Cache-Control", "value": "max-age=3600"}]}],
		"rewrites": [{"source": "**", "destination": "/index.html"}]}}`), 0o644)
	return dir
}

// load runs workers GET loops on url for d and returns requests/s and
// bytes/s.
func load(t testing.TB, url string, workers int, d time.Duration) (float64, float64) {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var n, bytes atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20) // large reads: the client should cost little
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				r, err := c.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Store(err.Error())
					}
					return
				}
				m, _ := io.CopyBuffer(discard{}, r.Body, buf)
				r.Body.Close()
				if ctx.Err() != nil {
					return
				}
				if r.StatusCode != 200 {
					failed.Store(fmt.Sprintf("status %d", r.StatusCode))
					return
				}
				n.Add(1)
				bytes.Add(m)
			}
		}()
	}
	wg.Wait()
	if v := failed.Load(); v != nil {
		t.Fatalf("%s: %v", url, v)
	}
	el := time.Since(start).Seconds()
	return float64(n.Load()) / el, float64(bytes.Load()) / el
}

// discard is io.Discard without ReadFrom, so CopyBuffer uses its buffer.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestBenchmarkVersusEmulator (PYRIC_BENCH=1) measures static serving by
// pyric's Hosting and by firebase-tools' Hosting emulator in the same run
// and prints the ratios (the load generator runs in this process):
// small files (requests/s, 8 connections), a
// rewrite to index.html, and a 32 MiB file (throughput, 2 connections).
func TestBenchmarkVersusEmulator(t *testing.T) {
	if os.Getenv("PYRIC_BENCH") != "1" {
		t.Skip("set PYRIC_BENCH=1 to run the benchmark against the Hosting emulator")
	}
	dir := benchProject(t)
	oracle := startEmulator(t, dir, 1)["bench"]
	b, _ := os.ReadFile(filepath.Join(dir, "firebase.json"))
	var fj struct{ Hosting json.RawMessage }
	json.Unmarshal(b, &fj)
	cfgs, err := hosting.ParseConfig(fj.Hosting, dir, "demo-x")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hosting.New(cfgs, hosting.Options{Project: "demo-x"}).Sites()[0])
	defer srv.Close()
	// Rounds alternate between the two servers and the best of each is
	// kept, so a burst of load from elsewhere on the machine hits both.
	const d, rounds = 1500 * time.Millisecond, 3
	for _, tc := range []struct {
		name    string
		path    string
		workers int
		bytes   bool
	}{
		{"small file", "/index.html", 8, false},
		{"rewrite to index.html", "/some/route", 8, false},
		{"32 MiB file", "/big.bin", 2, true},
	} {
		load(t, srv.URL+tc.path, tc.workers, 300*time.Millisecond) // warm up
		load(t, oracle+tc.path, tc.workers, 300*time.Millisecond)
		var pr, pb, er, eb float64
		for i := 0; i < rounds; i++ {
			r, b := load(t, srv.URL+tc.path, tc.workers, d)
			pr, pb = max(pr, r), max(pb, b)
			r, b = load(t, oracle+tc.path, tc.workers, d)
			er, eb = max(er, r), max(eb, b)
		}
		if tc.bytes {
			t.Logf("%-22s pyric %8.1f MiB/s   emulator %8.1f MiB/s   ratio %.1fx", tc.name, pb/(1<<20), eb/(1<<20), pb/eb)
		} else {
			t.Logf("%-22s pyric %8.0f req/s   emulator %8.0f req/s   ratio %.1fx", tc.name, pr, er, pr/er)
		}
	}
}

// BenchmarkServeSmall times one small file through a site's handler.
func BenchmarkServeSmall(b *testing.B) {
	dir := benchProject(b)
	eng := loadEngine(b, dir, hosting.Options{})
	s := eng.Sites()[0]
	req := httptest.NewRequest("GET", "/index.html", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
