package rtdb

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitPathMatchesSplit compares splitPath with the strings.Split
// loop it replaced: same keys (nil for none), same errors.
func TestSplitPathMatchesSplit(t *testing.T) {
	reference := func(p string) ([]string, error) {
		var keys []string
		for _, k := range strings.Split(p, "/") {
			if k == "" {
				continue
			}
			if err := checkKey(k); err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		return keys, nil
	}
	for _, p := range []string{"", "/", "//", "a", "/a", "a/", "/a/b", "//a///b/", "/users/alice/name", "/a/b.c", "/a/$x", "/a/b[", "x/\x01"} {
		got, gerr := splitPath(p)
		want, werr := reference(p)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Errorf("splitPath(%q) = %q, %v; want %q, %v", p, got, gerr, want, werr)
		}
	}
}
