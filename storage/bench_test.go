package storage_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/pyric/pyric/storage"
)

// zeros streams n bytes without holding them.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
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

const bigSize = 64 << 20

// BenchmarkUpload64MiB streams a 64 MiB object to disk (fsync included);
// the heap it grows is reported as heap-MiB (it stays flat: the bytes are
// never held in memory).
func BenchmarkUpload64MiB(b *testing.B) {
	e := diskEngine(b)
	b.SetBytes(bigSize)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; b.Loop(); i++ {
		if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "big", Body: &zeros{bigSize}}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB")
}

// BenchmarkDownload64MiB reads a 64 MiB object back.
func BenchmarkDownload64MiB(b *testing.B) {
	e := diskEngine(b)
	if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "big", Body: &zeros{bigSize}}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bigSize)
	for b.Loop() {
		o, r, err := e.Open(admin, storage.ReadRequest{Bucket: bkt, Name: "big"})
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, io.NewSectionReader(r, 0, o.Size))
		r.Close()
	}
}

// BenchmarkSmallObjects is put + stat + read of a 1 KiB object, in memory
// and on disk (fsync per put).
func BenchmarkSmallObjects(b *testing.B) {
	data := strings.Repeat("x", 1024)
	for _, disk := range []bool{false, true} {
		b.Run(map[bool]string{false: "memory", true: "disk"}[disk], func(b *testing.B) {
			var e *storage.Engine
			if disk {
				e = diskEngine(b)
			} else {
				e, _ = storage.New(envFor(b, false), storage.Options{})
			}
			for i := 0; b.Loop(); i++ {
				name := fmt.Sprintf("small/%d", i%1000)
				if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(data)}); err != nil {
					b.Fatal(err)
				}
				if _, err := e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: name}); err != nil {
					b.Fatal(err)
				}
				o, r, _ := e.Open(admin, storage.ReadRequest{Bucket: bkt, Name: name})
				io.Copy(io.Discard, io.NewSectionReader(r, 0, o.Size))
				r.Close()
			}
		})
	}
}

// BenchmarkList100k lists one 1000-item page under a prefix of a bucket
// holding 100k objects in 100 folders.
func BenchmarkList100k(b *testing.B) {
	e, _ := storage.New(envFor(b, false), storage.Options{})
	for i := range 100_000 {
		if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: fmt.Sprintf("f%02d/o%05d", i%100, i), Body: strings.NewReader("x")}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: "f42/", Delimiter: "/"})
		if err != nil || len(r.Items) != 1000 {
			b.Fatalf("%v %d", err, len(r.Items))
		}
	}
}
