// Package await is how tests wait for something to happen: they poll the
// condition that says it happened, with a deadline, instead of sleeping
// for a guessed time and hoping it was long enough.
package await

import (
	"fmt"
	"testing"
	"time"
)

// Poll calls cond until it returns true or timeout passes, and reports
// whether it did. It checks often at first (so a condition that holds
// almost at once costs almost nothing) and then every 50ms, and checks
// once more after the deadline so a slow last step is not missed.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(wait)
	}
}

// Until is Poll that fails the test (with what, formatted with args)
// when the condition never holds.
func Until(t testing.TB, timeout time.Duration, cond func() bool, what string, args ...any) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("after %v, still waiting for %s", timeout, fmt.Sprintf(what, args...))
	}
}
