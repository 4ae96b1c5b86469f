package value

import "testing"

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
