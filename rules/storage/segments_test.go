package storage

import (
	"slices"
	"strings"
	"testing"
)

// TestSegmentsMatchesSplit compares Segments with the strings.Split it
// replaced.
func TestSegmentsMatchesSplit(t *testing.T) {
	for _, p := range []string{"", "/", "a", "/a/b.png", "a//b", "users/alice/p.png/", "//x//"} {
		want := []string{"b", "bkt", "o"}
		if rel := strings.Trim(p, "/"); rel != "" {
			want = append(want, strings.Split(rel, "/")...)
		}
		if got := Segments("bkt", p); !slices.Equal(got, want) {
			t.Errorf("Segments(%q) = %q, want %q", p, got, want)
		}
	}
}
