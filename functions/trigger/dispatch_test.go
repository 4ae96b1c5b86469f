package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
)

// recorder is a fake deliverer: it records every call, fails the calls
// fail says, and can be slowed down.
type recorder struct {
	mu    sync.Mutex
	calls map[string][]string // function → the documents, in call order
	fail  func(fn, doc string, attempt int) bool
	tries map[string]int
	delay time.Duration
	// resumed lets a delivery's cause name no event (a change an
	// earlier run held).
	resumed bool
}

func newRecorder() *recorder { return &recorder{calls: map[string][]string{}, tries: map[string]int{}} }

func (r *recorder) deliver(ctx context.Context, fn string, payload []byte) error {
	var body struct {
		Document   string `json:"document"`
		DataBase64 string `json:"data_base64"`
	}
	if err := jsonUnmarshal(payload, &body); err != nil {
		return err
	}
	data, err := firestoreEventData(body.DataBase64)
	if err != nil {
		return err
	}
	n, _ := get(data, "value.fields.n.integerValue").(string)
	doc := body.Document + "#" + n
	if c, ok := CauseOf(ctx); !ok || c.Service != "firestore" || c.Path != body.Document || c.Seq == 0 && !r.resumed || c.Attempt < 1 || c.Params["id"] == "" {
		return fmt.Errorf("delivery of %s without its cause: %+v", doc, c)
	}
	if r.delay > 0 {
		time.Sleep(r.delay) // a slow delivery, which the test sets up
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tries[fn+doc]++
	r.calls[fn] = append(r.calls[fn], doc)
	if r.fail != nil && r.fail(fn, doc, r.tries[fn+doc]) {
		return errors.New("function threw")
	}
	return nil
}

func (r *recorder) get(fn string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls[fn]...)
}

func write(bus *event.Bus, doc string, n int) {
	bus.Emit(event.Event{Kind: event.KindCommit, Service: "firestore", Path: doc,
		Commit: &event.Commit{RequestTime: t0, Database: "(default)", After: map[string]any{"n": n}, UpdateTime: t0, CreateTime: t0}})
}

func idle(t *testing.T, d *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Idle(ctx); err != nil {
		t.Fatalf("dispatcher never idle: %v (stats %+v)", err, d.Stats())
	}
}

// TestDispatcherOrderAndNoLoss: 500 writes through a bus whose subscriber
// loses events reach two functions, each in commit order, none lost,
// while a slow function does not hold up the other.
func TestDispatcherOrderAndNoLoss(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{History: 8})
	lossy := bus.Subscribe(2)
	defer lossy.Close()
	r := newRecorder()
	d := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, Logf: t.Logf})
	defer d.Close()
	bus.Tap(d.Tap)
	d.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}"),
		{ID: "g", Platform: GCFv2, EventType: "google.cloud.firestore.document.v1.written",
			EventFilterPathPatterns: map[string]string{"document": "docs/{id}"}}})
	const n = 500
	for i := range n {
		write(bus, "docs/d", i)
	}
	idle(t, d)
	if lossy.Dropped() == 0 {
		t.Fatalf("the subscriber lost nothing; the test does not exercise loss")
	}
	for _, fn := range []string{"f", "g"} {
		got := r.get(fn)
		if len(got) != n {
			t.Fatalf("%s: %d deliveries, want %d", fn, len(got), n)
		}
		for i, doc := range got {
			if want := fmt.Sprintf("docs/d#%d", i); doc != want {
				t.Fatalf("%s: delivery %d is %s, want %s", fn, i, doc, want)
			}
		}
	}
	if s := d.Stats(); s.Delivered != 2*n || s.Failed != 0 || s.Dropped != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestDispatcherRetry: a function with retry set is called again until it
