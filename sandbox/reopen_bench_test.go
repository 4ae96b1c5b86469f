//go:build unix

package sandbox

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/benchkit"
)

// BenchmarkReopen100k measures opening a data dir of 100k small documents
// (the store check, bbolt, loading every document into the engine) and
// reports the heap it then holds.
func BenchmarkReopen100k(b *testing.B) {
	dir := b.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	name := firestore.DatabaseName{Project: DefaultProject, Database: firestore.DefaultDatabase}
	for batch := range 100 {
		var changes []firestore.Change
		for i := range 1000 {
			rel := fmt.Sprintf("c/d%06d", batch*1000+i)
			changes = append(changes, firestore.Change{Path: rel, Doc: &pb.Document{Name: name.DocName(rel),
				Fields:     map[string]*pb.Value{"n": firestore.Int(int64(i)), "s": firestore.String("some text")},
				CreateTime: timestamppb.Now(), UpdateTime: timestamppb.Now()}})
		}
		if err := st.Commit(name, time.Now(), changes); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	b.ResetTimer()
	var cpu time.Duration
	for b.Loop() {
		c0 := benchkit.SelfCPU()
		sb, err := openFS(Options{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		cpu += benchkit.SelfCPU() - c0
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		sb.Close()
		b.StartTimer()
	}
	// On a loaded machine the wall time mostly measures the wait for a
	// core; the process's CPU time per open is the cost.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
