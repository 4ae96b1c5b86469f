package value

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestFormatFloat(t *testing.T) {
	tests := map[float64]string{
		1: "1.0", 0.1: "0.1", 1.5: "1.5", 100000000: "1.0E8", 123456789: "1.23456789E8", 1e-5: "1.0E-5",
		0.001: "0.001", 1234567.5: "1234567.5", 1e7: "1.0E7", -2.5: "-2.5",
		math.NaN(): "NaN", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", math.Copysign(0, -1): "-0.0", 0: "0.0",
	}
	for f, want := range tests {
		if got := FormatFloat(f); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b Value
		want bool
	}{
		{Int(1), Float(1), true},
		{List{Int(1)}, List{Float(1)}, false}, // production: [1] == [1.0] is false
		{Map{"a": Int(1)}, Map{"a": Float(1)}, false},
		{Float(math.NaN()), Float(math.NaN()), false},
		{Null{}, Null{}, true},
		{Null{}, Bool(false), false},
		{NewSet([]Value{Int(1), Int(2)}), NewSet([]Value{Int(2), Int(1)}), true},
		{NewSet([]Value{Int(1)}), List{Int(1)}, false},
		{ParsePath("a/b"), ParsePath("/a/b"), true},
		{Timestamp{time.Unix(1, 0)}, Timestamp{time.Unix(1, 0).In(time.FixedZone("x", 3600))}, true},
		{Duration{1, 0}, Duration{1, 0}, true},
		{Bytes("a"), String("a"), false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", Show(tt.a), Show(tt.b), got, tt.want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	tests := []struct {
		op   string
		a, b Value
		want string
	}{
		{"/", Int(-7), Int(2), "-3"},
		{"%", Int(-7), Int(2), "-1"},
		{"/", Int(1), Int(0), "error(Divide by zero error.)"},
		{"/", Float(1), Int(0), "Infinity"},
		{"+", Int(math.MaxInt64), Int(1), "error(Integer value is out of the [-9223372036854775808, 9223372036854775807] range.)"},
		{"*", Int(math.MinInt64), Int(-1), "error(Integer value is out of the [-9223372036854775808, 9223372036854775807] range.)"},
		{"-", Int(math.MinInt64), Int(1), "error(Integer value is out of the [-9223372036854775808, 9223372036854775807] range.)"},
		{"/", Int(math.MinInt64), Int(-1), "error(Integer value is out of the [-9223372036854775808, 9223372036854775807] range.)"},
		{"+", String("a"), String("b"), "'ab'"},
		{"+", String("a"), Int(1), "error(Unsupported operation error. Received: string + int. Expected: int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration.)"},
		{"+", List{Int(1)}, List{Int(2)}, "error(Unsupported operation error. Received: list + list. Expected: int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration.)"},
		{"+", Duration{1, 500000000}, Duration{0, 600000000}, "duration(2.1s)"},
		{"-", Duration{1, 0}, Duration{2, 500000000}, "duration(-1.5s)"},
		{"%", Float(7.5), Int(2), "1.5"},
	}
	for _, tt := range tests {
		if got := Show(Arith(tt.op, tt.a, tt.b)); got != tt.want {
			t.Errorf("%s %s %s = %s, want %s", Show(tt.a), tt.op, Show(tt.b), got, tt.want)
		}
	}
	if got := Show(Arith("-", Timestamp{time.Unix(60, 0)}, Timestamp{time.Unix(0, 0)})); got != "duration(60s)" {
		t.Errorf("timestamp - timestamp = %s", got)
	}
}

func TestCompare(t *testing.T) {
	if Compare(Int(1), Float(1.5), "<") != Bool(true) {
		t.Error("1 < 1.5")
	}
	if Compare(Float(math.NaN()), Int(1), "<") != Bool(false) || Compare(Float(math.NaN()), Int(1), ">=") != Bool(false) {
		t.Error("NaN compares false")
	}
	if e, ok := Compare(Bool(false), Bool(true), "<").(*Error); !ok || e.Message != "Unsupported operation error. Received: bool < bool. Expected: string < string, bytes < bytes, int < int, float < float, duration < duration, timestamp < timestamp, constraint < any, any < constraint." {
		t.Errorf("bool < bool = %v", Compare(Bool(false), Bool(true), "<"))
	}
}

func TestFromGo(t *testing.T) {
	v, err := FromGo(map[string]any{"n": 1, "f": 1.5, "l": []any{"a", nil}, "t": time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	m := v.(Map)
	if _, ok := m["n"].(Int); !ok {
		t.Errorf("n is %T", m["n"])
	}
	if _, ok := m["t"].(Timestamp); !ok {
		t.Errorf("t is %T", m["t"])
	}
	if _, err := FromGo(struct{}{}); err == nil {
		t.Error("struct converted")
	}
}

// TestWriteQuotedMatchesQuote: the unescaped fast path renders exactly
// what quote does.
func TestWriteQuotedMatchesQuote(t *testing.T) {
	for _, s := range []string{"", "abc", "it's", `say "hi"`, `back\slash`, "tab\there", "é", "\x00", "line\n", "~}{", "\x7f"} {
		var b strings.Builder
		writeQuoted(&b, s)
		if b.String() != quote(s) {
			t.Errorf("%q: writeQuoted %s, quote %s", s, b.String(), quote(s))
		}
	}
}

func TestBox(t *testing.T) {
	s := String("héllo")
	ts := Timestamp{time.Unix(5, 6).UTC()}
	p := ParsePath("/a/b")
	for _, c := range []struct {
		boxed, want Value
	}{{BoxString(&s), String("héllo")}, {BoxTimestamp(&ts), ts}, {BoxPath(&p), p}} {
		if c.boxed.Type() != c.want.Type() || !Equal(c.boxed, c.want) || Show(c.boxed) != Show(c.want) {
			t.Errorf("boxed %v, want %v", Show(c.boxed), Show(c.want))
		}
	}
	if v, ok := BoxString(&s).(String); !ok || v != s {
		t.Errorf("BoxString(&s).(String) = %q, %v", v, ok)
	}
	l := Strings([]string{"b", "a", ""})
	runtime.GC() // the boxed strings keep their array alive
	if Show(l) != "['b', 'a', '']" || !Equal(l, List{String("b"), String("a"), String("")}) {
		t.Errorf("Strings = %v", Show(l))
	}
	for _, n := range []int{0, 3, 6, 20} {
		l, v := MakeList(n)
		for i := range l {
			l[i] = Int(i)
		}
		runtime.GC()
		if got, ok := v.(List); !ok || len(got) != n || (n > 0 && got[n-1] != Int(n-1)) {
			t.Errorf("MakeList(%d) = %v", n, Show(v))
		}
	}
	if n := testing.AllocsPerRun(100, func() { Strings([]string{"x", "y", "z"}) }); n > 2 {
		t.Errorf("Strings of 3 allocates %v times, want 2", n)
	}
}
