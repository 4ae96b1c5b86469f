package memlimit

import (
	"runtime/debug"
	"sync"
)

// pause pauses the garbage collector while a start builds what the
// process keeps: restoring a data dir allocates it (100k documents: ~30
// MiB of encodings, entries and maps, little garbage), and collecting
// while the heap grows from nothing to that marks the growing heap
// several times over, with write barriers on every copy meanwhile — a
// seventh of the open's CPU time, for nothing to free. The first
// collection after it marks all of it once (tens of milliseconds for 100k
// documents); pyric serve keeps the pause until its ports serve, so that
// collection runs beside the first requests instead of before any port
// answers. The setting is the process's, so pauses at once share one,
// and the last to end restores the collector as it was.
var pause struct {
	mu      sync.Mutex
	holders int
	percent int // the setting before the first pause
}

// PauseGC pauses the collector until the returned func is called (once
// or more: calls after the first do nothing). Call Start after it ends:
// the memory limit collects regardless of a pause (at once, after a large
// load).
func PauseGC() (resume func()) {
	pause.mu.Lock()
	if pause.holders == 0 {
		pause.percent = debug.SetGCPercent(-1)
	}
	pause.holders++
	pause.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			pause.mu.Lock()
			defer pause.mu.Unlock()
			pause.holders--
			if pause.holders == 0 {
				debug.SetGCPercent(pause.percent)
			}
		})
	}
}
