package functions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/pyric/pyric/functions/schedule"
)

// Scheduled functions: the Emulator Suite never runs them by itself;
// pyric runs each on its schedule while the engine runs (missed ticks
// are skipped, as Cloud Scheduler does not catch up), can run one at
// once (RunScheduled) and lets a test run the next ticks without
// waiting (RunTicks). A run is what Cloud Scheduler sends the function
// firebase-tools deploys: for gcfv2 an HTTP POST with the
// X-CloudScheduler-JobName and -ScheduleTime headers; for gcfv1 a
// Pub/Sub message on the job's topic (attributes {"scheduled": "true"}).

// Clock is the scheduler's time source. nil in Options means the
// sandbox's clock with real timers.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type sandboxClock struct{ now func() time.Time }

func (c sandboxClock) Now() time.Time                         { return c.now() }
func (c sandboxClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ErrNotScheduled is RunScheduled's and RunTicks' answer for a function
// that is not a scheduled one.
var ErrNotScheduled = errors.New("not a scheduled function")

// scheduler is the engine's schedule state.
type scheduler struct {
	mu      sync.Mutex
	next    map[string]time.Time // function id → its next tick
	spec    map[string]string    // function id → the schedule the tick was computed from
	running map[string]bool
	wake    chan struct{}
}

// JobName is the Cloud Scheduler job id firebase-tools creates for a
// scheduled function (also the v1 function's topic).
func JobName(ep Endpoint) string {
	region := DefaultRegion
	if len(ep.Regions) > 0 {
		region = ep.Regions[0]
	}
	return "firebase-schedule-" + ep.ID + "-" + region
}

// ScheduleOf parses a scheduled function's schedule in its time zone
// (firebase-tools' defaults: America/Los_Angeles for gcfv1, UTC for
// gcfv2).
func ScheduleOf(ep Endpoint) (*schedule.Schedule, error) {
	if ep.Schedule == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotScheduled, ep.ID)
	}
	tz := ep.Schedule.TimeZone
	if tz == "" {
		tz = schedule.DefaultTimeZoneV2
		if ep.Platform == GCFv1 {
			tz = schedule.DefaultTimeZoneV1
		}
	}
	return schedule.Parse(ep.Schedule.Schedule, tz)
}

func (e *Engine) clock() Clock {
	if e.opts.Clock != nil {
		return e.opts.Clock
	}
	return sandboxClock{e.now}
}

// tick returns function ep's next tick after the cursor (initialising
// it from the clock when the function is new or its schedule changed).
func (e *Engine) tick(ep Endpoint, now time.Time) (time.Time, error) {
	s, err := ScheduleOf(ep)
	if err != nil {
		return time.Time{}, err
	}
	sc := &e.sched
	sc.mu.Lock()
	defer sc.mu.Unlock()
	key := s.String() + "|" + s.Location().String()
	if t, ok := sc.next[ep.ID]; ok && sc.spec[ep.ID] == key {
		return t, nil
	}
	t := s.Next(now)
	sc.next[ep.ID], sc.spec[ep.ID] = t, key
	return t, nil
}

// runSchedules runs the scheduled functions on their schedules until
// the engine closes.
func (e *Engine) runSchedules() {
	clk := e.clock()
	reported := map[string]bool{}
	for {
		changed := e.Changed()
		now := clk.Now()
		var soonest time.Time
		for _, ep := range e.Endpoints() {
			if ep.Schedule == nil {
				continue
			}
			at, err := e.tick(ep, now)
			if err != nil {
				if !reported[ep.ID] {
					reported[ep.ID] = true
					e.printf("functions[%s]: not scheduled: %v\n", ep.ID, err)
				}
				continue
			}
			if at.IsZero() {
				continue
			}
			if !at.After(now) {
				e.fire(ep, at, now)
				continue
			}
			if soonest.IsZero() || at.Before(soonest) {
				soonest = at
			}
		}
		var timer <-chan time.Time
		if !soonest.IsZero() {
			timer = clk.After(soonest.Sub(now))
		}
		select {
		case <-timer:
		case <-changed:
		case <-e.sched.wake:
		case <-e.done:
			return
		}
	}
}

