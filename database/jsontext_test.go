package database

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"
)

var jsonTexts = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `12345678901234`, `123456789012345`, `1234567890123456789`,
	`9007199254740993`, `1.5`, `-1.25e-7`, `1E3`, `1e+3`, `1e400`, `-1e400`, `1e-400`, `0.1`, `3.0`,
	`""`, `"a"`, `"héllo 中文 😀"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u4E2D\ud83d\ude00"`, `"a\u0000b"`,
	`"<&>"`, "\"\u2028\u2029\"",
	`{}`, `[]`, `{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}`, ` { "a" : 1 , "a" : 2 } `, `[1, "x", true, null, {}]`,
	`{"n":1,"s":"x"}`, `{".sv":"timestamp"}`, `{".value":1,".priority":"p"}`,
	// refused
	``, ` `, `{`, `}`, `[`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`,
	`tru`, `nul`, `truex`, `1 2`, `"abc`, `"a` + "\x01" + `"`, `"\x"`, `"\u12"`, `"\u12G4"`, `{"a":1}x`, `[1]]`,
	`NaN`, `Infinity`, `'a'`, `"\`,
}

// TestParseJSONMatchesEncodingJSON: parseJSON accepts what encoding/json
// accepts and reads the same value (numbers as encoding/json's float64,
// json.Number where that would fail).
func TestParseJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, text := range jsonTexts {
		checkParse(t, []byte(text))
	}
	for _, n := range []int{maxNesting, maxNesting + 1} {
		checkParse(t, append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...))
	}
}

func checkParse(t *testing.T, text []byte) {
	t.Helper()
	var want any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	err := dec.Decode(&want)
	if err == nil && len(bytes.TrimLeft(text[dec.InputOffset():], " \t\r\n")) > 0 {
		err = errTrailing // encoding/json's Unmarshal refuses what follows the value
	}
	got, ok := parseJSON(text)
	if ok != (err == nil) {
		t.Fatalf("%q: parsed %v, encoding/json: %v", text, ok, err)
	}
	if ok && !reflect.DeepEqual(got, floats(want)) {
		t.Fatalf("%q: parsed %#v, encoding/json %#v", text, got, floats(want))
	}
}

var errTrailing = &json.SyntaxError{}

// floats turns json.Numbers into float64 where they fit one.
func floats(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
	case map[string]any:
		for k, c := range x {
			x[k] = floats(c)
		}
	case []any:
		for i, c := range x {
			x[i] = floats(c)
		}
	}
	return v
}

// TestAppendJSONMatchesMarshal: the values' encoder writes what
// json.Marshal writes.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	t.Parallel()
	for _, text := range jsonTexts {
		v, ok := parseJSON([]byte(text))
		if !ok {
			continue
		}
		checkAppend(t, floats(v))
	}
	for _, v := range []any{math.Copysign(0, -1), 1e21, 1e20, 1e-6, 1e-7, 123456.789, -5e-324, math.MaxFloat64,
		"\xff bad utf-8", map[string]any{"b": 1.0, "a": []any{"x", nil}, "<": map[string]any{}}, []any(nil), map[string]any(nil)} {
		checkAppend(t, v)
	}
	for _, v := range []any{math.NaN(), math.Inf(1), json.Number("1"), 3} {
		if _, ok := appendJSON(nil, v); ok {
			t.Errorf("appendJSON(%#v) claims to encode it", v)
		}
	}
}

func checkAppend(t *testing.T, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := MarshalValue(v)
	if err != nil || string(got) != string(want) {
		t.Fatalf("%#v: MarshalValue %s %v, json.Marshal %s", v, got, err, want)
	}
	if got, _ := AppendValue([]byte("x"), v); string(got) != "x"+string(want) {
		t.Fatalf("%#v: AppendValue %s", v, got)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, text := range jsonTexts {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if !utf8.Valid(text) {
			return // DecodeJSON refuses it first
		}
		checkParse(t, text)
		if v, ok := parseJSON(text); ok {
			checkAppend(t, floats(v))
			checkPlain(t, floats(v))
		}
	})
}

// TestMarshalPlainMatchesPlain: the one-pass encoder of a read's response
// writes what encoding Plain's result writes: priorities dropped, .value
// unwrapped, array-like nodes (gaps null) as arrays, at every depth.
func TestMarshalPlainMatchesPlain(t *testing.T) {
	t.Parallel()
	for _, text := range jsonTexts {
		if v, ok := parseJSON([]byte(text)); ok {
			checkPlain(t, floats(v))
		}
	}
	fixed := []any{
		nil, "s", 1.5, true, map[string]any{}, map[string]any(nil), []any{1.0, map[string]any{".priority": 1.0}},
		map[string]any{".priority": 2.0},
		map[string]any{".value": "v", ".priority": 1.0},
		map[string]any{"0": "a", "1": "b", ".priority": 3.0},
		map[string]any{"0": "a", "2": "c"},  // gap: [a,null,c]
		map[string]any{"0": "a", "3": "d"},  // too sparse: an object
		map[string]any{"1": "b"},            // [null,b]
		map[string]any{"01": "a", "1": "b"}, // leading zero: an object
		map[string]any{"-1": "a", "0": "b"}, // negative: an object
		map[string]any{"1000000000": "a"},   // ten digits: an object
		map[string]any{"a": map[string]any{"0": map[string]any{".value": 1.0, ".priority": "p"}, "1": map[string]any{"x": map[string]any{".priority": 1.0, "y": "z"}}}},
		map[string]any{"k": math.NaN()}, // not JSON: both fail
	}
	for _, v := range fixed {
		checkPlain(t, v)
	}
	rng := rand.New(rand.NewPCG(27, 1))
	for range 2000 {
		checkPlain(t, randomTree(rng, 4))
	}
}

// randomTree is a stored-like tree: leaves, priorities, .value leaves and
// nodes whose keys are small integers (array-like or not) or names.
func randomTree(rng *rand.Rand, depth int) any {
	switch n := rng.IntN(8); {
	case depth == 0 || n < 3:
		return []any{"leaf", 1.0, -2.5, true, false}[rng.IntN(5)]
	case n == 3:
		return map[string]any{".value": float64(rng.IntN(9)), ".priority": "p"}
	}
	m := map[string]any{}
	for range 1 + rng.IntN(6) {
		k := []string{"0", "1", "2", "3", "5", "9", "10", "a", "b", "01", "-1"}[rng.IntN(11)]
		if rng.IntN(3) > 0 {
			k = []string{"0", "1", "2", "3", "4"}[rng.IntN(5)]
		}
		m[k] = randomTree(rng, depth-1)
	}
	if rng.IntN(3) == 0 {
		m[".priority"] = float64(rng.IntN(3))
	}
	return m
}

func checkPlain(t *testing.T, v any) {
	t.Helper()
	want, werr := MarshalValue(Plain(v))
	got, err := MarshalPlain(v)
	if (err != nil) != (werr != nil) || string(got) != string(want) {
		t.Fatalf("%#v: MarshalPlain %s %v, MarshalValue(Plain) %s %v", v, got, err, want, werr)
	}
	// AppendPlain appends the same after what b holds, and leaves b as
	// it was when it fails.
	prefix := []byte("prefix")
	app, aerr := AppendPlain(prefix, v)
	if werr != nil {
		if aerr == nil || string(app) != "prefix" {
			t.Fatalf("%#v: AppendPlain %q %v, want prefix and an error", v, app, aerr)
		}
		return
	}
	if aerr != nil || string(app) != "prefix"+string(want) {
		t.Fatalf("%#v: AppendPlain %q %v, want %q", v, app, aerr, "prefix"+string(want))
	}
}

// TestParseWireMessageNumbers: a websocket request's data reads a number
// as a float64 exactly when encoding/json writes that float64 as the
// text sent, so the data encodes (in events, capture files, replies)
// byte for byte as the json.Numbers ParseJSONNumbers reads; every other
// number of the message stays a json.Number.
func TestParseWireMessageNumbers(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "-0", "7", "-12", "1.5", "1.50", "0.1", "1e3", "1E3", "1e+21", "1e21",
		"1e-7", "1e-07", "-1.25e-7", "123456789012345", "1234567890123456", "12345678901234567890",
		"100000000000000000000", "1e400", "-1e400", "0.000001", "1e-6", "5e-324", "1.7976931348623157e+308"} {
		msg := `{"t":"d","d":{"r":` + n + `,"a":"p","b":{"p":"/a","t":` + n + `,"q":{"sp":` + n + `},"d":{"x":` + n + `,"l":[` + n + `],"d":{"d":` + n + `}}}}}`
		got, ok := ParseWireMessage(msg)
		want, wok := ParseJSONNumbers(msg)
		if !ok || !wok {
			t.Fatalf("%s: not parsed", msg)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s: encodes as %s, want %s", n, gb, wb)
		}
		req := got.(map[string]any)["d"].(map[string]any)
		body := req["b"].(map[string]any)
		for name, v := range map[string]any{"r": req["r"], "t": body["t"], "sp": body["q"].(map[string]any)["sp"]} {
			if _, isNum := v.(json.Number); !isNum {
				t.Errorf("%s: %s is %T, want json.Number", n, name, v)
			}
		}
		data := body["d"].(map[string]any)
		f, exact := strconv.ParseFloat(n, 64)
		exactText := exact == nil && string(marshalFloat(f)) == n
		for _, v := range []any{data["x"], data["l"].([]any)[0], data["d"].(map[string]any)["d"]} {
			if _, isFloat := v.(float64); isFloat != exactText {
				t.Errorf("%s: data number is %T (%v), want float64 %v", n, v, v, exactText)
			}
		}
		// The slow path (encoding/json with UseNumber) reads the same.
		if slow := ExactNumbers(want.(map[string]any)["d"].(map[string]any)["b"].(map[string]any)["d"]); !reflect.DeepEqual(slow, data) {
			t.Errorf("%s: ExactNumbers %#v, want %#v", n, slow, data)
		}
	}
}

// marshalFloat is encoding/json's text of f.
func marshalFloat(f float64) []byte {
	b, _ := json.Marshal(f)
	return b
}
