package hosting

import (
	"strings"
	"testing"
	"time"
)

// TestGlob holds the glob matcher to minimatch's answers (the Hosting
// emulator's matcher), observed with node for each pair.
func TestGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, glob string
		want       bool
	}{
		{"/a/", "/a/*", false},
		{"/a/", "/a/**", true},
		{"/a", "/a/**", false},
		{"/", "/**", true},
		{"/.x", "/**", false},
		{"/a/.x", "/a/**", false},
		{"/a/b", "/a/*", true},
		{"/a.js", "/*.@(js|css)", true},
		{"/a.css", "/**/*.@(js|css)", true},
		{"/a.html", "/**/*.@(js|css)", false},
		{"/ab", "/a?", true},
		{"/x/y.js", "**/*.js", true},
		{"/x/y.js", "/**/*.js", true},
		{"/y.js", "/**/*.js", true},
		{"/a", "!/b", true},
		{"/b", "!/b", false},
		{"/a/b/c", "/a/**/c", true},
		{"/a/c", "/a/**/c", true},
		{"/b1", "/b{1,2}", true},
		{"/b3", "/b{1..3}", true},
		{"/b4", "/b{1..3}", false},
		{"/A", "/a", false},
		{"/a//b", "/a/*/b", false},
		{"/a/b", "/a/b/", false},
		{"/a/b/", "/a/b", true},
		{"/.well-known/x", "/.well-known/*", true},
		{"/x.y", "/*.y", true},
		{"/a", "/[a-c]", true},
		{"/a", "/[!a]", false},
		{"/d", "/[!a]", true},
		{"/aaa.js", "/+(a).js", true},
		{"/a/b/c", "/**", true},
		{"/a/.b/c", "/**/c", false},
		{"/a/b", "/a/**/b/**", false},
		{"/a/b/", "/a/**/b/**", true},
		{"/x/a/b/", "/**/b/", true},
		{"/x/a/b", "/**/b/", false},
		{"/.well-known/x", "/**", false},
		{"/a/b/c.js", "/a/**", true},
		{"/a", "/a/**/", false},
		{"/", "/*", false},
		{"/x", "/**/x/**", false},
		{"/x/", "/**/x/**", true},
	} {
		g, err := compileGlob(tc.glob, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.glob, err)
		}
		if got := g.match(tc.path); got != tc.want {
			t.Errorf("match(%q, %q) = %v, want %v", tc.path, tc.glob, got, tc.want)
		}
	}
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"/!(a)", "/@(a", "/{1..100000}{1..1000}"} {
		if _, err := compileGlob(src, false); err == nil {
			t.Errorf("compileGlob(%q) accepted it", src)
		}
	}
}

func TestDecodeURI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/a%20b", "/a b"},
		{"/a%2Fb", "/a%2Fb"},
		{"/caf%C3%A9", "/café"},
		{"/%3F%23", "/%3F%23"},
	} {
		got, err := decodeURI(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("decodeURI(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"/%zz", "/%", "/%C3", "/%C3%28", "/%FF"} {
		if _, err := decodeURI(bad); err == nil {
			t.Errorf("decodeURI(%q) accepted it", bad)
		}
	}
	if got := encodeURI("/café a?b=c#d"); got != "/caf%C3%A9%20a?b=c#d" {
		t.Errorf("encodeURI = %q", got)
	}
}

// TestGlobCost: many `**` against a deep path stay linear in both.
func TestGlobCost(t *testing.T) {
	t.Parallel()
	g, err := compileGlob("/**/a/**/a/**/a/**/a/**/a/**/b", false)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.Repeat("/a", 2000)
	done := make(chan bool)
	go func() { done <- g.match(path) }()
	select {
	case got := <-done:
		if got {
			t.Errorf("matched")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("matching a deep path took over 5 s")
	}
}
