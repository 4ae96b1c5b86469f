package database

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
)

// Plain gives what copying every node gives (plainCopy), and returns a
// value that already reads back as stored without copying it.
func TestPlainSharesOnlyWhatReadsBackAsStored(t *testing.T) {
	cases := []struct {
		name   string
		v      any
		shared bool
	}{
		{"leaf", "x", true},
		{"empty node", map[string]any{}, true},
		{"object", map[string]any{"n": 1.0, "s": "x", "o": map[string]any{"k": true}}, true},
		{"keys not all indexes", map[string]any{"0": 1.0, "a": 2.0}, true},
		{"sparse indexes", map[string]any{"0": 1.0, "5": 2.0}, true},
		{"array", map[string]any{"0": 1.0, "1": 2.0}, false},
		{"array below", map[string]any{"a": map[string]any{"0": "x"}}, false},
		{"priority", map[string]any{"a": 1.0, ".priority": 2.0}, false},
		{"priority below", map[string]any{"a": map[string]any{".value": 1.0, ".priority": 2.0}}, false},
		{"leaf with priority", map[string]any{".value": "v", ".priority": 1.0}, false},
	}
	for _, c := range cases {
		got, want := Plain(c.v), plainCopy(c.v)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Plain = %#v, want %#v", c.name, got, want)
		}
		m, isMap := c.v.(map[string]any)
		if !isMap {
			continue
		}
		gm, ok := got.(map[string]any)
		same := ok && reflect.ValueOf(gm).UnsafePointer() == reflect.ValueOf(m).UnsafePointer()
		if same != c.shared {
			t.Errorf("%s: returned the value itself = %v, want %v", c.name, same, c.shared)
		}
	}
}

// A value sent in the stored form is used as it is (stored), which is
// right only when normalize would return an equal copy; the tree keeps a
// copy of its own, so a later write below the location changes neither
// the value the write returned nor the one it was sent as.
func TestStoredValuesAreBorrowedNotShared(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		"x", 1.5, true, map[string]any{"a": 1.0, "b": map[string]any{"c": "d"}},
		map[string]any{}, map[string]any{"a": nil}, map[string]any{".priority": 1.0, "a": 1.0},
		map[string]any{".sv": "timestamp"}, map[string]any{"a": []any{1.0}}, map[string]any{"a.b": 1.0},
		map[string]any{"a": map[string]any{}}, json.Number("1"), 3, math.Inf(1),
	} {
		norm, err := normalize(v, nil, 7, 0)
		if stored(v, 0) && (err != nil || !reflect.DeepEqual(norm, v)) {
			t.Errorf("stored(%#v); normalize gives %#v, %v", v, norm, err)
		}
	}
	if !stored(map[string]any{"a": 1.0, "b": map[string]any{"c": "d", "e": true}}, 0) {
		t.Errorf("an ordinary object is not taken as stored")
	}
	if stored(map[string]any{"a": 1.0}, MaxDepth) {
		t.Errorf("stored accepts a value past the depth limit")
	}
	d, err := New(service.Env{Project: "demo"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]any{"a": 1.0, "b": map[string]any{"c": "d"}}
	got, err := d.Set(adminWho, "demo-default-rtdb", "/x", sent, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Set(adminWho, "demo-default-rtdb", "/x/b/e", "f", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": 1.0, "b": map[string]any{"c": "d"}}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(sent, want) {
		t.Errorf("a later write changed the earlier one's values: returned %v, sent %v", got, sent)
	}
	r, _ := d.Get(adminWho, "demo-default-rtdb", "/x/b", nil, false)
	if !reflect.DeepEqual(r.Value, map[string]any{"c": "d", "e": "f"}) {
		t.Errorf("tree holds %v", r.Value)
	}
}