// succeeds; one without is called once and the next event still comes.
// conformance: functions.delivery.retry
func TestDispatcherRetry(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	r := newRecorder()
	r.fail = func(fn, doc string, attempt int) bool { return doc == "docs/a#1" && attempt < 3 }
	d := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, RetryBackoff: time.Millisecond, Logf: t.Logf})
	defer d.Close()
	bus.Tap(d.Tap)
	retrying := fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")
	retrying.Retry = true
	once := retrying
	once.ID, once.Retry = "once", false
	d.SetFunctions([]Function{retrying, once})
	write(bus, "docs/a", 1)
	write(bus, "docs/a", 2)
	idle(t, d)
	if got, want := r.get("f"), []string{"docs/a#1", "docs/a#1", "docs/a#1", "docs/a#2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("retrying function calls %v, want %v", got, want)
	}
	if got, want := r.get("once"), []string{"docs/a#1", "docs/a#2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("non-retrying function calls %v, want %v", got, want)
	}
	if s := d.Stats(); s.Failed != 1 || s.Retried != 2 || s.Delivered != 3 {
		t.Errorf("stats %+v", s)
	}
}

// TestDispatcherReload: changes before any function is loaded fire
// nothing; after a reload the new set decides.
func TestDispatcherReload(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	r := newRecorder()
	d := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, Logf: t.Logf})
	defer d.Close()
	bus.Tap(d.Tap)
	write(bus, "docs/a", 0) // before loading: never delivered
	d.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	write(bus, "docs/a", 1)
	idle(t, d)
	g := fsV2("google.cloud.firestore.document.v1.written", "other/{id}")
	g.ID = "g"
	d.SetFunctions([]Function{g})
	write(bus, "docs/a", 2)
	write(bus, "other/b", 3)
	idle(t, d)
	if got := r.get("f"); fmt.Sprint(got) != "[docs/a#1]" {
		t.Errorf("f got %v", got)
	}
	if got := r.get("g"); fmt.Sprint(got) != "[other/b#3]" {
		t.Errorf("g got %v", got)
	}
}

