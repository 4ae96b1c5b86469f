package storageserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	engine "github.com/pyric/pyric/storage"
)

type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > z.n {
		p = p[:z.n]
	}
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

const big = 64 << 20

func benchServer(b *testing.B, disk bool) (*engine.Engine, string) {
	env := service.Env{Project: "demo-pyric"}
	if disk {
		env.DataDir = b.TempDir()
	}
	e, err := engine.New(env, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(NewHandler(e))
	b.Cleanup(ts.Close)
	return e, ts.URL
}

// BenchmarkHTTPUpload64MiB streams a 64 MiB media upload through the GCS
// upload endpoint to disk; heap-MiB is the heap in use afterwards (flat:
// nothing holds the bytes).
func BenchmarkHTTPUpload64MiB(b *testing.B) {
	_, url := benchServer(b, true)
	b.SetBytes(big)
	for b.Loop() {
		req, _ := http.NewRequest("POST", url+"/upload/storage/v1/b/"+bkt+"/o?uploadType=media&name=big", &zeroReader{big})
		req.ContentLength = big
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%v %v", err, res)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-MiB")
}

// BenchmarkHTTPDownload64MiB reads it back over the XML API.
func BenchmarkHTTPDownload64MiB(b *testing.B) {
	e, url := benchServer(b, true)
	if _, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "big", Body: &zeroReader{big}}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(big)
	for b.Loop() {
		res, err := http.Get(url + "/" + bkt + "/big")
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%v %v", err, res)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// BenchmarkHTTPSmallMultipart is one JS-SDK-shaped 1 KiB multipart upload
// (in memory, rules bypassed by the owner token).
func BenchmarkHTTPSmallMultipart(b *testing.B) {
	_, url := benchServer(b, false)
	body, ct := multipartBody(`{"name":"s","contentType":"text/plain"}`, "text/plain", strings.Repeat("x", 1024))
	for b.Loop() {
		req, _ := http.NewRequest("POST", url+"/v0/b/"+bkt+"/o?name=small", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("X-Goog-Upload-Protocol", "multipart")
		req.Header.Set("Authorization", "Firebase owner")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%v %v", err, res)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// BenchmarkEncodeObjects100 encodes a listing's 100 object resources.
func BenchmarkEncodeObjects100(b *testing.B) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 123456789, time.UTC)
	objs := make([]*engine.Object, 100)
	for i := range objs {
		objs[i] = &engine.Object{Bucket: "bench-x1y2z3", Name: fmt.Sprintf("list/%03d", i), Generation: 1796119200002000 + int64(i), Metageneration: 1,
			Size: 16, ContentType: "application/octet-stream", MD5Hash: "1B2M2Y8AsgTpgAmY7PhCfg==", CRC32C: "AAAAAA==", TimeCreated: at, Updated: at}
	}
	buf := make([]byte, 0, 128<<10)
	for b.Loop() {
		buf = buf[:0]
		for _, o := range objs {
			buf = appendGCSObject(buf, "http://127.0.0.1:9199", o)
		}
	}
}

// BenchmarkSmallDownloadServed is the handler's own work for one 1 KiB
// download over the XML API, events on (a bus, as pyric serve has),
// without a network: what a small download costs the server above
// net/http.
func BenchmarkSmallDownloadServed(b *testing.B) {
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: b.TempDir(), Events: event.NewBus(event.Options{})}, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "small/000001", Body: strings.NewReader(strings.Repeat("s", 1024))}); err != nil {
		b.Fatal(err)
	}
	h := NewHandler(e)
	req := httptest.NewRequest("GET", "/"+bkt+"/small/000001", nil)
	w := &discardResponse{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// discardResponse is a ResponseWriter that keeps only its header map.
type discardResponse struct{ h http.Header }

func (w *discardResponse) Header() http.Header         { return w.h }
func (w *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardResponse) WriteHeader(int)             {}

// BenchmarkSmallUploadServed is the handler's own work for one 1 KiB
// multipart upload over the GCS JSON API (the Go client's), events on,
// on disk, without a network.
func BenchmarkSmallUploadServed(b *testing.B) {
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: b.TempDir(), Events: event.NewBus(event.Options{})}, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := NewHandler(e)
	body, ct := multipartBody(`{"bucket":"`+bkt+`","name":"small/000001"}`, "application/octet-stream", strings.Repeat("s", 1024))
	w := &discardResponse{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		req := httptest.NewRequest("POST", "/upload/storage/v1/b/"+bkt+"/o?alt=json&name=small%2F000001&prettyPrint=false&projection=full&uploadType=multipart", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		h.ServeHTTP(w, req)
	}
}
