package jsonstr

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// rebuild reads v (valid JSON) back with Members, Elements, Unquote and
// SkipValue into the tree encoding/json decodes (numbers as json.Number).
func rebuild(t *testing.T, v []byte) any {
	i := SkipSpace(v, 0)
	switch v[i] {
	case '{':
		m := map[string]any{}
		end := Members(v, i, func(k, e []byte) { m[Unquote(k)] = rebuild(t, e) })
		if SkipSpace(v, end) != len(v) {
			t.Fatalf("Members(%q) ended at %d", v, end)
		}
		return m
	case '[':
		a := []any{}
		end := Elements(v, i, func(e []byte) { a = append(a, rebuild(t, e)) })
		if SkipSpace(v, end) != len(v) {
			t.Fatalf("Elements(%q) ended at %d", v, end)
		}
		return a
	case '"':
		return Unquote(v[i:SkipValue(v, i)])
	case 't', 'f':
		return v[i] == 't'
	case 'n':
		return nil
	}
	return json.Number(v[i:SkipValue(v, i)])
}

func FuzzMembersMatchEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"b":[true,false,null,{"c":"d"}],"e":{"f":[[]]}}`, ` { "a" : [ 1 , -2.5e3 ] } `,
		`{"a":"x\"}{","b\\\"":"\u00e9\ud83d\ude00"}`, "{\"bad\":\"\xff\"}", `"s"`, `12`, `[{"a":{}},[],"]"]`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !Valid(b) {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("%q: Valid but encoding/json says %v", b, err)
		}
		if got := rebuild(t, b); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: read %#v, encoding/json %#v", b, got, want)
		}
	})
}
