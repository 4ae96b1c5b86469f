package event

import (
	"fmt"
	"testing"
	"time"
)

// benchToken is a signed-in user's claims as the rules see them, shared
// by every event of that user's connection.
func benchToken() map[string]any {
	return map[string]any{"sub": "u1", "uid": "u1", "email": "u1@example.com", "email_verified": false,
		"auth_time": int64(1700000000), "iat": int64(1700000000), "exp": int64(1700003600), "aud": "demo-p", "iss": "https://securetoken.google.com/demo-p",
		"firebase": map[string]any{"identities": map[string]any{"email": []any{"u1@example.com"}}, "sign_in_provider": "password"}}
}

// BenchmarkEmit emits one event at a time onto a bus with a 1,000-event
// history and 0, 1 or 4 readers (half Subscriptions, half Queues, all
// drained every 128 events on the benchmark's goroutine): a Realtime
// Database listener delivery of a signed-in user (what a 1,000-listener
// fan-out emits per listener), a Realtime Database commit, and a
// Firestore set's request and commit as one batch.
func BenchmarkEmit(b *testing.B) {
	token := benchToken()
	target := &Target{Kind: "path", Path: "/rooms/r1", Query: map[string]any{"orderBy": "$key"}}
	doc := map[string]any{"i": int64(7), "g": int64(7), "s": "x", "tags": []any{"a", "b"}, "m": map[string]any{"k": "v"}}
	kinds := []struct {
		name string
		evs  func() []Event
	}{
		{"listener", func() []Event {
			return []Event{{Kind: KindListener, Service: "database", Path: "/rooms/r1", Origin: OriginListener,
				Identity: Identity{Lens: LensUser, UID: "u1", Token: token},
				Listener: &Listener{Phase: Deliver, ListenerID: "l1", Target: target}}}
		}},
		{"rtdbcommit", func() []Event {
			return []Event{{Kind: KindCommit, Service: "database", Method: "set", Path: "/rooms/r1/msg",
				Identity: Identity{Lens: LensUser, UID: "u1", Token: token},
				Commit:   &Commit{RequestTime: time.Unix(1, 0), Before: "a", After: "b", Database: "demo-p"}}}
		}},
		{"fsset", func() []Event {
			return []Event{{Kind: KindRequest, Service: "firestore", Method: "create", Path: "bench/d1",
				Request: &Request{Verdict: Bypassed, Seen: &Seen{Data: doc, Before: &Resource{}}}},
				{Kind: KindCommit, Service: "firestore", Method: "create", Path: "bench/d1",
					Commit: &Commit{RequestTime: time.Unix(1, 0), After: doc, Written: doc}}}
		}},
	}
	for _, k := range kinds {
		for _, readers := range []int{0, 1, 4} {
			b.Run(fmt.Sprintf("%s/readers=%d", k.name, readers), func(b *testing.B) {
				bus := NewBus(Options{History: 1000})
				var subs []*Subscription
				var queues []*Queue
				for i := range readers {
					if i%2 == 0 {
						queues = append(queues, bus.NewQueue(1024, nil))
					} else {
						subs = append(subs, bus.Subscribe(1024))
					}
				}
				var spare []Event
				evs := k.evs()
				batch := make([]Event, len(evs))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if len(evs) == 1 {
						bus.Emit(evs[0])
					} else {
						copy(batch, evs)
						bus.EmitBatch(batch)
					}
					if i%128 == 127 {
						for _, q := range queues {
							spare = q.Take(spare)
						}
						for _, s := range subs {
							for len(s.ch) > 0 {
								<-s.ch
							}
						}
					}
				}
			})
		}
	}
}
