package sandbox

import (
	"runtime/debug"
	"sync"
)

// loadGC pauses the garbage collector while sandboxes open: restoring a
// data dir allocates what the process keeps (100k documents: ~30 MiB of
// encodings, entries and maps, little garbage), and collecting while the
// heap grows from nothing to that marks the growing heap several times
// over, with write barriers on every copy meanwhile — a seventh of the
// open's CPU time, for nothing to free. The setting is the process's, so
// opens running at once share one pause, and the last to finish restores
// the collector as it was.
var loadGC struct {
	mu      sync.Mutex
	opening int
	percent int // the setting before the first open paused it
}

// pauseGC pauses the collector until the returned func is called.
func pauseGC() (resume func()) {
	loadGC.mu.Lock()
	if loadGC.opening == 0 {
		loadGC.percent = debug.SetGCPercent(-1)
	}
	loadGC.opening++
	loadGC.mu.Unlock()
	return func() {
		loadGC.mu.Lock()
		defer loadGC.mu.Unlock()
		loadGC.opening--
		if loadGC.opening == 0 {
			debug.SetGCPercent(loadGC.percent)
		}
	}
}
