package event

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// seqs lists the events' sequence numbers, a gap marker as -missed.
func seqs(evs []Event) []int {
	out := make([]int, len(evs))
	for i, e := range evs {
		out[i] = int(e.Seq)
		if e.Kind == KindGap {
			out[i] = -int(e.Missed)
		}
	}
	return out
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A queue delivers in order, in one batch, and a slow reader loses
// events with a gap marker as a Subscription's does.
func TestQueueTakesInOrderWithGaps(t *testing.T) {
	b := NewBus(Options{})
	q := b.NewQueue(2, nil)
	defer q.Close()
	for range 5 {
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	}
	if q.Dropped() != 3 {
		t.Errorf("Dropped = %d, want 3", q.Dropped())
	}
	if got := seqs(q.Take(nil)); !sameInts(got, []int{1, 2}) {
		t.Fatalf("first batch %v, want [1 2]", got)
	}
	if got := q.Take(nil); len(got) != 0 {
		t.Fatalf("an empty queue gave %v", seqs(got))
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}}) // no room after the marker and 6
	if got := seqs(q.Take(nil)); !sameInts(got, []int{-3, 6}) {
		t.Fatalf("after a loss %v, want the gap of 3 then 6", got)
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if got := seqs(q.Take(nil)); !sameInts(got, []int{-1, 8}) {
		t.Fatalf("after the second loss %v, want the gap of 1 then 8", got)
	}
}

// A queue is bounded in bytes as a Subscription is; an empty queue takes
// any one event.
func TestQueueIsBoundedInBytes(t *testing.T) {
	b := NewBus(Options{SubscriptionBytes: 10_000})
	q := b.NewQueue(1000, nil)
	defer q.Close()
	for range 20 {
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"s": strings.Repeat("x", 3000)}}})
	}
	got := q.Take(nil)
	if len(got) < 1 || len(got) > 3 || q.Dropped() != uint64(20-len(got)) {
		t.Fatalf("took %d events of ~3 KB under a 10 KB bound, dropped %d", len(got), q.Dropped())
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"s": strings.Repeat("y", 50_000)}}})
	if got := q.Take(nil); len(got) != 2 || got[0].Kind != KindGap || got[1].Seq != 21 {
		t.Fatalf("after the loss: %v, want the gap then 21", seqs(got))
	}
}

// Ready wakes the reader once per batch: one token however many events
// come, none before the count asked for, none left for a batch already
// taken.
func TestQueueReadyWakesOncePerBatch(t *testing.T) {
	b := NewBus(Options{})
	q := b.NewQueue(100, nil)
	defer q.Close()
	ready := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	ch := q.Ready(1)
	if ready(ch) {
		t.Fatal("ready before any event")
	}
	for range 3 {
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	}
	if len(ch) != 1 {
		t.Fatalf("%d tokens for one batch", len(ch))
	}
	q.Take(nil)
	if ready(ch) {
		t.Fatal("a token left for a batch already taken")
	}
	ch = q.Ready(3)
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if ready(ch) {
		t.Fatal("ready at 2 events of 3")
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if !ready(ch) {
		t.Fatal("not ready at 3 events of 3")
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if ready(ch) {
		t.Fatal("a second token without a second Ready")
	}
	if !ready(q.Ready(1)) {
		t.Fatal("Ready(1) with events waiting is not ready at once")
	}
	// A token left by an earlier Ready does not answer a later one's
	// larger count.
	q.Take(nil)
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	q.Ready(1)
	if ready(q.Ready(5)) {
		t.Fatal("Ready(5) answered by Ready(1)'s token")
	}
}

// Take clears the spare room it reuses: the queue holds nothing of a
// batch handed back.
func TestQueueTakeClearsSpare(t *testing.T) {
	b := NewBus(Options{})
	q := b.NewQueue(100, nil)
	defer q.Close()
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"a": 1}}})
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{After: map[string]any{"a": 2}}})
	first := q.Take(nil)
	second := q.Take(first)
	if len(second) != 0 {
		t.Fatalf("second batch %v", seqs(second))
	}
	for i, e := range first[:cap(first)] {
		if e.Commit != nil || e.Seq != 0 {
			t.Fatalf("spare slot %d still holds event %d", i, e.Seq)
		}
	}
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if got := seqs(q.Take(nil)); !sameInts(got, []int{3}) {
		t.Fatalf("after reuse: %v", got)
	}
}

// A queue of the events keep accepts neither holds nor counts the others.
func TestQueueKeepsOnlyAccepted(t *testing.T) {
	b := NewBus(Options{})
	q := b.NewQueue(2, func(e *Event) bool { return e.Kind == KindRequest })
	defer q.Close()
	for range 3 {
		b.Emit(Event{Kind: KindRequest, Request: &Request{Verdict: Allow}})
		b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
		q.Take(nil)
	}
	if q.Dropped() != 0 {
		t.Errorf("Dropped = %d: filtered events are not losses", q.Dropped())
	}
}

// A reader taking batches while batches of three are emitted takes whole
// batches only: EmitBatch offers them under one hold of the lock.
func TestQueueTakesWholeEmitBatches(t *testing.T) {
	b := NewBus(Options{})
	q := b.NewQueue(1<<20, nil)
	defer q.Close()
	const batches = 2000
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range batches {
			EmitBatch(b, []Event{{Kind: KindRequest, Path: strconv.Itoa(i)}, {Kind: KindCommit, Path: strconv.Itoa(i)}, {Kind: KindCommit, Path: strconv.Itoa(i)}})
		}
	})
	next := uint64(1)
	var spare []Event
	for next <= 3*batches {
		<-q.Ready(1)
		got := q.Take(spare)
		if len(got)%3 != 0 {
			t.Fatalf("took %d events: part of a batch", len(got))
		}
		for _, e := range got {
			if e.Seq != next {
				t.Fatalf("took seq %d, want %d", e.Seq, next)
			}
			next++
		}
		spare = got
	}
	wg.Wait()
}

// Close closes Ready's channel and stops the queue; what it held can
// still be taken.
func TestQueueClose(t *testing.T) {
	b := NewBus(Options{})
	q := b.NewQueue(10, nil)
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	q.Close()
	q.Close()
	b.Emit(Event{Kind: KindCommit, Commit: &Commit{}})
	if _, open := <-q.Ready(5); open {
		t.Fatal("Ready's channel open after Close")
	}
	if got := seqs(q.Take(nil)); !sameInts(got, []int{1}) {
		t.Fatalf("after Close took %v, want [1]", got)
	}
}

// Sizing a batch's events with their documents memoized gives what
// sizing each alone gives, maps shared between events or not, more maps
// than the memo holds included.
func TestHeapSizeMemoIsHeapSize(t *testing.T) {
	doc := func(i int) map[string]any {
		return map[string]any{"i": json.Number(strconv.Itoa(i)), "s": strings.Repeat("x", i), "m": map[string]any{"a": []any{"b", i}}}
	}
	var es []Event
	for i := range 12 {
		w := doc(i)
		es = append(es,
			Event{Kind: KindRequest, Request: &Request{Seen: &Seen{Data: w, Before: &Resource{Exists: i%2 == 0, Data: doc(i + 100)}}}},
			Event{Kind: KindCommit, Commit: &Commit{Before: doc(i + 200), After: w, Written: w}},
			Event{Kind: KindMutation, Mutation: &Mutation{Previous: doc(i % 3), Current: w}})
	}
	var docs docSizes
	for i := range es {
		if got, want := heapSize(&es[i], &docs), HeapSize(&es[i]); got != want {
			t.Fatalf("event %d: memoized %d, alone %d", i, got, want)
		}
	}
}
