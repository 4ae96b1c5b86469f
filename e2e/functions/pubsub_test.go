package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/cli"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

// fakeClock is the scheduler's clock in the test: time moves only when
// the test advances it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

func startPubSubFunctions(t *testing.T, clk functions.Clock) *backend.Backend {
	t.Helper()
	b := startPubSubBackend(t, clk, false)
	var ids []string
	for _, ep := range b.Functions().Endpoints() {
		ids = append(ids, ep.ID)
	}
	if len(ids) != 4 {
		t.Fatalf("the pubsub codebase loaded %v, want its 4 functions", ids)
	}
	return b
}

// startPubSubBackend starts the pubsub codebase; with background its
// functions load while the ports already serve, as in pyric serve.
func startPubSubBackend(t *testing.T, clk functions.Clock, background bool) *backend.Backend {
	t.Helper()
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`[{"source":"pubsub","codebase":"pubsub"}]`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.Start(backend.Options{
		Sandbox:   sandbox.Options{Project: project},
		Firestore: backend.FirestoreOptions{Rules: openRules},
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Log: &testLog{t: t}, Poll: -1, Clock: clk},
			LoadInBackground: background},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	return b
}

// TestPublishDuringLoad: a message published, while the functions load,
// to a topic only a function declares is accepted (the publish waits for
// the topic the load creates) and reaches its onMessagePublished.
func TestPublishDuringLoad(t *testing.T) {
	b := startPubSubBackend(t, &fakeClock{now: time.Date(2026, 12, 6, 10, 7, 30, 0, time.UTC)}, true)
	select {
	case <-b.Functions().Loaded():
		t.Fatal("the functions loaded before the test's publish: it proves nothing")
	default:
	}
	c := pubsubtest.Client(t, b.Addr(backend.PubSub), project)
	ctx := context.Background()
	pub := c.Publisher("orders")
	defer pub.Stop()
	id, err := pub.Publish(ctx, &pubsub.Message{Data: []byte(`{"order":7}`)}).Get(ctx)
	if err != nil {
		t.Fatalf("publish during the load to the function's topic: %v", err)
	}
	want(t, "onOrder", seen(t, b, "psV2-"+id), map[string]any{"id": id, "json": map[string]any{"order": "7"}})
}

// TestPubSubTriggers publishes with the official Go client to topics
// only the functions declare (pyric creates them, as the Emulator Suite
// does) and reads back what onMessagePublished and v1 onPublish saw.
func TestPubSubTriggers(t *testing.T) {
	b := startPubSubFunctions(t, &fakeClock{now: time.Date(2026, 12, 6, 10, 7, 30, 0, time.UTC)})
	c := pubsubtest.Client(t, b.Addr(backend.PubSub), project)
	ctx := context.Background()

	t.Run("v2 onMessagePublished", func(t *testing.T) {
		pub := c.Publisher("orders")
		pub.EnableMessageOrdering = true
		defer pub.Stop()
		var ids []string
		for i, body := range []string{`{"order":1}`, `{"order":2}`} {
			id, err := pub.Publish(ctx, &pubsub.Message{Data: []byte(body), Attributes: map[string]string{"n": fmt.Sprint(i)}, OrderingKey: "cust-9"}).Get(ctx)
			if err != nil {
				t.Fatalf("publish to the function's topic: %v", err)
			}
			ids = append(ids, id)
		}
		for i, id := range ids {
			got := seen(t, b, "psV2-"+id)
			want(t, "onOrder", got, map[string]any{
				"type": "google.cloud.pubsub.topic.v1.messagePublished", "id": id, "messageId": id,
				"source":       "//pubsub.googleapis.com/projects/" + project + "/topics/orders",
				"subscription": "projects/" + project + "/subscriptions/emulator-sub-orders",
				"orderingKey":  "cust-9", "attributes": map[string]any{"n": fmt.Sprint(i)},
				"json": map[string]any{"order": fmt.Sprint(i + 1)},
			})
			if pt, err := time.Parse(time.RFC3339, fmt.Sprint(got["publishTime"])); err != nil || time.Since(pt) > time.Minute {
				t.Errorf("publishTime %v: %v", got["publishTime"], err)
			}
		}
	})

	t.Run("v1 onPublish", func(t *testing.T) {
		pub := c.Publisher("legacy-topic")
		defer pub.Stop()
		id, err := pub.Publish(ctx, &pubsub.Message{Data: []byte("hello v1"), Attributes: map[string]string{"via": "go"}}).Get(ctx)
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		want(t, "onLegacy", seen(t, b, "psV1-"+id), map[string]any{
			"text": "hello v1", "attributes": map[string]any{"via": "go"}, "eventType": "google.pubsub.topic.publish",
			"resource": "projects/" + project + "/topics/legacy-topic", "params": map[string]any{},
		})
	})
}

