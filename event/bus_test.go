package event

import (
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/identity"
)

func TestBusHistoryIsBoundedByCount(t *testing.T) {
	b := NewBus(Options{History: 3, Now: func() time.Time { return time.UnixMilli(42) }})
	for i := 0; i < 5; i++ {
		b.Emit(Event{Kind: KindRequest, Path: string(rune('a' + i)), Request: &Request{Verdict: Allow}})
	}
	h := b.History()
	if len(h) != 3 {
		t.Fatalf("len(history) = %d, want 3", len(h))
	}
	for i, want := range []string{"c", "d", "e"} {
		if h[i].Path != want || h[i].Seq != uint64(i+3) || h[i].ID != "evt-"+string(rune('3'+i)) {
			t.Errorf("history[%d] = %+v, want path %q seq %d", i, h[i], want, i+3)
		}
		if !h[i].At.Equal(time.UnixMilli(42)) || h[i].Actor.Kind != ActorApp {
			t.Errorf("history[%d] not stamped: %+v", i, h[i])
		}
	}
	if got := b.Since(4, 0); len(got) != 1 || got[0].Path != "e" {
		t.Errorf("Since(4) = %+v", got)
	}
	if got := b.Since(0, 2); len(got) != 2 || got[0].Path != "c" {
		t.Errorf("Since(0, 2) = %+v", got)
	}
	b.Clear()
	if b.Len() != 0 || b.Seq() != 5 {
		t.Errorf("after Clear: Len %d, Seq %d", b.Len(), b.Seq())
	}
}

func TestBusHistoryIsBoundedByBytes(t *testing.T) {
	b := NewBus(Options{History: 1000, HistoryBytes: 10_000})
	big := strings.Repeat("x", 3000)
	for i := 0; i < 20; i++ {
		b.Emit(Event{Kind: KindCommit, Path: "a/b", Commit: &Commit{After: map[string]any{"s": big}}})
	}
	if n := b.Len(); n < 1 || n > 3 {
		t.Fatalf("history kept %d events of ~3 KB under a 10 KB bound", n)
	}
	// The newest event is kept even when it alone is over the bound.
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"s": strings.Repeat("y", 20_000)}}})
	if h := b.History(); len(h) != 1 || h[0].Seq != 21 {
		t.Fatalf("history = %d events", len(h))
	}
}

func TestSlowSubscriberGetsAGapNeverBlocks(t *testing.T) {
	b := NewBus(Options{})
	s := b.Subscribe(2)
	defer s.Close()
	for i := 0; i < 5; i++ {
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	}
	if s.Dropped() != 3 {
		t.Errorf("Dropped = %d, want 3", s.Dropped())
	}
	first, second := <-s.Events(), <-s.Events()
	if first.Seq != 1 || second.Seq != 2 {
		t.Fatalf("buffered %d, %d", first.Seq, second.Seq)
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	gap, next := <-s.Events(), <-s.Events()
	if gap.Kind != KindGap || gap.Gap == nil || gap.Missed != 3 || next.Seq != 6 {
		t.Fatalf("after a loss: %+v then %+v", gap, next)
	}
}

// A filtered subscription receives only the events its filter keeps, in
// order and with their bus sequence; the others neither fill its buffer
// nor count as missed.
func TestSubscribeWhereDeliversOnlyKeptEvents(t *testing.T) {
	b := NewBus(Options{})
	s := b.SubscribeWhere(2, func(e *Event) bool { return e.Kind == KindRequest && e.Verdict == Deny })
	defer s.Close()
	for i := 0; i < 6; i++ {
		v := Allow
		if i%3 == 2 {
			v = Deny
		}
		b.Emit(Event{Kind: KindRequest, Request: &Request{Verdict: v}})
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	}
	if s.Dropped() != 0 {
		t.Errorf("Dropped = %d, want 0: filtered events are not losses", s.Dropped())
	}
	first, second := <-s.Events(), <-s.Events()
	if first.Seq != 5 || second.Seq != 11 || first.Verdict != Deny || second.Verdict != Deny {
		t.Fatalf("delivered %d (%s), %d (%s); want the denials 5 and 11", first.Seq, first.Verdict, second.Seq, second.Verdict)
	}
	select {
	case e := <-s.Events():
		t.Fatalf("delivered %d (%s) besides the denials", e.Seq, e.Kind)
	default:
	}
}

// A subscriber's buffer is bounded in bytes as well as in events: events
// of large documents past the bound are lost with a gap, as past a full
// buffer, and an empty buffer takes any one event.
func TestSlowSubscriberIsBoundedInBytes(t *testing.T) {
	b := NewBus(Options{SubscriptionBytes: 10_000})
	s := b.Subscribe(1000)
	defer s.Close()
	big := func() Event {
		return Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"s": strings.Repeat("x", 3000)}}}
	}
	for range 20 {
		b.Emit(big())
	}
	if got := len(s.Events()); got < 1 || got > 3 {
		t.Fatalf("buffer holds %d events of ~3 KB under a 10 KB bound", got)
	}
	kept := uint64(len(s.Events()))
	if s.Dropped() != 20-kept {
		t.Errorf("Dropped = %d, want %d", s.Dropped(), 20-kept)
	}
	for i := range kept {
		if e := <-s.Events(); e.Seq != i+1 {
			t.Fatalf("event %d: seq %d", i, e.Seq)
		}
	}
	// Taken events free their bytes; the loss is visible to the
	// subscriber, then delivery resumes.
	b.Emit(big())
	gap, next := <-s.Events(), <-s.Events()
	if gap.Kind != KindGap || gap.Missed != 20-kept || next.Seq != 21 {
		t.Fatalf("after the loss: %+v then seq %d", gap.Gap, next.Seq)
	}
	// An event over the bound alone still reaches an empty buffer.
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"s": strings.Repeat("y", 50_000)}}})
	if e := <-s.Events(); e.Seq != 22 {
		t.Fatalf("oversized event into an empty buffer: got seq %d", e.Seq)
	}
	// Small events within the bound all wait.
	for range 20 {
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	}
	if got := len(s.Events()); got != 20 {
		t.Fatalf("buffer holds %d of 20 small events", got)
	}
}

