package event

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/identity"
)

func TestBusHistoryIsBounded(t *testing.T) {
	b := NewBus(Options{History: 3, Now: func() time.Time { return time.UnixMilli(42) }})
	for i := 0; i < 5; i++ {
		b.Emit(Event{Kind: KindOperation, Path: string(rune('a' + i))})
	}
	h := b.History()
	if len(h) != 3 {
		t.Fatalf("len(history) = %d, want 3", len(h))
	}
	for i, want := range []string{"c", "d", "e"} {
		if h[i].Path != want {
			t.Errorf("history[%d].Path = %q, want %q", i, h[i].Path, want)
		}
		if h[i].At != 42 || !strings.HasPrefix(h[i].ID, "evt-") {
			t.Errorf("history[%d] not stamped: %+v", i, h[i])
		}
	}
	b.Clear()
	if b.Len() != 0 {
		t.Errorf("Len after Clear = %d", b.Len())
	}
}

func TestSubscriberNeverBlocksEmit(t *testing.T) {
	b := NewBus(Options{})
	s := b.Subscribe(2)
	defer s.Close()
	for i := 0; i < 5; i++ {
		b.Emit(Event{Kind: KindCommit})
	}
	if got := len(s.Events()); got != 2 {
		t.Errorf("buffered = %d, want 2", got)
	}
	if s.Dropped() != 3 {
		t.Errorf("Dropped = %d, want 3", s.Dropped())
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
				b.Emit(Event{Kind: KindOperation})
			}
			s.Close()
			s.Close()
		}()
	}
	wg.Wait()
	if b.Len() != 100 {
		t.Errorf("Len = %d, want 100", b.Len())
	}
}

func TestEventJSONNames(t *testing.T) {
	size := 2
	e := Event{Kind: KindListener, ID: "evt-1", At: 5, Service: "firestore", Auth: identity.NewUser("u", nil),
		Phase: "delivery", ListenerID: "l1", Target: &Target{Kind: "query", Path: "rooms"}, Size: &size, Added: 2}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"listener"`, `"listenerId":"l1"`, `"addedCount":2`, `"size":2`, `"auth":{"uid":"u"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}
