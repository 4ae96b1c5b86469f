package pubsubbench

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// TestBacklogMemory publishes a backlog (1M messages of 100 bytes with
// PYRIC_BENCH=1) to an engine on the sandbox's store and reports the Go
// heap in use afterwards: the engine keeps a window of the backlog in
// memory, the rest on disk.
func TestBacklogMemory(t *testing.T) {
	n := 20000
	if os.Getenv("PYRIC_BENCH") == "1" {
		n = 1000000
	} else if testing.Short() {
		t.Skip("benchmark harness")
	}
	dir := t.TempDir()
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := pubsub.NewEngine(service.Env{Bucket: st.Bucket("pubsub")}, pubsub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const tp, sb = "projects/b/topics/backlog", "projects/b/subscriptions/backlog"
	if _, err := e.CreateTopic(&pubsub.Topic{Name: tp}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateSubscription(&pubsub.Subscription{Name: sb, Topic: tp}); err != nil {
		t.Fatal(err)
	}
	batch := make([]*pubsub.Message, 1000)
	for i := range batch {
		batch[i] = &pubsub.Message{Data: make([]byte, 100)}
	}
	start := time.Now()
	for i := 0; i < n; i += len(batch) {
		if _, err := e.Publish(tp, batch); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stats, _ := e.Stats(sb)
	fi, _ := os.Stat(filepath.Join(dir, "pyric.db"))
	var size int64
	if fi != nil {
		size = fi.Size()
	}
	t.Logf("backlog %d messages published in %v (%.0f msgs/s); Go heap in use %.1f MiB; store file %.1f MiB",
		stats.Backlog, took.Round(time.Millisecond), float64(n)/took.Seconds(), float64(ms.HeapInuse)/(1<<20), float64(size)/(1<<20))
	if stats.Backlog != n {
		t.Fatalf("backlog %d, want %d", stats.Backlog, n)
	}
}