// fire starts the run of tick at and moves ep's cursor past now; a run
// still going when the next tick comes makes that tick skipped.
func (e *Engine) fire(ep Endpoint, at, now time.Time) {
	s, err := ScheduleOf(ep)
	if err != nil {
		return
	}
	sc := &e.sched
	sc.mu.Lock()
	sc.next[ep.ID] = s.Next(now)
	busy := sc.running[ep.ID]
	if !busy {
		sc.running[ep.ID] = true
	}
	sc.mu.Unlock()
	if busy {
		e.printf("functions[%s]: the run of %s is skipped: the previous run is still going\n", ep.ID, at.UTC().Format(time.RFC3339))
		return
	}
	go func() {
		defer func() {
			sc.mu.Lock()
			delete(sc.running, ep.ID)
			sc.mu.Unlock()
		}()
		retries, backoff, maxBackoff := retryPolicy(ep.Schedule.RetryConfig)
		for attempt := 0; ; attempt++ {
			err := e.runScheduled(context.Background(), ep, at)
			if err == nil {
				return
			}
			if attempt >= retries {
				e.printf("functions[%s]: scheduled run of %s failed: %v\n", ep.ID, at.UTC().Format(time.RFC3339), err)
				return
			}
			select {
			case <-time.After(backoff):
			case <-e.done:
				return
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}()
}

// retryPolicy reads a schedule's retryConfig as Cloud Scheduler applies
// it: retryCount retries (none by default) waiting minBackoffSeconds
// (v1: minBackoffDuration), doubling up to maxBackoffSeconds; Cloud
// Scheduler's defaults are 5 s and 1 h.
func retryPolicy(cfg map[string]any) (retries int, backoff, maxBackoff time.Duration) {
	backoff, maxBackoff = 5*time.Second, time.Hour
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case string: // v1 durations: "10s"
			if d, err := time.ParseDuration(x); err == nil {
				return d.Seconds(), true
			}
		}
		return 0, false
	}
	if n, ok := num(cfg["retryCount"]); ok && n > 0 {
		retries = min(int(n), 5)
	}
	for _, k := range []string{"minBackoffSeconds", "minBackoffDuration"} {
		if n, ok := num(cfg[k]); ok && n > 0 {
			backoff = time.Duration(n * float64(time.Second))
		}
	}
	for _, k := range []string{"maxBackoffSeconds", "maxBackoffDuration"} {
		if n, ok := num(cfg[k]); ok && n > 0 {
			maxBackoff = time.Duration(n * float64(time.Second))
		}
	}
	return retries, backoff, max(backoff, maxBackoff)
}

// RunScheduled runs the scheduled function id once now, as its job's
// "force run" does, and returns when the run finished; an error is a
// failed run. The schedule's own ticks are unchanged.
func (e *Engine) RunScheduled(ctx context.Context, id string) (time.Time, error) {
	ep, ok := e.Endpoint(id)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if ep.Schedule == nil {
		return time.Time{}, fmt.Errorf("%w: %s is a %s function", ErrNotScheduled, id, ep.Kind())
	}
	at := e.clock().Now()
	return at, e.runScheduled(ctx, ep, at)
}

// RunTicks runs the next n ticks of the scheduled function id at once,
// one after another, each with its own schedule time, and moves the
// function's schedule past them (the clock is not consulted, so a test
// runs a day of ticks without waiting). It returns the schedule times
// run; the error is the first failed run's.
func (e *Engine) RunTicks(ctx context.Context, id string, n int) ([]time.Time, error) {
	ep, ok := e.Endpoint(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	s, err := ScheduleOf(ep)
	if err != nil {
		return nil, err
	}
	var ran []time.Time
	for i := 0; i < n; i++ {
		at, err := e.tick(ep, e.clock().Now())
		if err != nil || at.IsZero() {
			return ran, err
		}
		e.sched.mu.Lock()
		e.sched.next[ep.ID] = s.Next(at)
		e.sched.mu.Unlock()
		ran = append(ran, at)
		if err := e.runScheduled(ctx, ep, at); err != nil {
			return ran, err
		}
	}
	select {
	case e.sched.wake <- struct{}{}:
	default:
	}
	return ran, nil
}

// runScheduled delivers one run of ep for schedule time at.
func (e *Engine) runScheduled(ctx context.Context, ep Endpoint, at time.Time) error {
	job := JobName(ep)
	when := at.UTC().Format(time.RFC3339)
	if ep.Platform == GCFv2 {
		h := http.Header{}
		h.Set("X-CloudScheduler", "true")
		h.Set("X-CloudScheduler-JobName", job)
		h.Set("X-CloudScheduler-ScheduleTime", when)
		h.Set("User-Agent", "Google-Cloud-Scheduler")
		resp, err := e.CallHTTP(ctx, ep.ID, http.MethodPost, "/", h, nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("function %s answered %d", ep.ID, resp.StatusCode)
		}
		return nil
	}
	// gcfv1: the Pub/Sub message Cloud Scheduler publishes on the job's
	// topic, as the function's event.
	id := e.eventID()
	topic := "projects/" + e.project + "/topics/" + job
	body, err := json.Marshal(map[string]any{
		"data": map[string]any{"@type": "type.googleapis.com/google.pubsub.v1.PubsubMessage", "data": "",
			"attributes": map[string]string{"scheduled": "true"}, "messageId": id, "publishTime": when},
		"context": map[string]any{"eventId": id, "timestamp": when, "eventType": "google.pubsub.topic.publish",
			"resource": map[string]any{"service": "pubsub.googleapis.com", "name": topic,
				"type": "type.googleapis.com/google.pubsub.v1.PubsubMessage"},
			"params": map[string]string{}},
	})
	if err != nil {
		return err
	}
	return e.DeliverEvent(ctx, ep.ID, body)
}

func (e *Engine) eventID() string {
	if e.newID != nil {
		return e.newID()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
