package value

import (
	"strings"
	"testing"
)

// TestShowPathAndStringUnchanged compares Show of paths and strings with
// the renderings it used to build by concatenation, now that it writes
// them into one sized buffer.
func TestShowPathAndStringUnchanged(t *testing.T) {
	for _, p := range []Path{{}, {Absolute: true}, {Segments: []string{"a"}}, {Segments: []string{"databases", "(default)", "documents", "u", "x y"}, Absolute: true},
		{Segments: []string{"rooms", "r1"}, Partial: true}} {
		if got, want := Show(p), "path('"+p.String()+"')"; got != want {
			t.Errorf("Show(%#v) = %q, want %q", p, got, want)
		}
	}
	for _, s := range []string{"", "alice", "a'b", "tab\there", "é", "back\\slash"} {
		if got, want := Show(String(s)), ShowLimit(String(s), -1); got != want {
			t.Errorf("Show(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestShowLimitInSharesABufferFaithfully renders many values into one
// buffer: each rendering equals ShowLimit's (the limit counted from the
// value's own start), and stays unchanged as the buffer grows.
func TestShowLimitInSharesABufferFaithfully(t *testing.T) {
	big := Map{}
	for i := 0; i < 50; i++ {
		big[string(rune('a'+i%26))+string(rune('a'+i/26))] = List{Int(i), String("some text"), Float(1.5)}
	}
	values := []Value{Null{}, Bool(true), Int(7), Float(2.5), String("alice"), String("tab\t"), Path{Segments: []string{"a", "b"}, Absolute: true},
		List{Int(1), String("x")}, big, Map{"k": Map{"n": Null{}}}, Bytes("hi")}
	var b strings.Builder
	var got, want []string
	for round := 0; round < 3; round++ {
		for _, limit := range []int{-1, 0, 10, 64, 200} {
			for _, v := range values {
				got = append(got, ShowLimitIn(&b, v, limit))
				want = append(want, ShowLimit(v, limit))
			}
		}
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("rendering %d = %q, want %q", i, got[i], want[i])
		}
	}
}