// TestDispatcherBound: past QueueLimit changes are dropped and counted,
// loudly, instead of growing memory without bound.
func TestDispatcherBound(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	block := make(chan struct{})
	var logged int
	var mu sync.Mutex
	d := NewDispatcher(Options{Env: testEnv, QueueLimit: 10, Logf: func(string, ...any) { mu.Lock(); logged++; mu.Unlock() },
		Deliver: func(ctx context.Context, fn string, p []byte) error { <-block; return nil }})
	bus.Tap(d.Tap)
	d.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	for i := range 100 {
		write(bus, "docs/a", i)
	}
	close(block)
	idle(t, d)
	s := d.Stats()
	d.Close()
	if s.Dropped == 0 || s.Delivered+s.Dropped < 100 || s.Delivered > 11 {
		t.Errorf("stats %+v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if logged == 0 {
		t.Errorf("drops were not reported")
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// BenchmarkDispatch measures a Firestore commit's path from Emit to its
// delivery, with 20 functions loaded of which one fires.
func BenchmarkDispatch(b *testing.B) {
	bus := event.NewBus(event.Options{History: 16})
	var n atomicCounter
	d := NewDispatcher(Options{Env: testEnv, QueueLimit: 1 << 30, Deliver: func(context.Context, string, []byte) error { n.add(); return nil }})
	defer d.Close()
	bus.Tap(d.Tap)
	var fns []Function
	for i := range 20 {
		f := fsV2("google.cloud.firestore.document.v1.written", fmt.Sprintf("coll%d/{id}", i))
		f.ID = fmt.Sprint("f", i)
		fns = append(fns, f)
	}
	d.SetFunctions(fns)
	b.ResetTimer()
	for i := range b.N {
		bus.Emit(event.Event{Kind: event.KindCommit, Service: "firestore", Path: "coll7/d",
			Commit: &event.Commit{RequestTime: t0, Database: "(default)", After: map[string]any{"n": i, "s": "text"}, UpdateTime: t0, CreateTime: t0}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Idle(ctx); err != nil {
		b.Fatal(err)
	}
	if int(n.get()) != b.N {
		b.Fatalf("%d deliveries of %d", n.get(), b.N)
	}
}

type atomicCounter struct {
	mu sync.Mutex
	n  int64
}

func (c *atomicCounter) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *atomicCounter) get() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// memJournal is a Journal in memory: what is pending, and what was
// settled.
type memJournal struct {
	mu      sync.Mutex
	pending map[string]Pending
	settled []string
	// taken is each held change taken, with the number of deliveries
	// recorded with it ("k1:1").
	taken []string
}

func (j *memJournal) Pending(ps []Pending, taken []string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range ps {
		j.pending[p.Key] = p
	}
	for _, k := range taken {
		j.taken = append(j.taken, fmt.Sprintf("%s:%d", k, len(ps)))
	}
	return nil
}

func (j *memJournal) Settled(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.pending, key)
	j.settled = append(j.settled, key)
}

// TestDispatcherJournal: each delivery is journaled before it is made
// and settled after (failed ones too, once given up); one a Close
// interrupted stays pending, and Redeliver on the next dispatcher makes
// it, with the same payload (event id), and settles it.
// conformance: functions.delivery.crash
func TestDispatcherJournal(t *testing.T) {
	t.Parallel()
	j := &memJournal{pending: map[string]Pending{}}
	bus := event.NewBus(event.Options{})
	r := newRecorder()
	r.fail = func(fn, doc string, attempt int) bool { return doc == "docs/bad#1" }
	d := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, Logf: t.Logf, Journal: j})
	bus.Tap(d.Tap)
	d.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	write(bus, "docs/a", 1)
	write(bus, "docs/bad", 1)
	idle(t, d)
	if len(j.pending) != 0 || len(j.settled) != 2 {
		t.Fatalf("after two deliveries: pending %v, settled %v", j.pending, j.settled)
	}
	// A delivery in flight when the dispatcher closes stays pending.
	started := make(chan struct{})
	var first []byte // the interrupted delivery's payload
	d2 := NewDispatcher(Options{Env: testEnv, Logf: t.Logf, Journal: j, Deliver: func(ctx context.Context, fn string, payload []byte) error {
		first = append([]byte(nil), payload...)
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	bus2 := event.NewBus(event.Options{})
	bus2.Tap(d2.Tap)
	d2.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	write(bus2, "docs/late", 7)
	<-started
	d2.Close()
	if len(j.pending) != 1 {
		t.Fatalf("after a close mid-delivery: pending %v, want the one delivery", j.pending)
	}
	var left []Pending
	for _, p := range j.pending {
		left = append(left, p)
	}
	// The next run makes it, with its cause's service and path but no
	// event of this run, and settles it.
	// Its payload is the first attempt's, byte for byte: the same event
	// id, which a function may use to skip an event it handled (the
	// guarantee is at least once).
	var cause Cause
	d3 := NewDispatcher(Options{Env: testEnv, Logf: t.Logf, Journal: j, Deliver: func(ctx context.Context, fn string, payload []byte) error {
		cause, _ = CauseOf(ctx)
		if !bytes.Equal(payload, first) {
			return fmt.Errorf("redelivered %s, first delivered %s", payload, first)
		}
		var body struct {
			Document string `json:"document"`
		}
		if err := json.Unmarshal(payload, &body); err != nil || fn != "f" || body.Document != "docs/late" {
			return fmt.Errorf("redelivered %s %s", fn, payload)
		}
		return nil
	}})
	defer d3.Close()
	d3.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	d3.Redeliver(left)
	idle(t, d3)
	if len(j.pending) != 0 || d3.Stats().Delivered != 1 {
		t.Errorf("after the redelivery: pending %v, stats %+v", j.pending, d3.Stats())
	}
	if cause.Service != "firestore" || cause.Path != "docs/late" || cause.EventID != "" || cause.Attempt != 1 {
		t.Errorf("the redelivery's cause is %+v", cause)
	}
	d.Close()
}

// TestDispatcherHeldUntilRelease: changes taken while the functions first
// load are held, then fire the functions loaded by Release, in commit
// order; with none loaded they are dropped. While held, any Realtime
// Database location may be watched, so the event scope is the root.
func TestDispatcherHeldUntilRelease(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{History: 8})
	r := newRecorder()
	d := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, Logf: t.Logf, Held: true})
	defer d.Close()
	bus.Tap(d.Tap)
	if got := d.DatabaseScope("ns", []string{"a", "b"}); got != 0 {
		t.Errorf("held: database scope %d, want 0 (the root)", got)
	}
	for i := range 3 {
		write(bus, "docs/d", i)
	}
	d.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	d.Release()
	idle(t, d)
	if got, want := r.get("f"), []string{"docs/d#0", "docs/d#1", "docs/d#2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	if got := d.DatabaseScope("ns", []string{"a", "b"}); got != -1 {
		t.Errorf("released with no database function: scope %d, want -1", got)
	}

	empty := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, Logf: t.Logf, Held: true})
	defer empty.Close()
	bus.Tap(empty.Tap)
	write(bus, "docs/e", 1)
	empty.Release() // nothing loaded: the held change fires nothing
	idle(t, empty)
	if s := empty.Stats(); s.Matched != 0 {
		t.Fatalf("with no functions %d deliveries were made", s.Matched)
	}
}

