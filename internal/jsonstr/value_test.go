package jsonstr

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestValueMatchesEncodingJSON: Value reads every kind of JSON value as
// encoding/json decodes it into an any with UseNumber.
func TestValueMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`"a"`, `"\u00e9\n"`, "\"bad \xff utf8\"", `true`, `false`, `null`,
		`0`, `-1.5e3`, `12345678901234567890`, `{}`, `{ }`, `{"a":1,"b":[true,null]}`,
		`[]`, `[1,"x",{"y":2.50}]`,
	} {
		d := json.NewDecoder(bytes.NewReader([]byte(raw)))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := Value([]byte(raw)); !reflect.DeepEqual(got, want) {
			t.Errorf("Value(%s) = %#v, want %#v", raw, got, want)
		}
	}
}
