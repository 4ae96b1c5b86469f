package databaseserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pyric/pyric/database"
)

// TestDecodeMessageMatchesTwoPasses: the one-pass decoding of a client
// message reads what the two encoding/json passes read, and refuses what
// they refuse.
func TestDecodeMessageMatchesTwoPasses(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":{"n":1.50,"s":"x","l":[1,null]}}}}`,
		`{"t":"d","d":{"r":12,"a":"m","b":{"p":"/a","d":{"b/c":1}}}}`,
		`{"t":"d","d":{"a":"s","b":{"c":{"sdk.js.12":1}}}}`,
		`{"t":"d","d":{"r":3,"a":"q","b":null}}`,
		`{"t":"c","d":{"t":"p","d":{}}}`,
		`{"d":{"t":"p"},"t":"c"}`,
		`{"t":"d","d":{"r":1.0,"a":"p","b":{}}}`,
		`{"t":"d","d":{"r":"1","a":"p","b":{}}}`,
		`{"t":"d","d":{"R":1,"A":"p","B":{"p":"/x"}}}`,
		`{"T":"d","d":{"r":1,"a":"p","b":{}}}`,
		`{"t":"d","d":{"r":1,"a":"p","b":{},"x":1}}`,
		`{"t":"d","d":{"r":1,"b":{}}}`,
		`{"t":"d","d":{"r":1,"a":7,"b":{}}}`,
		`{"t":"d","d":{"r":1,"a":"p","b":[1]}}`,
		`{"t":"x","d":{}}`,
		`{"t":"d","d":{"r":1,"a":"p","b":{"d":"\ud800"}}}`,
		`{"t":"d","d":{"r":1,"a":"p"}} x`,
		`{"t":"d"`,
		`[]`,
		`null`,
		``,
	} {
		env, req, ctl, err := decodeMessage(msg)
		wenv, wreq, wctl, werr := decodeMessageSlowly(msg)
		if (err == nil) != (werr == nil) || env != wenv || ctl != wctl || !reflect.DeepEqual(req, wreq) {
			t.Errorf("%s:\n one pass  %q %#v %q %v\n two passes %q %#v %q %v", msg, env, req, ctl, err, wenv, wreq, wctl, werr)
		}
	}
}

// TestWireEncodingMatchesMarshal: replies and data pushes written by hand
// are what json.Marshal writes for their wire structs.
func TestWireEncodingMatchesMarshal(t *testing.T) {
	t.Parallel()
	values := []any{"", nil, 1.5, "<x>", map[string]any{"b": []any{1.0, "é"}, "a": true},
		map[string]any{"auth": map[string]any{"exp": json.Number("12"), "n": int64(3)}}}
	for _, v := range values {
		for _, r := range []json.Number{"", "7"} {
			want, _ := json.Marshal(dataMessage{D: response{R: r, B: responseBody{S: "ok", D: v}}, T: "d"})
			if got := encodeResponse(r, "ok", v); string(got) != string(want) {
				t.Errorf("response %#v: %s, want %s", v, got, want)
			}
		}
		for _, p := range []database.Push{{Path: "a/b", Data: v}, {Path: "", Data: v, Merge: true, Tag: 4}} {
			a := "d"
			if p.Merge {
				a = "m"
			}
			want, _ := json.Marshal(dataMessage{D: dataPush{A: a, B: pushBody{D: p.Data, P: p.Path, T: p.Tag}}, T: "d"})
			if got := encodePush(p); string(got) != string(want) {
				t.Errorf("push %#v: %s, want %s", p, got, want)
			}
		}
	}
}

// TestEncodedResponseMatchesValue: a get's reply carrying its value
// encoded already (encodedValue) is the reply carrying the value, by
// hand and through json.Marshal (a request number it cannot copy).
func TestEncodedResponseMatchesValue(t *testing.T) {
	t.Parallel()
	values := []any{nil, "<x>", 1.5, true, map[string]any{"b": map[string]any{".value": 1.0, ".priority": "p"}, "a": "é\u2028"}}
	for _, v := range values {
		enc, err := database.MarshalValue(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []json.Number{"", "7", "1.5"} {
			if got, want := encodeResponse(r, "ok", encodedValue(enc)), encodeResponse(r, "ok", v); string(got) != string(want) {
				t.Errorf("%#v, r %q: %s, want %s", v, r, got, want)
			}
		}
	}
}