// TestScheduledFunctions runs the scheduled functions three ways: the
// scheduler's clock reaching a tick, RunTicks, and the run-now endpoint
// through `pyric functions run`.
func TestScheduledFunctions(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 12, 6, 10, 7, 30, 0, time.UTC)}
	b := startPubSubFunctions(t, clk)
	eng := b.Functions()
	ctx := context.Background()

	t.Run("the clock reaches a tick", func(t *testing.T) {
		// The scheduler waits for 10:10; let it arm its timer first.
		await.Poll(10*time.Second, func() bool {
			clk.mu.Lock()
			defer clk.mu.Unlock()
			return len(clk.waiters) > 0
		})
		clk.Advance(3 * time.Minute)
		want(t, "tickV2", seen(t, b, "tickV2-2026-12-06T10:10:00Z"), map[string]any{
			"jobName": "firebase-schedule-tickV2-us-central1", "scheduleTime": "2026-12-06T10:10:00Z"})
	})

	t.Run("the next N ticks", func(t *testing.T) {
		ran, err := eng.RunTicks(ctx, "tickV1", 2)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, at := range ran {
			got = append(got, at.UTC().Format(time.RFC3339))
		}
		// 09:00 in New York, in UTC.
		if strings.Join(got, " ") != "2026-12-06T14:00:00Z 2026-12-07T14:00:00Z" {
			t.Fatalf("RunTicks ran %v", got)
		}
		for _, at := range got {
			want(t, "tickV1", seen(t, b, "tickV1-"+at), map[string]any{"eventType": "google.pubsub.topic.publish",
				"resource": "projects/" + project + "/topics/firebase-schedule-tickV1-us-central1", "timestamp": at})
		}
		more, err := eng.RunTicks(ctx, "tickV1", 1)
		if err != nil || len(more) != 1 || more[0].UTC().Format(time.RFC3339) != "2026-12-08T14:00:00Z" {
			t.Fatalf("the tick after: %v, %v", more, err)
		}
	})

	t.Run("run now", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := cli.Run(ctx, []string{"functions", "run", "tickV2", "--functions", "http://" + b.Addr(backend.Functions)}, cli.Stdio{Out: &out, Err: &errb})
		if code != 0 {
			t.Fatalf("pyric functions run: exit %d: %s", code, errb.String())
		}
		at := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out.String()), "ran tickV2 (schedule time "), ")")
		ts, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			t.Fatalf("output %q: %v", out.String(), err)
		}
		want(t, "tickV2 now", seen(t, b, "tickV2-"+ts.UTC().Format(time.RFC3339)), map[string]any{"jobName": "firebase-schedule-tickV2-us-central1"})

		base := "http://" + b.Addr(backend.Functions) + "/functions/projects/" + project + "/schedules/"
		for path, st := range map[string]int{"onOrder:run": 400, "nope:run": 404, "us-central1-tickV1:run": 200} {
			if status, body := call(t, "POST", base+path, "", "", nil); status != st {
				t.Errorf("POST %s: %d %v, want %d", path, status, body, st)
			}
		}
		// A v2 scheduled function's own URL takes Cloud Scheduler's POST.
		req, _ := http.NewRequest("POST", "http://"+b.Addr(backend.Functions)+"/"+project+"/us-central1/tickV2", nil)
		req.Header.Set("X-CloudScheduler-JobName", "by-hand")
		req.Header.Set("X-CloudScheduler-ScheduleTime", "2030-01-01T00:00:00Z")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST the v2 scheduled function's URL: %v %v", resp, err)
		}
		resp.Body.Close()
		want(t, "tickV2 by URL", seen(t, b, "tickV2-2030-01-01T00:00:00Z"), map[string]any{"jobName": "by-hand"})
		if status, _ := call(t, "GET", base+"tickV1:run", "", "", nil); status != 405 {
			t.Errorf("GET run: %d, want 405", status)
		}
		if code := cli.Run(ctx, []string{"functions", "run", "onOrder", "--functions", "http://" + b.Addr(backend.Functions)}, cli.Stdio{Out: &out, Err: &errb}); code == 0 {
			t.Error("pyric functions run of an event function succeeded")
		}
	})
}
