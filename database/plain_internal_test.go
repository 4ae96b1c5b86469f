package database

import (
	"reflect"
	"testing"
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
