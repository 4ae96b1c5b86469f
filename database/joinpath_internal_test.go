package database

import (
	"strings"
	"testing"
)

// TestJoinPath: joinPath is "/" and the keys joined by "/", built in
// one allocation.
func TestJoinPath(t *testing.T) {
	for _, keys := range [][]string{nil, {}, {""}, {"a"}, {"a", "b"}, {"a", ""}, {"", "b"}, {"ü", "x y", ".priority"}} {
		if got, want := joinPath(keys), "/"+strings.Join(keys, "/"); got != want {
			t.Errorf("joinPath(%q) = %q, want %q", keys, got, want)
		}
	}
	keys := []string{"rest", "r1", "n"}
	if n := testing.AllocsPerRun(100, func() { _ = joinPath(keys) }); n != 1 {
		t.Errorf("joinPath allocates %v times, want 1", n)
	}
}

// TestParsePathKeys: ParsePath's keys are the path's non-empty segments
// (nil for the root), in one allocation, and a path too deep or with a
// bad key is refused.
func TestParsePathKeys(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"", nil}, {"/", nil}, {"//", nil}, {"a", []string{"a"}}, {"/a/b/", []string{"a", "b"}},
		{"a//b", []string{"a", "b"}}, {"/rest/r1/.priority", []string{"rest", "r1", ".priority"}},
	} {
		got, err := ParsePath(tc.path)
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") || (got == nil) != (tc.want == nil) {
			t.Errorf("ParsePath(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	for _, bad := range []string{strings.Repeat("/a", MaxDepth+1), "/a.b", "/a/.priority/b", "/a$"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%.40q) accepted", bad)
		}
	}
	if _, err := ParsePath(strings.Repeat("/a", MaxDepth)); err != nil {
		t.Errorf("a path %d deep: %v", MaxDepth, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParsePath("/rest/r1/n") }); n != 1 {
		t.Errorf("ParsePath allocates %v times, want 1", n)
	}
}

// pathSamples are paths good and bad for ParsePath: depth, empty
// segments, .priority first, last and twice, and each bad key kind.
var pathSamples = []string{
	"", "/", "//", "a", "/a/b/", "a//b", "/rest/r1/.priority", "/.priority", ".priority/", "/.priority/.priority",
	"/a/.priority/b", "/a.b", "/a$", "/a#", "/a[", "/a]", "/a\x01", "/a\x7f", "/\xff", "/ü/x y",
	"/" + strings.Repeat("k", MaxKeyBytes), "/" + strings.Repeat("k", MaxKeyBytes+1),
	strings.Repeat("/a", MaxDepth), strings.Repeat("/a", MaxDepth+1), strings.Repeat("/a", MaxDepth) + "//",
}

// TestPathOKIsParsePath: pathOK accepts exactly the paths ParsePath
// accepts, and allocates nothing.
func TestPathOKIsParsePath(t *testing.T) {
	for _, p := range pathSamples {
		_, err := ParsePath(p)
		if got := pathOK(p); got != (err == nil) {
			t.Errorf("pathOK(%.50q) = %v, ParsePath's error %v", p, got, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = CheckRESTPath("/rest/r1/n") }); n != 0 {
		t.Errorf("CheckRESTPath of a good path allocates %v times, want 0", n)
	}
}

// FuzzPathOK: pathOK and ParsePath agree on any path.
func FuzzPathOK(f *testing.F) {
	for _, p := range pathSamples {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		_, err := ParsePath(p)
		if got := pathOK(p); got != (err == nil) {
			t.Fatalf("pathOK(%q) = %v, ParsePath's error %v", p, got, err)
		}
	})
}

// TestKeysUnderIsBaseAndParsePath: keysUnder is base followed by
// ParsePath's keys of every path it accepts, in one allocation, and
// shares no array with base.
func TestKeysUnderIsBaseAndParsePath(t *testing.T) {
	for _, base := range [][]string{nil, {"a"}, {"rest", "r1"}} {
		for _, rel := range pathSamples {
			sub, err := ParsePath(rel)
			if err != nil {
				continue
			}
			got := keysUnder(base[:len(base):len(base)], rel)
			want := append(append([]string(nil), base...), sub...)
			if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
				t.Errorf("keysUnder(%q, %.40q) = %q, want %q", base, rel, got, want)
			}
			if len(base) > 0 && len(got) > 0 {
				got[0] = "changed"
				if base[0] == "changed" {
					t.Fatalf("keysUnder(%q, %q) shares base's array", base, rel)
				}
			}
		}
	}
	base := []string{"rest", "r1"}
	if n := testing.AllocsPerRun(100, func() { _ = keysUnder(base, "a/b") }); n != 1 {
		t.Errorf("keysUnder allocates %v times, want 1", n)
	}
}

// TestPathOf: pathOf(path, ParsePath(path)) is joinPath of the keys for
// every spelling of a path, and is path itself, unallocated, when path
// is that rendering.
func TestPathOf(t *testing.T) {
	for _, path := range []string{"", "/", "//", "a", "/a", "a/", "/a/", "//a", "/a//b", "/a/b", "/a/b/", "a/b", "/rest/r1",
		"/ü/x y", "/a/.priority", "/ab/c", "/a/bc", "/abc"} {
		keys, err := ParsePath(path)
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		want := joinPath(keys)
		if got := pathOf(path, keys); got != want {
			t.Errorf("pathOf(%q) = %q, want %q", path, got, want)
		}
		if isJoined(path, keys) != (path == want) {
			t.Errorf("isJoined(%q, %q) = %v, want %v", path, keys, !(path == want), path == want)
		}
	}
	// Keys that are not the path's own: never taken for its rendering.
	for _, tc := range []struct {
		path string
		keys []string
	}{{"/a/b", []string{"a"}}, {"/a", []string{"a", "b"}}, {"/ab", []string{"a", "b"}}, {"/a/b", []string{"ab"}}, {"/", []string{"a"}}, {"/a", nil}} {
		if isJoined(tc.path, tc.keys) {
			t.Errorf("isJoined(%q, %q) = true", tc.path, tc.keys)
		}
	}
	keys := []string{"rest", "r1"}
	if n := testing.AllocsPerRun(100, func() { _ = pathOf("/rest/r1", keys) }); n != 0 {
		t.Errorf("pathOf of a rendered path allocates %v times, want 0", n)
	}
}
