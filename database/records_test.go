package database_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
)

// TestRecordsKeyAndValue: a commit's record is keyed by the namespace
// and the location's keys, whatever the spelling of the path written,
// and holds the value now at the location (nil once it is gone); the
// root's record is the whole tree.
func TestRecordsKeyAndValue(t *testing.T) {
	d, bus := newDB(t, "", nil)
	sub := bus.Subscribe(64)
	defer sub.Close()
	ns := "demo-default-rtdb"
	for _, tc := range []struct {
		path    string
		value   any
		key     []string
		encoded string
	}{
		{"/a/b", map[string]any{"n": 1.0}, []string{"namespaces", ns, "data", "a", "b"}, `{"n":1}`},
		{"a//b/c/", "x", []string{"namespaces", ns, "data", "a", "b", "c"}, `"x"`},
		{"/", map[string]any{"r": true}, []string{"namespaces", ns, "data"}, `{"r":true}`},
		{"/r", nil, []string{"namespaces", ns, "data", "r"}, ``},
	} {
		if _, err := d.Set(admin, ns, tc.path, tc.value, database.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		var token string
		for token == "" {
			e := <-sub.Events()
			if tok, ok := d.RecordChange(e); ok && e.Kind == event.KindCommit {
				token = tok
			}
		}
		var calls int
		err := d.Records(token, func(key []string, v json.RawMessage) error {
			calls++
			if !slices.Equal(key, tc.key) || string(v) != tc.encoded {
				t.Errorf("%s: record %q = %s, want %q = %s", tc.path, key, v, tc.key, tc.encoded)
			}
			return nil
		})
		if err != nil || calls != 1 {
			t.Errorf("%s: %d records, %v", tc.path, calls, err)
		}
	}
}
