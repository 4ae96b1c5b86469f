package fsstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// BenchmarkBuildLatency measures what building declared indexes over
// 100k documents does to the traffic beside it: the p99 of single-document
// reads and commits while nothing is built (quiet), while Declare builds
// beside traffic (beside), and while the same indexes are built under the
// exclusive lock, as they were before (locked: the p99 hides that stall,
// the slowest operation shows it). It reports the p99s in µs; run it
// with -benchtime=1x.
func BenchmarkBuildLatency(b *testing.B) {
	const n = 100_000
	s := New(Options{Name: testDB, History: time.Minute, HistoryBytes: DefaultHistoryBytes, Now: time.Now, Persister: nopPersister{}})
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i += 500 {
		batch := map[string]map[string]*pb.Value{}
		for j := i; j < i+500; j++ {
			batch[fmt.Sprintf("c/d%06d", j)] = fieldsOf(r, j)
		}
		commitDocs(b, s, batch)
	}
	ds := []Declared{
		{Collection: "c", Fields: []IndexField{{Path: fsvalue.FieldPath{"g"}}, {Path: fsvalue.FieldPath{"n"}}}},
		{Collection: "c", Fields: []IndexField{{Path: fsvalue.FieldPath{"tags"}, Contains: true}, {Path: fsvalue.FieldPath{"n"}}}},
	}
	// traffic runs a reader and a writer until stop, returning the p99 of
	// each.
	traffic := func(stop <-chan struct{}) (read, write, worst time.Duration) {
		var wg sync.WaitGroup
		var reads, writes []time.Duration
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(5, 6))
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				s.RLock()
				s.GetAt(fmt.Sprintf("c/d%06d", r.IntN(n)), s.ReadTime())
				s.RUnlock()
				reads = append(reads, time.Since(t0))
				time.Sleep(50 * time.Microsecond) // pacing: a client's think time
			}
		}()
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(7, 8))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := r.IntN(n)
				t0 := time.Now()
				commitDocs(b, s, map[string]map[string]*pb.Value{fmt.Sprintf("c/d%06d", i): fieldsOf(r, i)})
				writes = append(writes, time.Since(t0))
				time.Sleep(50 * time.Microsecond) // pacing: a client's think time
			}
		}()
		wg.Wait()
		return p99(reads), p99(writes), max(slices.Max(append(reads, 0)), slices.Max(append(writes, 0)))
	}
	measure := func(during func()) (time.Duration, time.Duration, time.Duration) {
		stop := make(chan struct{})
		var rd, wr, worst time.Duration
		done := make(chan struct{})
		go func() { rd, wr, worst = traffic(stop); close(done) }()
		time.Sleep(20 * time.Millisecond) // traffic in its steady state before the measured step
		during()
		close(stop)
		<-done
		return rd, wr, worst
	}
	for range b.N {
		qr, qw, qm := measure(func() { time.Sleep(time.Second) }) // a quiet second: the baseline
		var took time.Duration
		br, bw, bm := measure(func() {
			t0 := time.Now()
			s.Lock()
			s.Declare(ds)
			s.Unlock()
			s.WaitIndexes()
			took = time.Since(t0)
		})
		lr, lw, lm := measure(func() {
			s.Lock()
			for _, d := range ds {
				ix := newIndex(Scope{Path: d.Collection}, d.Fields, true)
				s.build(ix)
			}
			s.Unlock()
			time.Sleep(100 * time.Millisecond) // traffic measured while the builds run in the background
		})
		us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
		b.ReportMetric(us(qr), "quiet-read-p99-µs")
		b.ReportMetric(us(qw), "quiet-write-p99-µs")
		b.ReportMetric(us(br), "beside-read-p99-µs")
		b.ReportMetric(us(bw), "beside-write-p99-µs")
		b.ReportMetric(us(lr), "locked-read-p99-µs")
		b.ReportMetric(us(lw), "locked-write-p99-µs")
		b.ReportMetric(float64(took.Milliseconds()), "build-ms")
		b.Logf("p99 read/write (slowest op): quiet %v/%v (%v), beside a build (%v) %v/%v (%v; p99 %.1fx/%.1fx quiet), under the lock %v/%v (%v)",
			qr, qw, qm, took.Round(time.Millisecond), br, bw, bm, float64(br)/float64(qr), float64(bw)/float64(qw), lr, lw, lm)
	}
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}
