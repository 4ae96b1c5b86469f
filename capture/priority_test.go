package capture

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/priority"
	"github.com/pyric/pyric/internal/testfs"
)

// TestRecorderRunsLowered: a recorder's flushes run on a thread of
// lowered priority (priority.Lowered), which ends with the recorder. Not
// parallel: it counts the process's lowered threads.
func TestRecorderRunsLowered(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread priorities are Linux's")
	}
	if !await.Poll(10*time.Second, func() bool { return priority.LoweredThreads() == 0 }) {
		t.Fatalf("%d lowered threads before the recorder started", priority.LoweredThreads())
	}
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	rec, err := Start(ctx, b.Sandbox, filepath.Join(t.TempDir(), "session.json"), Options{Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := testfs.Of(b.Sandbox).Admin().SetDocument(ctx, "c/d", map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if !await.Poll(10*time.Second, func() bool { return priority.LoweredThreads() == 1 || priority.MainLowered() }) {
		t.Fatalf("the recorder runs on %d lowered threads, want 1", priority.LoweredThreads())
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if !await.Poll(10*time.Second, func() bool { return priority.LoweredThreads() == 0 }) {
		t.Fatalf("%d lowered threads stayed after the recorder closed", priority.LoweredThreads())
	}
}
