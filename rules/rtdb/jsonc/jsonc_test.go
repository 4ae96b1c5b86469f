package jsonc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseWithComments(t *testing.T) {
	t.Parallel()
	src := "// header\n{\n  /* block\n  comment */ \"rules\": {\".read\": \"auth != null\", // trailing\n  \"n\": [1, -2.5e3, true, false, null]}\n}\n"
	v, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	rules := v.Get("rules")
	if rules == nil || rules.Kind != Object {
		t.Fatalf("rules = %+v", rules)
	}
	read := rules.Get(".read")
	if read.Str != "auth != null" || src[read.Start:read.End] != `"auth != null"` {
		t.Errorf(".read = %q at [%d,%d)", read.Str, read.Start, read.End)
	}
	if got := src[read.Offset(5) : read.Offset(5)+2]; got != "!=" {
		t.Errorf("Offset(5) points at %q, want !=", got)
	}
	n := rules.Get("n")
	if len(n.Elems) != 5 || n.Elems[1].Number != "-2.5e3" || !n.Elems[2].Bool || n.Elems[4].Kind != Null {
		t.Errorf("n = %+v", n.Elems)
	}
	m := rules.Members[0]
	if src[m.KeyStart:m.KeyEnd] != `".read"` {
		t.Errorf("key span = %q", src[m.KeyStart:m.KeyEnd])
	}
}

func TestStringOffsetsWithEscapes(t *testing.T) {
	t.Parallel()
	src := `"a\"b\u00e9c\\d\ud83d\ude00e"`
	v, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if v.Str != "a\"béc\\d😀e" {
		t.Fatalf("Str = %q", v.Str)
	}
	// Each decoded character maps to where it starts in the source.
	for _, tt := range []struct {
		ch   string
		want string
	}{{"b", "b"}, {"c", "c"}, {"d", "d"}, {"e", "e"}, {"\"", `\"`}, {"é", `\u00e9`}, {"😀", `\ud83d`}} {
		i := strings.Index(v.Str, tt.ch)
		off := v.Offset(i)
		if !strings.HasPrefix(src[off:], tt.want) {
			t.Errorf("Offset of %q = %d (%q), want the start of %q", tt.ch, off, src[off:], tt.want)
		}
	}
	if v.Offset(len(v.Str)) != len(src)-1 {
		t.Errorf("Offset(len) = %d, want the closing quote %d", v.Offset(len(v.Str)), len(src)-1)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		at   int
		want string
	}{
		{`{"a": 1,}`, 7, "trailing comma"},
		{`[1,]`, 2, "trailing comma"},
		{`{"a" 1}`, 5, "expected ':'"},
		{`{a: 1}`, 1, "double-quoted key"},
		{`{'a': 1}`, 1, "double-quoted key"},
		{`{"a": 'x'}`, 6, "double quotes"},
		{`{"a": 1`, 0, "unterminated object"},
		{`{"a": 01}`, 6, "leading zeros"},
		{`{"a": "x` + "\n" + `"}`, 8, "control character"},
		{`{"a": "\q"}`, 7, "invalid escape"},
		{`/* open`, 0, "unterminated /* comment"},
		{`{} {}`, 3, "after the end"},
		{``, 0, "unexpected end of input"},
		{`{"a": tru}`, 6, "expected a JSON value"},
		{`{"a": 1 "b": 2}`, 8, "expected ',' or '}'"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", tt.src, tt.want)
			continue
		}
		if err.Start != tt.at || !strings.Contains(err.Msg, tt.want) {
			t.Errorf("Parse(%q) = %d %q, want %d %q", tt.src, err.Start, err.Msg, tt.at, tt.want)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	if _, err := Parse(strings.Repeat("[", 100000)); err == nil || !strings.Contains(err.Msg, "nested") {
		t.Errorf("deep nesting: %v", err)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"rules": {".read": true}}`, `// c` + "\n" + `{"a": [1, "\u00e9", null]}`, `{"a": "\"x\""}`, `/*`, `[`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		v, err := Parse(src)
		if err != nil {
			if err.Start < 0 || err.Start > len(src) {
				t.Fatalf("error offset %d out of range", err.Start)
			}
			return
		}
		if v.Start < 0 || v.End > len(src) {
			t.Fatalf("value span [%d,%d) out of range", v.Start, v.End)
		}
		// Strict JSON without comments must agree with encoding/json.
		if !strings.Contains(src, "/") && !json.Valid([]byte(src)) && !strings.HasPrefix(src, "\uFEFF") {
			t.Fatalf("accepted %q, which encoding/json rejects", src)
		}
	})
}
