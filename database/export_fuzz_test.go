package database

import (
	"encoding/json"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
)

// FuzzDatabaseExport: a namespace file is accepted only when it is one
// JSON value, and the database then restores it without panicking.
func FuzzDatabaseExport(f *testing.F) {
	f.Add([]byte(`{"a": {".priority": 1, ".value": "x"}, "b": [1, 2]}`))
	f.Add([]byte(`"just a string"`))
	f.Add([]byte(`{"a": 1} {"b": 2}`))
	db, err := New(service.Env{Project: "demo"}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if oneJSONValue(data) != nil {
			return
		}
		st, _ := json.Marshal(map[string]any{"namespaces": map[string]any{"ns": map[string]json.RawMessage{"data": data}}})
		_ = db.Restore(st) // an error is fine; a panic is not
	})
}
