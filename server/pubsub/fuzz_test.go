package pubsub

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
)

// FuzzREST sends arbitrary methods, paths and bodies to the REST API:
// never a panic, never a 5xx.
func FuzzREST(f *testing.F) {
	e, err := engine.NewEngine(service.Env{}, engine.Options{MaxPullWait: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	_, _ = e.CreateTopic(&engine.Topic{Name: "projects/p/topics/topic"})
	_, _ = e.CreateSubscription(&engine.Subscription{Name: "projects/p/subscriptions/sub", Topic: "projects/p/topics/topic"})
	h := New(e).Handler()
	for _, s := range []struct{ m, p, b string }{
		{"POST", "/v1/projects/p/topics/topic:publish", `{"messages":[{"data":"aGk=","attributes":{"a":"b"}}]}`},
		{"POST", "/v1/projects/p/subscriptions/sub:pull", `{"maxMessages":3,"returnImmediately":true}`},
		{"PATCH", "/v1/projects/p/subscriptions/sub", `{"subscription":{"filter":"x"},"updateMask":"filter"}`},
		{"PUT", "/v1/projects/p/subscriptions/s2", `{"topic":"projects/p/topics/topic","retryPolicy":{"minimumBackoff":"-5s"}}`},
		{"POST", "/v1/projects/p/subscriptions/sub:seek", `{"time":"2026-01-01T00:00:00Z"}`},
		{"PUT", "/v1/projects/p/snapshots/snap", `{"subscription":"projects/p/subscriptions/sub"}`},
	} {
		f.Add(s.m, s.p, s.b)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#?") || method == "" || strings.ContainsAny(method, " \r\n\t/") {
			return
		}
		if path == "/reset" {
			return
		}
		req, err := http.NewRequest(method, "http://x"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 && w.Code != 503 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body)
		}
	})
}
