package functions

import (
	"testing"
	"time"
)

func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		cfg           map[string]any
		retries       int
		backoff, maxB time.Duration
	}{
		{"none", nil, 0, 5 * time.Second, time.Hour},
		{"v2 seconds", map[string]any{"retryCount": 3.0, "minBackoffSeconds": 1.0, "maxBackoffSeconds": 4.0}, 3, time.Second, 4 * time.Second},
		{"v1 durations", map[string]any{"retryCount": 2.0, "minBackoffDuration": "10s", "maxBackoffDuration": "60s"}, 2, 10 * time.Second, time.Minute},
		{"capped", map[string]any{"retryCount": 50.0}, 5, 5 * time.Second, time.Hour},
		{"unresolved", map[string]any{"retryCount": "{{ params.N }}"}, 0, 5 * time.Second, time.Hour},
	}
	for _, c := range cases {
		r, b, m := retryPolicy(c.cfg)
		if r != c.retries || b != c.backoff || m != c.maxB {
			t.Errorf("%s: retryPolicy = %d, %s, %s; want %d, %s, %s", c.name, r, b, m, c.retries, c.backoff, c.maxB)
		}
	}
}

func TestScheduleOfDefaults(t *testing.T) {
	t.Parallel()
	v1 := Endpoint{ID: "a", Platform: GCFv1, Regions: []string{"europe-west1"}, Schedule: &ScheduleTrigger{Schedule: "0 9 * * *"}}
	v2 := Endpoint{ID: "b", Platform: GCFv2, Schedule: &ScheduleTrigger{Schedule: "every 5 minutes"}}
	s1, err := ScheduleOf(v1)
	if err != nil || s1.Location().String() != "America/Los_Angeles" {
		t.Fatalf("v1: %v, %v", s1, err)
	}
	s2, err := ScheduleOf(v2)
	if err != nil || s2.Location().String() != "UTC" {
		t.Fatalf("v2: %v, %v", s2, err)
	}
	if got := JobName(v1); got != "firebase-schedule-a-europe-west1" {
		t.Errorf("JobName = %q", got)
	}
	if got := JobName(v2); got != "firebase-schedule-b-us-central1" {
		t.Errorf("JobName = %q", got)
	}
	if _, err := ScheduleOf(Endpoint{ID: "c", HTTPS: &HTTPSTrigger{}}); err == nil {
		t.Error("an HTTPS function has a schedule")
	}
	if _, err := ScheduleOf(Endpoint{ID: "d", Platform: GCFv2, Schedule: &ScheduleTrigger{Schedule: "whenever"}}); err == nil {
		t.Error("a bad schedule parsed")
	}
}
