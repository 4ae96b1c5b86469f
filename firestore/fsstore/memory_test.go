package fsstore

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// nopPersister accepts every commit.
type nopPersister struct{}

func (nopPersister) Commit(fsvalue.DatabaseName, time.Time, []Change) error { return nil }

// BenchmarkMemory100k reports the heap a durable store of 100k small
// documents holds (as `pyric serve` loads them: batches of 20), per
// document, with the decoded cache emptied (doc-B) and full after a scan
// (cache-MB).
func BenchmarkMemory100k(b *testing.B) {
	const n, batch = 100_000, 20
	for range b.N {
		runtime.GC()
		base := heapNow()
		s := New(Options{Name: testDB, History: time.Hour, HistoryBytes: DefaultHistoryBytes, Now: time.Now, Persister: nopPersister{}})
		for i := 0; i < n; i += batch {
			var cs []Change
			s.Lock()
			t := s.NextTime()
			for j := i; j < i+batch; j++ {
				rel := fmt.Sprintf("load/d%07d", j)
				cs = append(cs, Change{Path: rel, Doc: &pb.Document{Name: testDB.DocName(rel),
					Fields:     map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(j)}}, "s": {ValueType: &pb.Value_StringValue{StringValue: "some text"}}},
					CreateTime: timestamppb.New(t), UpdateTime: timestamppb.New(t)}})
			}
			done := s.Commit(t, cs)
			s.Unlock()
			if err := done.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		s.SetDecodedCacheLimit(0)
		s.RLock()
		for _, d := range s.All() {
			d.Current()
		}
		s.RUnlock()
		runtime.GC()
		store := heapNow() - base
		s.SetDecodedCacheLimit(DecodedCacheBytes)
		s.RLock()
		for _, d := range s.All() {
			d.Current()
		}
		s.RUnlock()
		runtime.GC()
		full := heapNow() - base
		b.ReportMetric(float64(store)/n, "doc-B")
		b.ReportMetric(float64(full-store)/(1<<20), "cache-MB")
		runtime.KeepAlive(s)
	}
}

func heapNow() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkHistoryBytes overwrites 160 small documents 100k times in a
// durable store (history bound out of reach) and reports the heap the kept
// versions take against what the history budget counts for them
// (heap/budget: 1 means the budget is real bytes).
func BenchmarkHistoryBytes(b *testing.B) {
	const hot, writes = 160, 100_000
	for range b.N {
		s := New(Options{Name: testDB, History: time.Hour, HistoryBytes: 1 << 40, Now: time.Now, Persister: nopPersister{}})
		s.SetDecodedCacheLimit(0)
		commit := func(i int) {
			s.Lock()
			t := s.NextTime()
			rel := fmt.Sprintf("hot/d%03d", i%hot)
			done := s.Commit(t, []Change{{Path: rel, Doc: &pb.Document{Name: testDB.DocName(rel),
				Fields:     map[string]*pb.Value{"w": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}}, "s": {ValueType: &pb.Value_StringValue{StringValue: "some text of a small document"}}},
				CreateTime: timestamppb.New(t), UpdateTime: timestamppb.New(t)}}})
			s.Unlock()
			if err := done.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		for i := range hot {
			commit(i)
		}
		runtime.GC()
		base := heapNow()
		for i := range writes {
			commit(hot + i)
		}
		runtime.GC()
		held := heapNow() - base
		s.RLock()
		_, counted, _ := s.HistoryStats()
		s.RUnlock()
		b.ReportMetric(float64(held)/float64(counted), "heap/budget")
		b.ReportMetric(float64(held)/writes, "heap-B/version")
		runtime.KeepAlive(s)
	}
}
