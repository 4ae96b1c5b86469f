package storageserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/sandbox"
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
			buf = appendGCSObject(buf, origin{"http://", "127.0.0.1:9199"}, o)
		}
	}
}

// BenchmarkSmallDownloadServed is the handler's own work for one 1 KiB
// download over the XML API, events on (a bus, as pyric serve has),
// without a network: what a small download costs the server above
// net/http.
func BenchmarkSmallDownloadServed(b *testing.B) {
	serveSmallObject(b, "/"+bkt+"/small/000001")
}

// BenchmarkMetadataServed is the handler's own work for one metadata
// read over the GCS JSON API (the Go client's Attrs, the storage
// benchmark's metadata row), events on, without a network.
func BenchmarkMetadataServed(b *testing.B) {
	serveSmallObject(b, "/storage/v1/b/"+bkt+"/o/small%2F000001?alt=json&prettyPrint=false&projection=full")
}

// serveSmallObject measures the handler answering GET target, events on
// (a bus, as pyric serve has), with one 1 KiB object stored.
func serveSmallObject(b *testing.B, target string) {
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: b.TempDir(), Events: event.NewBus(event.Options{})}, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "small/000001", Body: strings.NewReader(strings.Repeat("s", 1024))}); err != nil {
		b.Fatal(err)
	}
	h := NewHandler(e)
	req := httptest.NewRequest("GET", target, nil)
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

// durableEngine is an engine as pyric serve runs it: the store's
// write-ahead log, an event bus with a subscriber (the request log and
// session capture subscribe). walWrites reports the store's log writes.
func durableEngine(b *testing.B) *engine.Engine {
	b.Helper()
	st, err := sandbox.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	bus := event.NewBus(event.Options{})
	sub := bus.Subscribe(1 << 14)
	go func() {
		for range sub.Events() {
		}
	}()
	b.Cleanup(sub.Close)
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: b.TempDir(), Events: bus, Bucket: st.Bucket(engine.Service), Log: st.Log(engine.Service)}, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

// BenchmarkSmallUploadDurable is BenchmarkSmallUploadServed against a
// durable engine (durableEngine); Parallel64 is 64 clients at once, each
// writing its own objects (the storage benchmark's 64-clients row).
func BenchmarkSmallUploadDurable(b *testing.B) {
	type upload struct{ body, ct string }
	uploadOf := func(name string) upload {
		body, ct := multipartBody(`{"bucket":"`+bkt+`","name":"`+name+`"}`, "application/octet-stream", strings.Repeat("s", 1024))
		return upload{body, ct}
	}
	send := func(h http.Handler, w *discardResponse, u upload) {
		body, ct := u.body, u.ct
		clear(w.h)
		req := httptest.NewRequest("POST", "/upload/storage/v1/b/"+bkt+"/o?alt=json&prettyPrint=false&projection=full&uploadType=multipart", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		h.ServeHTTP(w, req)
	}
	b.Run("Serial", func(b *testing.B) {
		h := NewHandler(durableEngine(b))
		w := &discardResponse{h: http.Header{}}
		b.ReportAllocs()
		u := uploadOf("small/000001")
		pw, ps, pc, ok := procCounts()
		for b.Loop() {
			send(h, w, u)
		}
		reportProcCounts(b, pw, ps, pc, ok)
	})
	b.Run("Parallel64", func(b *testing.B) {
		h := NewHandler(durableEngine(b))
		b.ReportAllocs()
		b.SetParallelism(64 / runtime.GOMAXPROCS(0))
		var next atomic.Int64
		pw, ps, pc, ok := procCounts()
		defer func() { reportProcCounts(b, pw, ps, pc, ok) }()
		b.RunParallel(func(pb *testing.PB) {
			w := &discardResponse{h: http.Header{}}
			u := uploadOf(fmt.Sprintf("small/%06d", next.Add(1)))
			for pb.Next() {
				send(h, w, u)
			}
		})
	})
}

// procCounts is the process's write system calls (/proc/self/io syscw)
// and its threads' context switches (voluntary and not, summed over
// /proc/self/task), where /proc has them: load-independent figures of a
// request's cost beside its allocations.
func procCounts() (writes, switches int64, cpu time.Duration, ok bool) {
	cpu = benchkit.SelfCPU()
	io, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0, cpu, false
	}
	writes = procField(string(io), "syscw:")
	switches = benchkit.ContextSwitches(0)
	return writes, switches, cpu, true
}

func procField(s, name string) int64 {
	var n int64
	for line := range strings.Lines(s) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			n += v
		}
	}
	return n
}

