package await

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB that records Fatalf instead of stopping.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper()                      {}
func (r *fatalRecorder) Fatalf(f string, args ...any) { r.msg = fmt.Sprintf(f, args...) }

func TestPollSeesACondition(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 5 {
			time.Sleep(time.Millisecond) // the event being waited for, not a wait
			n.Add(1)
		}
	}()
	if !Poll(5*time.Second, func() bool { return n.Load() == 5 }) {
		t.Fatalf("the counter reached %d, want 5", n.Load())
	}
}

func TestPollGivesUp(t *testing.T) {
	start := time.Now()
	calls := 0
	if Poll(30*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("a condition that never holds was reported as holding")
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("gave up after %v, before the 30ms deadline", took)
	}
	if calls < 2 {
		t.Errorf("the condition was checked %d times", calls)
	}
}

// A condition that holds only on the check after the deadline still counts.
func TestPollChecksAfterTheDeadline(t *testing.T) {
	start := time.Now()
	if !Poll(10*time.Millisecond, func() bool { return time.Since(start) > 10*time.Millisecond }) {
		t.Fatal("the last check, past the deadline, was not made")
	}
}

func TestUntilFailsNamingTheCondition(t *testing.T) {
	r := &fatalRecorder{TB: t}
	Until(r, 5*time.Millisecond, func() bool { return false }, "the %s", "door")
	if !strings.Contains(r.msg, "the door") {
		t.Errorf("failure message %q does not name what was awaited", r.msg)
	}
	r = &fatalRecorder{TB: t}
	Until(r, time.Second, func() bool { return true }, "nothing")
	if r.msg != "" {
		t.Errorf("a condition that holds failed the test: %q", r.msg)
	}
}
