package pubsub_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// BenchmarkPublishStore publishes batches of 100 messages of 100 bytes
// with the sandbox's store (bbolt, synced every second) as the bucket,
// as `pyric serve` runs.
func BenchmarkPublishStore(b *testing.B) {
	e, tp := storeTopic(b)
	msgs := make([]*pubsub.Message, 100)
	for i := range msgs {
		msgs[i] = &pubsub.Message{Data: make([]byte, 100), Attributes: map[string]string{"k": "v"}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Publish(tp, msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(100 * 100)
}

// BenchmarkPublishStoreConcurrent publishes one message per call from
// 64 goroutines with the sandbox's store, as the harness's concurrent
// publishers do: what it measures is the group commit.
func BenchmarkPublishStoreConcurrent(b *testing.B) {
	e, tp := storeTopic(b)
	b.ReportAllocs()
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		msgs := []*pubsub.Message{{Data: make([]byte, 100)}}
		for pb.Next() {
			if _, err := e.Publish(tp, msgs); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// storeTopic opens an engine over the sandbox's store (bbolt, as `pyric
// serve` runs it) with one topic and one subscription to it, all closed
// when b ends, and returns the engine and the topic's name.
func storeTopic(b *testing.B) (*pubsub.Engine, string) {
	st, err := sandbox.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	e, err := pubsub.NewEngine(service.Env{Bucket: st.Bucket("pubsub")}, pubsub.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	const tp, sb = "projects/p/topics/topic", "projects/p/subscriptions/sub"
	if _, err := e.CreateTopic(&pubsub.Topic{Name: tp}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateSubscription(&pubsub.Subscription{Name: sb, Topic: tp}); err != nil {
		b.Fatal(err)
	}
	return e, tp
}

// BenchmarkDeliverStore leases and acknowledges messages over a stream
// in batches of up to 1,000, as a streaming pull with the client's
// defaults does, with the sandbox's store as the bucket; the backlog is
// published (in batches of 100) outside the clock.
func BenchmarkDeliverStore(b *testing.B) {
	e, tp := storeTopic(b)
	msgs := make([]*pubsub.Message, 100)
	for i := range msgs {
		msgs[i] = &pubsub.Message{Data: make([]byte, 100)}
	}
	for range (b.N + 99) / 100 {
		if _, err := e.Publish(tp, msgs); err != nil {
			b.Fatal(err)
		}
	}
	st, err := e.OpenStream("projects/p/subscriptions/sub", 60, 1000, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	ctx := context.Background()
	for got := 0; got < b.N; {
		rs, err := st.Receive(ctx)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.AckID
		}
		if err := e.Acknowledge("projects/p/subscriptions/sub", ids); err != nil {
			b.Fatal(err)
		}
		got += len(rs)
	}
}

// probeService only keeps the environment the sandbox gave it.
type probeService struct{}

func (probeService) Name() string                       { return "probe" }
func (probeService) Reset() error                       { return nil }
func (probeService) Snapshot() (json.RawMessage, error) { return json.RawMessage("{}"), nil }
func (probeService) Restore(json.RawMessage) error      { return nil }

// BenchmarkPublishHeld publishes one message per call over a durable
// sandbox's store with the outbox wanting none of the publishes
// ("plain": no Pub/Sub trigger loaded) and all of them ("held": a
// function's trigger watches the topic, so each publish's event is
// written to the outbox in its transaction), to a topic with no
// subscription, as a function's topic is: what holding costs a publish.
// The held events are taken as the dispatcher takes them (deletions in
// a Log append of its own, every 64 publishes, outside the clock), so
// the outbox stays as small as it does in use.
func BenchmarkPublishHeld(b *testing.B) {
	for _, held := range []bool{false, true} {
		name := "plain"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			var env service.Env
			sb, err := sandbox.Open(sandbox.Options{Project: "p", DataDir: b.TempDir(), Services: []service.Registration{{Name: "probe",
				New: func(e service.Env) (service.Service, error) { env = e; return probeService{}, nil }}}})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			e, err := pubsub.NewEngine(env, pubsub.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			env.Outbox.Want(func(*event.Event) bool { return held })
			const tp = "projects/p/topics/orders"
			if _, err := e.CreateTopic(&pubsub.Topic{Name: tp}); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			var taken []service.LogChange
			total := 0 // publishes held
			sb.Events().Tap(func(ev event.Event) {
				if ev.Held != "" {
					mu.Lock()
					taken = append(taken, service.LogChange{Key: ev.Held, Outbox: true})
					total++
					mu.Unlock()
				}
			})
			take := func() {
				mu.Lock()
				defer mu.Unlock()
				if len(taken) > 0 {
					if err := env.Log.Append("taken", taken); err != nil {
						b.Fatal(err)
					}
					taken = taken[:0]
				}
			}
			msgs := []*pubsub.Message{{Data: make([]byte, 100)}}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, err := e.Publish(tp, msgs); err != nil {
					b.Fatal(err)
				}
				if n++; n%64 == 0 {
					b.StopTimer()
					take()
					b.StartTimer()
				}
			}
			take()
			if held != (total > 0) {
				b.Fatalf("held %v, yet %d of %d publishes were held", held, total, n)
			}
		})
	}
}
