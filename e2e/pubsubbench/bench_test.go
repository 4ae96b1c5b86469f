package pubsubbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

const floorEnv = "PYRIC_PUBSUB_FLOOR_ADDR"

func TestMain(m *testing.M) {
	if addr := os.Getenv(floorEnv); addr != "" {
		serveFloor(addr)
		return
	}
	code := m.Run()
	pubsubtest.StopAll()
	os.Exit(code)
}

// floor is a do-nothing Pub/Sub server: Publish answers ids at once,
// StreamingPull sends nothing.
type floor struct {
	pb.UnimplementedPublisherServer
	pb.UnimplementedSubscriberServer
	n atomic.Int64
}

func (f *floor) CreateTopic(_ context.Context, t *pb.Topic) (*pb.Topic, error) { return t, nil }
func (f *floor) CreateSubscription(_ context.Context, s *pb.Subscription) (*pb.Subscription, error) {
	return s, nil
}
func (f *floor) Publish(_ context.Context, r *pb.PublishRequest) (*pb.PublishResponse, error) {
	ids := make([]string, len(r.Messages))
	for i := range ids {
		ids[i] = strconv.FormatInt(f.n.Add(1), 10)
	}
	return &pb.PublishResponse{MessageIds: ids}, nil
}

func serveFloor(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	g := grpc.NewServer()
	f := &floor{}
	pb.RegisterPublisherServer(g, f)
	pb.RegisterSubscriberServer(g, f)
	g.Serve(l)
}

type target struct {
	name    string
	host    string
	startup time.Duration
	deliver bool // the do-nothing server delivers nothing
}

type result map[string]float64

// wideDelivery names the delivery workload with 4 streams of 10k
// outstanding messages each.
const wideDelivery = "delivery 4 streams msg/s"

