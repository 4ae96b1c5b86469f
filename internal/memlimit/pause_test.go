package memlimit

import (
	"runtime/debug"
	"testing"
)

// Pauses at once share one: the collector stays off until the last ends,
// a second call of a resume changes nothing, and the setting from before
// the first comes back.
func TestPauseGCNests(t *testing.T) {
	before := debug.SetGCPercent(123)
	defer debug.SetGCPercent(before)
	gcPercent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	a := PauseGC()
	b := PauseGC()
	if p := gcPercent(); p != -1 {
		t.Fatalf("paused: GOGC %d", p)
	}
	a()
	a() // once only: b's pause holds
	if p := gcPercent(); p != -1 {
		t.Fatalf("one of two pauses ended: GOGC %d", p)
	}
	b()
	if p := gcPercent(); p != 123 {
		t.Fatalf("after both: GOGC %d, want 123", p)
	}
}