// TestDispatcherHeldChanges: a change held in the outbox with its commit
// (event.Event.Held) is taken in the same Journal record as the
// deliveries it was matched to, or alone when it fires nothing; Wants
// asks the outbox to hold only the changes that can fire while there
// are functions or the dispatcher holds; and the changes an earlier run
// held and never took (Resume) are matched before this run's.
// conformance: functions.delivery.crash
func TestDispatcherHeldChanges(t *testing.T) {
	t.Parallel()
	j := &memJournal{pending: map[string]Pending{}}
	bus := event.NewBus(event.Options{})
	r := newRecorder()
	r.resumed = true
	d := NewDispatcher(Options{Env: testEnv, Deliver: r.deliver, Logf: t.Logf, Journal: j, Held: true})
	defer d.Close()
	commit := event.Event{Kind: event.KindCommit, Service: "firestore", Path: "docs/a"}
	if !d.Wants(&commit) {
		t.Errorf("a held dispatcher does not want a Firestore commit held")
	}
	if request := (event.Event{Kind: event.KindRequest, Service: "firestore"}); d.Wants(&request) {
		t.Errorf("a request event is wanted held")
	}
	// Of Auth's changes, a user's creation and deletion, not an
	// import's creations nor a sign-in.
	for _, c := range []struct {
		op, note string
		want     bool
	}{{"user_create", "", true}, {"user_delete", "", true}, {"user_create", "import", false}, {"sign_in", "", false}, {"user_update", "", false}} {
		ev := event.Event{Kind: event.KindMutation, Service: "auth", Method: c.op, Mutation: &event.Mutation{Op: c.op, Note: c.note}}
		if d.Wants(&ev) != c.want {
			t.Errorf("Auth %s (note %q) wanted held: %v, want %v", c.op, c.note, !c.want, c.want)
		}
	}
	bus.Tap(d.Tap)
	emit := func(doc, held string, n int) {
		bus.Emit(event.Event{Kind: event.KindCommit, Service: "firestore", Path: doc, Held: held,
			Commit: &event.Commit{RequestTime: t0, Database: "(default)", After: map[string]any{"n": n}, UpdateTime: t0, CreateTime: t0}})
	}
	emit("docs/b", "k2", 2)
	emit("other/x", "k3", 3)
	// The earlier run's change goes first.
	d.Resume([]event.Event{{ID: "evt-9", Seq: 9, Kind: event.KindCommit, Service: "firestore", Path: "docs/a", Held: "k1",
		Commit: &event.Commit{RequestTime: t0, Database: "(default)", After: map[string]any{"n": 1}, UpdateTime: t0, CreateTime: t0}}})
	d.SetFunctions([]Function{fsV2("google.cloud.firestore.document.v1.written", "docs/{id}")})
	d.Release()
	idle(t, d)
	if got, want := r.calls["f"], []string{"docs/a#1", "docs/b#2"}; !slices.Equal(got, want) {
		t.Errorf("deliveries %v, want %v", got, want)
	}
	if want := []string{"k1:1", "k2:1", "k3:0"}; !slices.Equal(j.taken, want) {
		t.Errorf("taken %v, want %v (each with its deliveries, the one that fires nothing alone)", j.taken, want)
	}
	// Only the changes of a service a function watches are wanted.
	if rtdb := (event.Event{Kind: event.KindCommit, Service: "database", Path: "x"}); d.Wants(&rtdb) {
		t.Errorf("a Realtime Database commit is wanted with only Firestore functions")
	}
	// Without functions nothing is wanted.
	d.SetFunctions(nil)
	if d.Wants(&commit) {
		t.Errorf("a dispatcher with no functions wants a commit held")
	}
}