// TestBench runs the workloads.
func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	cfg := struct{ batched, clients, perClient, delivered, latency int }{2000, 8, 20, 1000, 100}
	if full {
		cfg = struct{ batched, clients, perClient, delivered, latency int }{100000, 64, 300, 20000, 1000}
	}
	var targets []target

	// pyric serve, durable (the default), in its own process; built
	// before the clock starts.
	e2etest.Pyric(t)
	start := time.Now()
	srv := e2etest.StartServe(t, t.TempDir(), "--data-dir", t.TempDir())
	targets = append(targets, target{name: "pyric", host: srv.PubSub, startup: time.Since(start), deliver: true})

	if full || os.Getenv("PYRIC_E2E_REQUIRED") == "1" {
		start = time.Now()
		em := pubsubtest.Official(t)
		targets = append(targets, target{name: "emulator", host: em.Host, startup: time.Since(start), deliver: true})
	}

	addr, took := benchkit.StartFloor(t, floorEnv)
	targets = append(targets, target{name: "floor", host: addr, startup: took})

	res := map[string]result{}
	for _, tg := range targets {
		r := result{"startup ms": float64(tg.startup.Milliseconds())}
		c := pubsubtest.Client(t, tg.host, "bench")
		ctx := context.Background()
		id := fmt.Sprintf("%s-%d", tg.name, time.Now().UnixNano())
		topic := "projects/bench/topics/t-" + id
		if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		mkSub := func(n string) string {
			s := "projects/bench/subscriptions/" + n + "-" + id
			if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: s, Topic: topic}); err != nil {
				t.Fatal(err)
			}
			return s
		}
		var deliverSub, latencySub string
		if tg.deliver {
			deliverSub = mkSub("d")
		}
		data := make([]byte, 100)

		// Batched publish: the client's default batching.
		p := c.Publisher(topic)
		start := time.Now()
		rs := make([]*pubsub.PublishResult, cfg.batched)
		for i := range rs {
			rs[i] = p.Publish(ctx, &pubsub.Message{Data: data})
		}
		for _, x := range rs {
			if _, err := x.Get(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r["batched publish msg/s"] = float64(cfg.batched) / time.Since(start).Seconds()
		p.Stop()

		// Concurrent publishers, each waiting for every publish.
		start = time.Now()
		var wg sync.WaitGroup
		for range cfg.clients {
			wg.Go(func() {
				for range cfg.perClient {
					if _, err := c.TopicAdminClient.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: data}}}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		r[fmt.Sprintf("%d publishers msg/s", cfg.clients)] = float64(cfg.clients*cfg.perClient) / time.Since(start).Seconds()

		if tg.deliver {
			// Delivery: the backlog built above, streamed to one
			// subscriber.
			want := cfg.batched + cfg.clients*cfg.perClient
			var got atomic.Int64
			rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			start = time.Now()
			s := c.Subscriber(deliverSub)
			_ = s.Receive(rctx, func(_ context.Context, m *pubsub.Message) {
				m.Ack()
				if got.Add(1) >= int64(want) {
					cancel()
				}
			})
			cancel()
			r["delivery msg/s"] = float64(got.Load()) / time.Since(start).Seconds()

			// Delivery past one stream's client-side cap: with the
			// client's defaults (1,000 outstanding messages, acks sent
			// in batches about every 100 ms) one stream cannot take
			// much over 10k msg/s from any server, so the same wider
			// settings for every target — 4 streams, 10k outstanding
			// — measure the server. A fresh subscription gets a
			// backlog published outside the clock.
			wideSub := mkSub("w")
			wp := c.Publisher(topic)
			wrs := make([]*pubsub.PublishResult, cfg.delivered)
			for i := range wrs {
				wrs[i] = wp.Publish(ctx, &pubsub.Message{Data: data})
			}
			for _, x := range wrs {
				if _, err := x.Get(ctx); err != nil {
					t.Fatal(err)
				}
			}
			wp.Stop()
			got.Store(0)
			rctx, cancel = context.WithTimeout(ctx, 5*time.Minute)
			start = time.Now()
			ws := c.Subscriber(wideSub)
			ws.ReceiveSettings.NumGoroutines = 4
			ws.ReceiveSettings.MaxOutstandingMessages = 10000
			_ = ws.Receive(rctx, func(_ context.Context, m *pubsub.Message) {
				m.Ack()
				if got.Add(1) >= int64(cfg.delivered) {
					cancel()
				}
			})
			cancel()
			r[wideDelivery] = float64(got.Load()) / time.Since(start).Seconds()

			// Latency: messages published one by one while a
			// subscriber receives; publish call to receipt.
			latencySub = mkSub("l")
			var mu sync.Mutex
			sent := map[string]time.Time{}
			var lat []time.Duration
			rctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = c.Subscriber(latencySub).Receive(rctx, func(_ context.Context, m *pubsub.Message) {
					now := time.Now()
					m.Ack()
					mu.Lock()
					defer mu.Unlock()
					if at, ok := sent[string(m.Data)]; ok {
						lat = append(lat, now.Sub(at))
						delete(sent, string(m.Data))
					}
					if len(lat) >= cfg.latency {
						cancel()
					}
				})
			}()
			time.Sleep(300 * time.Millisecond) // the stream is open
			lp := c.Publisher(topic)
			lp.PublishSettings.CountThreshold = 1
			lp.PublishSettings.DelayThreshold = time.Millisecond
			for i := range cfg.latency {
				d := strconv.Itoa(i)
				mu.Lock()
				sent[d] = time.Now()
				mu.Unlock()
				lp.Publish(ctx, &pubsub.Message{Data: []byte(d)})
				time.Sleep(2 * time.Millisecond) // pacing: one publish every 2ms, each latency alone
			}
			<-done
			lp.Stop()
			slices.Sort(lat)
			if len(lat) > 0 {
				r["latency p50 ms"] = float64(lat[len(lat)/2].Microseconds()) / 1000
				r["latency p99 ms"] = float64(lat[len(lat)*99/100].Microseconds()) / 1000
			}
		}
		res[tg.name] = r
	}
	var out strings.Builder
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tpyric\temulator\tfloor\tpyric/emulator\tpyric/floor\t")
	for _, wl := range []string{"startup ms", "batched publish msg/s", fmt.Sprintf("%d publishers msg/s", cfg.clients), "delivery msg/s", wideDelivery, "latency p50 ms", "latency p99 ms"} {
		py, em, fl := res["pyric"][wl], res["emulator"][wl], res["floor"][wl]
		ratio := func(a, b float64) string {
			if a == 0 || b == 0 {
				return "-"
			}
			if strings.HasSuffix(wl, " ms") { // lower is better: how many times faster
				return fmt.Sprintf("%.2fx faster", b/a)
			}
			return fmt.Sprintf("%.2fx", a/b)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%s\t%s\t\n", wl, py, em, fl, ratio(py, em), ratio(py, fl))
	}
	tw.Flush()
	t.Logf("\n%s", out.String())
}
