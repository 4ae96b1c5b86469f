package capture

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestRecordLineIsJSONMarshal checks that a record line is written as
// encoding/json writes its parts (HTML escaping, invalid UTF-8, control
// characters included), byte for byte, though plain strings skip it.
func TestRecordLineIsJSONMarshal(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  string
		key  []string
		v    string
	}{
		{"plain", "firestore", []string{"documents", "users/u1"}, `{"a":1}`},
		{"deleted", "firestore", []string{"documents", "users/u1"}, ""},
		{"null value", "storage", []string{"captured", "b", "o"}, "null"},
		{"html", "firestore", []string{"documents", "c/<a&b>"}, `{}`},
		{"quote and backslash", "database", []string{"namespaces", `n"s\x`, "data"}, `1`},
		{"control", "firestore", []string{"documents", "c/a\tb\x01"}, `{}`},
		{"unicode", "firestore", []string{"documents", "c/é\u2028"}, `{}`},
		{"invalid utf-8", "firestore", []string{"documents", "c/\xff"}, `{}`},
		{"nil key", "firestore", nil, `{}`},
		{"empty key", "firestore", []string{}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := recordLine(&got, tc.svc, tc.key, json.RawMessage(tc.v)); err != nil {
				t.Fatal(err)
			}
			k, _ := json.Marshal(tc.key)
			s, _ := json.Marshal(tc.svc)
			want := `{"service":` + string(s) + `,"key":` + string(k)
			if tc.v != "" && tc.v != "null" {
				want += `,"value":` + tc.v
			}
			want += "}\n"
			if got.String() != want {
				t.Errorf("recordLine = %q, want %q", got.String(), want)
			}
		})
	}
}
