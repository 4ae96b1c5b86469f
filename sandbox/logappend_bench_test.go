package sandbox

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/sandbox/service"
)

// rtdbPut is the record of a Realtime Database REST put of {"n":i,"s":"x"}
// at /rest/r<i>: the node's two leaves and the deletion of what was there.
func rtdbPut(i int) []service.LogChange {
	p := fmt.Sprintf("/rest/r%d", i)
	return []service.LogChange{{Key: p}, {Key: p + "/n", Value: []byte(fmt.Sprint(i))}, {Key: p + "/s", Value: []byte(`"x"`)}}
}

// benchLogAppend appends RTDB-put-like records to a durable store's Log
// (from parallel goroutines per CPU when parallel > 0), a checkpoint
// every 1,000 appends (a second's worth at the REST benchmark's rate)
// included, and reports the process's CPU per append (less moved by the
// machine's load than ns/op) and the appends per log write().
func benchLogAppend(b *testing.B, parallel int) {
	st, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	log := st.Log("database")
	recs := make([][]service.LogChange, 1000)
	for i := range recs {
		recs[i] = rtdbPut(i)
	}
	var n atomic.Int64
	w0 := st.walWrites.Load()
	b.ReportAllocs()
	cpu0 := benchkit.SelfCPU()
	b.ResetTimer()
	work := func() {
		i := int(n.Add(1))
		if err := log.Append("ns", recs[i%len(recs)]); err != nil {
			b.Error(err)
		}
		if i%1000 == 0 {
			st.checkpoint()
		}
	}
	if parallel == 0 {
		for range b.N {
			work()
		}
	} else {
		b.SetParallelism(parallel)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				work()
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(benchkit.SelfCPU()-cpu0)/float64(b.N)/1000, "cpu-µs/op")
	b.ReportMetric(float64(b.N)/float64(max(st.walWrites.Load()-w0, 1)), "appends/write")
}

// BenchmarkLogAppend: one writer, as a sequential REST client drives
// the Realtime Database.
func BenchmarkLogAppend(b *testing.B) { benchLogAppend(b, 0) }

// BenchmarkLogAppend64: 64 concurrent writers (32 goroutines per CPU).
func BenchmarkLogAppend64(b *testing.B) { benchLogAppend(b, 32) }