// reportProcCounts reports writes/op, switches/op and the process's
// CPU time per op (cpu-µs/op) of the loop that ran since before
// (procCounts).
func reportProcCounts(b *testing.B, beforeW, beforeS int64, beforeCPU time.Duration, ok bool) {
	w, s, cpu, ok2 := procCounts()
	if b.N > 0 {
		b.ReportMetric(float64((cpu-beforeCPU).Microseconds())/float64(b.N), "cpu-µs/op")
	}
	if ok && ok2 && b.N > 0 {
		b.ReportMetric(float64(w-beforeW)/float64(b.N), "writes/op")
		b.ReportMetric(float64(s-beforeS)/float64(b.N), "switches/op")
	}
}

// BenchmarkList100Served is the handler's own work for one listing of
// 100 objects (the storage benchmark's list row: the Go client's
// Objects with a prefix), events on, on disk, without a network.
func BenchmarkList100Served(b *testing.B) {
	e := durableEngine(b)
	for i := range 100 {
		if _, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: fmt.Sprintf("list/%03d", i), Body: strings.NewReader("0123456789abcdef")}); err != nil {
			b.Fatal(err)
		}
	}
	h := NewHandler(e)
	req := httptest.NewRequest("GET", "/storage/v1/b/"+bkt+"/o?alt=json&delimiter=&endOffset=&includeFoldersAsPrefixes=false&includeTrailingDelimiter=false&matchGlob=&pageToken=&prefix=list%2F&prettyPrint=false&projection=full&startOffset=&versions=false", nil)
	w := &discardResponse{h: http.Header{}}
	b.ReportAllocs()
	pw, ps, pc, ok := procCounts()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
	reportProcCounts(b, pw, ps, pc, ok)
}

// BenchmarkMetadataUpdateDurable is a metadata change (the GCS JSON
// API's PATCH, as the Go client's Update sends it) against a durable
// engine (durableEngine): Serial, and Parallel64, 64 clients each
// changing its own object.
func BenchmarkMetadataUpdateDurable(b *testing.B) {
	setup := func(b *testing.B, n int) http.Handler {
		e := durableEngine(b)
		for i := range n {
			if _, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: fmt.Sprintf("small/%06d", i), Body: strings.NewReader("s")}); err != nil {
				b.Fatal(err)
			}
		}
		return NewHandler(e)
	}
	patch := func(h http.Handler, w *discardResponse, i int, typ string) {
		clear(w.h)
		req := httptest.NewRequest("PATCH", fmt.Sprintf("/storage/v1/b/%s/o/small%%2F%06d?alt=json&prettyPrint=false&projection=full", bkt, i),
			strings.NewReader(`{"contentType":"`+typ+`"}`))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(w, req)
	}
	b.Run("Serial", func(b *testing.B) {
		h := setup(b, 1)
		w := &discardResponse{h: http.Header{}}
		b.ReportAllocs()
		pw, ps, pc, ok := procCounts()
		for i := 0; b.Loop(); i++ {
			patch(h, w, 0, [2]string{"text/plain", "text/html"}[i%2])
		}
		reportProcCounts(b, pw, ps, pc, ok)
	})
	b.Run("Parallel64", func(b *testing.B) {
		h := setup(b, 64)
		b.ReportAllocs()
		b.SetParallelism(64 / runtime.GOMAXPROCS(0))
		var next atomic.Int64
		pw, ps, pc, ok := procCounts()
		defer func() { reportProcCounts(b, pw, ps, pc, ok) }()
		b.RunParallel(func(pb *testing.PB) {
			w := &discardResponse{h: http.Header{}}
			obj := int(next.Add(1)-1) % 64
			for i := 0; pb.Next(); i++ {
				patch(h, w, obj, [2]string{"text/plain", "text/html"}[i%2])
			}
		})
	})
}

// BenchmarkPutDeleteDurable is an object's small upload then its delete
// (the Go client's, through the handler) against a durable engine, 64
// clients at once each on its own object: two log records an op.
func BenchmarkPutDeleteDurable(b *testing.B) {
	h := NewHandler(durableEngine(b))
	b.ReportAllocs()
	b.SetParallelism(64 / runtime.GOMAXPROCS(0))
	var next atomic.Int64
	pw, ps, pc, ok := procCounts()
	defer func() { reportProcCounts(b, pw, ps, pc, ok) }()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardResponse{h: http.Header{}}
		name := fmt.Sprintf("small/%06d", next.Add(1))
		body, ct := multipartBody(`{"bucket":"`+bkt+`","name":"`+name+`"}`, "application/octet-stream", strings.Repeat("s", 1024))
		for pb.Next() {
			clear(w.h)
			req := httptest.NewRequest("POST", "/upload/storage/v1/b/"+bkt+"/o?alt=json&prettyPrint=false&projection=full&uploadType=multipart", strings.NewReader(body))
			req.Header.Set("Content-Type", ct)
			h.ServeHTTP(w, req)
			clear(w.h)
			h.ServeHTTP(w, httptest.NewRequest("DELETE", "/storage/v1/b/"+bkt+"/o/"+url.PathEscape(name)+"?alt=json&prettyPrint=false", nil))
		}
	})
}
