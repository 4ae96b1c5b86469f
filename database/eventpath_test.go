package database_test

import (
	"testing"

	"github.com/pyric/pyric/database"
)

// TestSplitEventPath: an event's path names its namespace only outside the
// default one; anything else is refused, naming the path.
func TestSplitEventPath(t *testing.T) {
	for _, c := range []struct{ in, ns, path string }{
		{"/rooms/r1", "", "/rooms/r1"},
		{"/a:b/c", "", "/a:b/c"},
		{"other-db:/rooms/r1", "other-db", "/rooms/r1"},
		{"other-db:/", "other-db", "/"},
	} {
		ns, path, err := database.SplitEventPath(c.in)
		if err != nil || ns != c.ns || path != c.path {
			t.Errorf("SplitEventPath(%q) = %q, %q, %v; want %q, %q", c.in, ns, path, err, c.ns, c.path)
		}
	}
	for _, in := range []string{"", "rooms/r1", ":/x"} {
		if _, _, err := database.SplitEventPath(in); err == nil {
			t.Errorf("SplitEventPath(%q): no error", in)
		}
	}
}
