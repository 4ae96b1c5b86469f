package database_test

import (
	"strings"
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
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

// TestEventPathNamesNamespace: a write's event in the project's default
// namespace carries the bare path, in another one "<ns>:<path>", which
// SplitEventPath reads back.
func TestEventPathNamesNamespace(t *testing.T) {
	d, bus := newDB(t, `{"rules": {".read": true, ".write": true}}`, nil)
	admin := identity.AdminIdentity()
	for _, ns := range []string{"demo-default-rtdb", "other-db", "demo"} {
		if _, err := d.Set(admin, ns, "/a/b", 1.0, database.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range bus.History() {
		if e.Kind == event.KindRequest && e.Method == "set" {
			got = append(got, e.Path)
		}
	}
	want := []string{"/a/b", "other-db:/a/b", "demo:/a/b"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("event paths %q, want %q", got, want)
	}
}
