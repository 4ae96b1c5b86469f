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

// TestLindexConcernedByNoneAllocatesNothing: a write no listen concerns
// (most writes) builds no set, and one that concerns some still finds
// them all.
func TestLindexConcernedByNoneAllocatesNothing(t *testing.T) {
	var x lindex
	keys := func(p string) []string { k, _ := ParsePath(p); return k }
	l := &listener{keys: keys("/a/b"), path: "/a/b", deps: [][]string{keys("/acl/x")}}
	x.add(l)
	other := []change{{keys: keys("/rest/r1")}, {keys: keys("/a/c")}}
	if n := testing.AllocsPerRun(100, func() {
		if x.concerned(other, false) != nil || x.concerned(other, true) != nil {
			t.Fatal("a listen concerned by a write beside it")
		}
	}); n != 0 {
		t.Errorf("a write no listen concerns allocates %v times", n)
	}
	below := []change{{keys: keys("/rest/r1")}, {keys: keys("/a")}}
	if got := x.concerned(below, false); len(got) != 1 {
		t.Errorf("a write above the listen concerns %d listens, want 1", len(got))
	}
	if got := x.concerned([]change{{keys: keys("/acl")}}, true); len(got) != 1 {
		t.Errorf("a write above an observed location concerns %d dependents, want 1", len(got))
	}
}
