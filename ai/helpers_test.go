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

// memBucket is an in-memory service.Bucket for tests: Update applies its
// writes only when fn returns nil.
type memBucket struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemBucket() *memBucket { return &memBucket{m: map[string][]byte{}} }

type memTx struct {
	m        map[string][]byte
	readOnly bool
}

func (t *memTx) Get(k []byte) []byte { return t.m[string(k)] }
func (t *memTx) Put(k, v []byte) error {
	t.m[string(k)] = append([]byte(nil), v...)
	return nil
}
func (t *memTx) Delete(k []byte) error { delete(t.m, string(k)); return nil }
func (t *memTx) keys(prefix []byte) []string {
	var ks []string
	for k := range t.m {
		if strings.HasPrefix(k, string(prefix)) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}
func (t *memTx) ForEach(prefix []byte, fn func(k, v []byte) error) error {
	for _, k := range t.keys(prefix) {
		if err := fn([]byte(k), t.m[k]); err != nil {
			return err
		}
	}
	return nil
}
func (t *memTx) DeletePrefix(prefix []byte) error {
	for _, k := range t.keys(prefix) {
		delete(t.m, k)
	}
	return nil
}

func (b *memBucket) Update(fn func(service.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	cp := make(map[string][]byte, len(b.m))
	for k, v := range b.m {
		cp[k] = v
	}
	if err := fn(&memTx{m: cp}); err != nil {
		return err
	}
	b.m = cp
	return nil
}

func (b *memBucket) View(fn func(service.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fn(&memTx{m: b.m, readOnly: true})
}

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
