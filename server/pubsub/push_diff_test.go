package pubsub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/pyric/pyric/internal/await"
)

// TestDifferentialPush compares what both servers POST to a push
// endpoint: the wrapped envelope's keys, and the unwrapped body with
// write_metadata's headers; a first 500 is retried.
func TestDifferentialPush(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		type hit struct {
			path   string
			header http.Header
			body   []byte
		}
		var mu sync.Mutex
		var hits []hit
		fails := map[string]int{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			hits = append(hits, hit{r.URL.Path, r.Header.Clone(), b})
			if fails[r.URL.Path] == 0 {
				fails[r.URL.Path]++
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer srv.Close()
		p := "projects/diff-project"
		topic := p + "/topics/" + id("pushtopic")
		if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		for _, s := range []struct {
			name string
			cfg  *pb.PushConfig
		}{
			{"wrapped", &pb.PushConfig{PushEndpoint: srv.URL + "/wrapped"}},
			{"unwrapped", &pb.PushConfig{PushEndpoint: srv.URL + "/unwrapped", Wrapper: &pb.PushConfig_NoWrapper_{NoWrapper: &pb.PushConfig_NoWrapper{WriteMetadata: true}}}},
		} {
			if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: p + "/subscriptions/" + id(s.name), Topic: topic, PushConfig: s.cfg}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.TopicAdminClient.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: []byte("hello push"), Attributes: map[string]string{"color": "red"}}}}); err != nil {
			t.Fatal(err)
		}
		await.Poll(30*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(hits) >= 4
		})
		mu.Lock()
		defer mu.Unlock()
		var out []string
		count := map[string]int{}
		for _, h := range hits {
			count[h.path]++
			if count[h.path] > 1 {
				continue
			}
			if h.path == "/wrapped" {
				var env map[string]any
				_ = json.Unmarshal(h.body, &env)
				var keys []string
				for k := range env {
					keys = append(keys, k)
				}
				m, _ := env["message"].(map[string]any)
				for k := range m {
					keys = append(keys, "message."+k)
				}
				slices.Sort(keys)
				out = append(out, fmt.Sprintf("wrapped: keys %v data %v attrs %v content-type %q", keys, m["data"], m["attributes"],
					strings.Split(h.header.Get("Content-Type"), ";")[0]))
				continue
			}
			var hs []string
			for k := range h.header {
				lk := strings.ToLower(k)
				if strings.HasPrefix(lk, "x-goog-pubsub") || lk == "color" {
					v := h.header.Get(k)
					if strings.HasSuffix(lk, "-id") || strings.HasSuffix(lk, "-time") {
						v = "<>"
					}
					if strings.HasSuffix(lk, "-name") {
						v = strings.TrimSuffix(v, id("unwrapped"))
					}
					hs = append(hs, lk+"="+v)
				}
			}
			slices.Sort(hs)
			out = append(out, fmt.Sprintf("unwrapped: body %q headers %v", h.body, hs))
		}
		slices.Sort(out) // the two subscriptions push in any order
		out = append(out, fmt.Sprintf("retried: wrapped %v unwrapped %v", count["/wrapped"] >= 2, count["/unwrapped"] >= 2))
		return out
	})
}
