package database

import (
	"sort"
	"strings"
	"testing"
)

// TestLindexConcerned: a change concerns the listens on the path from the
// root to it and below it, never its siblings; dependencies likewise, and
// removing a listen leaves no trace.
func TestLindexConcerned(t *testing.T) {
	var x lindex
	mk := func(path string, deps ...string) *listener {
		keys, _ := ParsePath(path)
		l := &listener{keys: keys, path: path}
		for _, d := range deps {
			dk, _ := ParsePath(d)
			l.deps = append(l.deps, dk)
		}
		x.add(l)
		return l
	}
	all := map[*listener]string{}
	for _, p := range []string{"/", "/a", "/a/b", "/a/b/c", "/a/x", "/z"} {
		all[mk(p)] = p
	}
	dl := mk("/docs/d1", "/acl/d1/alice", "/acl/d1")
	all[dl] = "/docs/d1"
	names := func(set map[*listener]struct{}) string {
		var out []string
		for l := range set {
			out = append(out, all[l])
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	ch := func(p string) []change { k, _ := ParsePath(p); return []change{{keys: k}} }
	for _, tc := range []struct{ change, want, wantDeps string }{
		{"/a/b", "/ /a /a/b /a/b/c", ""},
		{"/a/b/c/d", "/ /a /a/b /a/b/c", ""},
		{"/", "/ /a /a/b /a/b/c /a/x /docs/d1 /z", "/docs/d1"},
		{"/q", "/", ""},
		{"/acl/d1/alice/x", "/", "/docs/d1"},
		{"/acl/d2", "/", ""},
		{"/acl", "/", "/docs/d1"},
	} {
		if got := names(x.concerned(ch(tc.change), false)); got != tc.want {
			t.Errorf("listens concerned by %s: %q, want %q", tc.change, got, tc.want)
		}
		if got := names(x.concerned(ch(tc.change), true)); got != tc.wantDeps {
			t.Errorf("dependents of %s: %q, want %q", tc.change, got, tc.wantDeps)
		}
	}
	x.setDeps(dl, nil)
	if got := names(x.concerned(ch("/acl"), true)); got != "" {
		t.Errorf("after setDeps(nil): %q", got)
	}
	for l := range all {
		x.remove(l)
	}
	if !x.root.empty() {
		t.Errorf("the index keeps nodes after every listen left: %+v", x.root.children)
	}
}
