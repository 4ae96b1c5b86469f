package functions

import (
	"strings"
	"testing"
	"time"
)

func TestTaskPolicy(t *testing.T) {
	t.Parallel()
	p := policyOf(nil)
	if p.maxAttempts != DefaultTaskMaxAttempts || p.maxConcurrent != DefaultTaskMaxConcurrent || p.perSecond != DefaultTaskPerSecond {
		t.Fatalf("defaults: %+v", p)
	}
	// onTaskDispatched's options, as the worker reports them (numbers).
	p = policyOf(&TaskTrigger{RetryConfig: map[string]any{"maxAttempts": 5.0, "minBackoffSeconds": 1.0, "maxBackoffSeconds": 10.0, "maxDoublings": 2.0},
		RateLimits: map[string]any{"maxConcurrentDispatches": 3.0, "maxDispatchesPerSecond": 2.5}})
	if p.maxAttempts != 5 || p.minBackoff != time.Second || p.maxBackoff != 10*time.Second || p.maxDoublings != 2 || p.maxConcurrent != 3 || p.perSecond != 2.5 {
		t.Fatalf("options: %+v", p)
	}
	// Doubling twice, then linear, capped: 1, 2, 4, 8, 10, 10 s.
	for n, want := range []time.Duration{1, 2, 4, 8, 10, 10} {
		if got := p.backoff(n + 1); got != want*time.Second {
			t.Errorf("backoff after attempt %d = %v, want %v", n+1, got, want*time.Second)
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	task := &Task{DispatchCount: 4, FirstAttempt: start}
	if p.exhausted(task, start) {
		t.Error("4 of 5 attempts: exhausted")
	}
	task.DispatchCount = 5
	if !p.exhausted(task, start) {
		t.Error("5 of 5 attempts: not exhausted")
	}
	// With maxRetrySeconds, both limits must be reached.
	p.maxRetry = time.Minute
	if p.exhausted(task, start.Add(30*time.Second)) || !p.exhausted(task, start.Add(time.Minute)) {
		t.Error("maxRetrySeconds not honoured")
	}
	p.maxAttempts = -1
	task.DispatchCount = 1000
	if p.exhausted(task, start.Add(time.Hour)) {
		t.Error("unlimited attempts exhausted")
	}
}

func TestValidTaskID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"abc": true, "A-b_9": true, strings.Repeat("x", 500): true,
		"": false, strings.Repeat("x", 501): false, "a b": false, "a/b": false, "é": false, "a.b": false,
	} {
		if got := validTaskID(id); got != want {
			t.Errorf("validTaskID(%.20q… %d bytes) = %v, want %v", id, len(id), got, want)
		}
	}
}

func TestTaskName(t *testing.T) {
	t.Parallel()
	task := &Task{Name: "projects/p/locations/us-central1/queues/q/tasks/abc"}
	if task.ID() != "abc" || task.queue() != "projects/p/locations/us-central1/queues/q" {
		t.Fatalf("%q %q", task.ID(), task.queue())
	}
	if r := task.Resource(); r["name"] != task.Name || r["view"] != "BASIC" {
		t.Fatalf("%v", r)
	}
}
