package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// recorder is an event.Emitter keeping every event.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

func testEnv(b service.Bucket, ev event.Emitter) service.Env {
	if ev == nil {
		ev = event.Discard
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return service.Env{Project: "demo-ai", Now: func() time.Time { return t0 }, NewID: func() string { return "id" }, Events: ev, Bucket: b}
}

func newEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	e, err := New(testEnv(nil, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func call(model, body string) Call {
	return Call{Project: "demo-ai", Backend: BackendGoogleAI, Model: model, APIKey: "test-key", Body: []byte(body)}
}

func mustGenerate(t *testing.T, e *Engine, c Call) map[string]any {
	t.Helper()
	out, err := e.GenerateContent(context.Background(), c)
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	return decode(t, out)
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func keys(v any) string {
	m, _ := v.(map[string]any)
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// path walks a decoded JSON value: strings index objects, ints arrays.
func path(v any, steps ...any) any {
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func streamChunks(t *testing.T, e *Engine, c Call) []map[string]any {
	t.Helper()
	var out []map[string]any
	err := e.StreamGenerateContent(context.Background(), c, func(b []byte) error {
		if bytes.ContainsAny(b, "\n\r") {
			t.Errorf("chunk spans lines: %q", b)
		}
		out = append(out, decode(t, b))
		return nil
	})
	if err != nil {
		t.Fatalf("StreamGenerateContent: %v", err)
	}
	return out
}

const hello = `{"contents":[{"role":"user","parts":[{"text":"Say hello to pyric"}]}]}`

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o644) }