func TestConcurrentEmitAndClose(t *testing.T) {
	b := NewBus(Options{History: 100})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := b.Subscribe(10)
			for j := 0; j < 100; j++ {
				b.Emit(Event{Kind: KindRequest, Request: &Request{Verdict: Deny}})
			}
			s.Close()
			s.Close()
		}()
	}
	wg.Wait()
	if b.Len() != 100 || b.Seq() != 400 {
		t.Errorf("Len = %d, Seq = %d", b.Len(), b.Seq())
	}
}

// TestEventJSON pins the schema's names: payload fields sit beside the
// header, and a round trip keeps the payload typed.
func TestEventJSON(t *testing.T) {
	e := Event{Seq: 1, ID: "evt-1", At: time.UnixMilli(5).UTC(), Kind: KindRequest, Service: "firestore", Method: "create", Path: "posts/p",
		Identity: IdentityOf(identity.NewUser("u", map[string]any{"role": "x"})), Origin: OriginClient,
		Request: &Request{Verdict: Deny, Rule: &Rule{Line: 6, Column: 7, Operations: []string{"create"}, MatchPath: "/posts/{id}", Condition: "false"},
			Trace:    []Step{{Text: "false", Value: "false", Line: 6, Column: 30}},
			Decision: &Explanation{Engine: "firestore", Reason: "false for 'create' @ L6"}}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"request"`, `"verdict":"deny"`, `"rule":{"index":0,"operations":["create"],"line":6,"column":7`,
		`"trace":[{"text":"false"`, `"identity":{"lens":"user","uid":"u","token":{"role":"x"}}`, `"at":"1970-01-01T00:00:00.005Z"`, `"origin":"client"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), `"phase"`) || strings.Contains(string(b), `"requestTime"`) {
		t.Errorf("other kinds' fields leak into a request: %s", b)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Request == nil || back.Verdict != Deny || back.Rule.Line != 6 || back.Commit != nil || back.Listener != nil {
		t.Errorf("round trip: %+v", back)
	}
	l := Event{Kind: KindListener, Listener: &Listener{Phase: Deliver, ListenerID: "l1", Target: &Target{Kind: "query", Path: "rooms"}, Size: 2, Added: 2}}
	b, _ = json.Marshal(l)
	for _, want := range []string{`"phase":"deliver"`, `"listenerId":"l1"`, `"addedCount":2`, `"size":2`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

func TestWhoCarriesTheActor(t *testing.T) {
	var e Event
	e.Who(identity.NewUser("u", nil).Via(identity.Actor{Kind: identity.Agent, Name: "claude"}))
	if e.Actor.Kind != ActorAgent || e.Actor.Name != "claude" || e.Identity.Lens != LensUser || e.Identity.UID != "u" {
		t.Fatalf("event = %+v", e)
	}
	b := NewBus(Options{})
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if h := b.History(); h[0].Actor.Kind != ActorApp {
		t.Fatalf("default actor = %+v", h[0].Actor)
	}
}

// The history's byte bound counts the heap the events hold: HeapSize's
// estimate for 10000 commit events of small documents is within a third
// of what they measurably take.
func TestHeapSizeEstimate(t *testing.T) {
	const n = 10000
	b := NewBus(Options{History: n, HistoryBytes: 1 << 40})
	doc := func(i int) map[string]any {
		return map[string]any{"n": json.Number(strconv.Itoa(i)), "s": strings.Repeat("x", i%50), "m": map[string]any{"a": true, "b": []any{"c", json.Number("1")}}}
	}
	runtime.GC()
	var full, empty runtime.MemStats
	est := 0
	for i := range n {
		e := Event{Kind: KindCommit, Method: "set", Service: "firestore", Path: "load/d" + strconv.Itoa(i),
			Commit: &Commit{RequestTime: time.Now(), Before: doc(i), After: doc(i + 1), Written: doc(i + 2)}}
		est += HeapSize(&e)
		b.Emit(e)
	}
	runtime.GC()
	runtime.ReadMemStats(&full)
	b.Clear()
	runtime.GC()
	runtime.ReadMemStats(&empty)
	held := int(full.HeapAlloc) - int(empty.HeapAlloc)
	if ratio := float64(est) / float64(held); ratio < 0.67 || ratio > 1.5 {
		t.Errorf("estimated %d bytes per event, held %d", est/n, held/n)
	}
	t.Logf("estimated %d bytes per event, held %d", est/n, held/n)
	runtime.KeepAlive(b)
}

// The history keeps what a plain list trimmed by the same bounds keeps,
// while its ring grows, wraps and is cleared (a reference model, random
// event sizes).
func TestBusHistoryMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, max := range []int{1, 3, 100, 1000} {
		b := NewBus(Options{History: max, HistoryBytes: 40_000})
		type kept struct {
			seq  uint64
			size int
		}
		var model []kept
		bytes := 0
		var seq uint64
		for range 5000 {
			if rng.IntN(500) == 0 {
				b.Clear()
				model, bytes = nil, 0
				continue
			}
			e := Event{Kind: KindCommit, Path: strings.Repeat("p", rng.IntN(2000))}
			size := HeapSize(&e)
			b.Emit(e)
			seq++
			for len(model) > 0 && (len(model) == max || bytes+size > 40_000) {
				bytes -= model[0].size
				model = model[1:]
			}
			model = append(model, kept{seq, size})
			bytes += size
			if rng.IntN(50) == 0 { // Since(after, limit) is the model's tail past after
				after, limit := uint64(rng.Int64N(int64(seq)+2)), rng.IntN(4)*rng.IntN(200)
				var want []uint64
				for _, k := range model {
					if k.seq > after && (limit == 0 || len(want) < limit) {
						want = append(want, k.seq)
					}
				}
				got := b.Since(after, limit)
				if len(got) != len(want) {
					t.Fatalf("max %d: Since(%d, %d) holds %d events, the model %d", max, after, limit, len(got), len(want))
				}
				for i := range got {
					if got[i].Seq != want[i] {
						t.Fatalf("max %d: Since(%d, %d)[%d] is #%d, the model's #%d", max, after, limit, i, got[i].Seq, want[i])
					}
				}
			}
		}
		h := b.History()
		if len(h) != len(model) {
			t.Fatalf("max %d: history holds %d events, the model %d", max, len(h), len(model))
		}
		for i := range h {
			if h[i].Seq != model[i].seq {
				t.Fatalf("max %d: event %d is #%d, the model's #%d", max, i, h[i].Seq, model[i].seq)
			}
		}
	}
}

// TestTapSeesEveryEvent: a tap receives every event in order, stamped,
// even while a subscriber with a tiny buffer loses events.
func TestTapSeesEveryEvent(t *testing.T) {
	b := NewBus(Options{History: 4})
	slow := b.Subscribe(2)
	defer slow.Close()
	var got []uint64
	b.Tap(func(e Event) { got = append(got, e.Seq) })
	for i := 0; i < 100; i++ {
		b.Emit(Event{Kind: KindCommit, Service: "firestore", Commit: &Commit{}})
	}
	if slow.Dropped() == 0 {
		t.Fatalf("the slow subscriber lost nothing; the test does not exercise loss")
	}
	if len(got) != 100 {
		t.Fatalf("tap saw %d events, want 100", len(got))
	}
	for i, s := range got {
		if s != uint64(i+1) {
			t.Fatalf("tap event %d has seq %d", i, s)
		}
	}
}

// TestEmitBatchIsOne: a batch's events get consecutive sequence numbers,
// are stamped as Emit stamps, reach subscribers in order, and a reader of
// the history finds all of a batch or none of it.
func TestEmitBatchIsOne(t *testing.T) {
	b := NewBus(Options{History: 10000, Now: func() time.Time { return time.UnixMilli(42) }})
	sub := b.Subscribe(10000)
	const batches = 300
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range batches {
			EmitBatch(b, []Event{{Kind: KindRequest, Path: strconv.Itoa(i)}, {Kind: KindCommit, Path: strconv.Itoa(i)}, {Kind: KindCommit, Path: strconv.Itoa(i)}})
		}
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		if n := len(b.History()); n%3 != 0 {
			t.Fatalf("the history holds %d events: part of a batch", n)
		}
	}
	h := b.History()
	if len(h) != 3*batches {
		t.Fatalf("%d events, want %d", len(h), 3*batches)
	}
	for i, e := range h {
		if e.Seq != uint64(i+1) || e.ID != "evt-"+strconv.Itoa(i+1) || e.Path != strconv.Itoa(i/3) || !e.At.Equal(time.UnixMilli(42)) || e.Actor.Kind != ActorApp {
			t.Fatalf("event %d: %+v", i, e)
		}
		if got := <-sub.Events(); got.Seq != e.Seq {
			t.Fatalf("the subscriber's event %d has seq %d, want %d", i, got.Seq, e.Seq)
		}
	}
}
