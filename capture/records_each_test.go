package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// TestFirestoreEachRecordMatchesRecords checks, on a durable store
// reopened (whose documents are all kept encoded, and a rewrite writes
// them from their encodings), that every
// record EachRecord passes — copied, since it reuses its key and value —
// is the one Records reads and encodes for the document on its own.
func TestFirestoreEachRecordMatchesRecords(t *testing.T) {
	dir := t.TempDir()
	be, err := backend.Start(backend.Options{Sandbox: sandbox.Options{DataDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fs := testfs.Of(be.Sandbox).Admin()
	values := []any{nil, true, 42, -1.5, math.Inf(-1), "<é>", []byte{1, 2},
		map[string]any{"__type": "timestamp", "seconds": 1700000000, "nanos": 123000},
		map[string]any{"__type": "reference", "path": "c/d"}, map[string]any{"__type": "latlng", "lat": 1.5, "lng": -2},
		[]any{1, "a", map[string]any{"x": 1}},
		map[string]any{"b": []any{}, "a": map[string]any{}}}
	for i := range 200 {
		doc := map[string]any{"n": i}
		for j, v := range values {
			if (i+j)%3 == 0 {
				doc[fmt.Sprintf("f%d", j)] = v
			}
		}
		if err := fs.SetDocument(ctx, fmt.Sprintf("c%d/d%03d", i%3, i), doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := be.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if be, err = backend.Start(backend.Options{Sandbox: sandbox.Options{DataDir: dir}}); err != nil {
		t.Fatal(err)
	}
	defer be.Shutdown(context.Background())
	var rs service.Records
	for _, svc := range be.Sandbox.Services() {
		if r, ok := svc.(service.Records); ok && svc.Name() == firestore.ServiceName {
			rs = r
		}
	}
	if rs == nil {
		t.Fatal("no Firestore Records service")
	}
	type record struct {
		key   []string
		value []byte
	}
	var all []record
	if err := rs.EachRecord(func(key []string, v json.RawMessage) error {
		all = append(all, record{slices.Clone(key), bytes.Clone(v)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(all) != 200 {
		t.Fatalf("EachRecord passed %d records, want 200", len(all))
	}
	for _, r := range all {
		n := 0
		if err := rs.Records("(default)\x00"+r.key[1], func(key []string, v json.RawMessage) error {
			n++
			if !slices.Equal(key, r.key) || !bytes.Equal(v, r.value) {
				t.Errorf("EachRecord %q: %s\nRecords %q: %s", r.key, r.value, key, v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("Records of %q passed %d records", r.key, n)
		}
	}
}
