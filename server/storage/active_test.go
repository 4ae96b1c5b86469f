package storageserver

import (
	"strings"
	"testing"
)

// TestActiveContentSandboxed: an object a browser would run (HTML, SVG,
// XML, JavaScript) is served with a CSP sandbox, every object with nosniff,
// through both download APIs, so opening an uploaded page's download URL
// runs no script on the Storage port's (trusted, loopback) origin.
func TestActiveContentSandboxed(t *testing.T) {
	t.Parallel()
	s := newServer(t, openRules)
	cases := []struct {
		name, contentType string
		sandboxed         bool
	}{
		{"page.html", "text/html; charset=utf-8", true},
		{"page.xhtml", "application/xhtml+xml", true},
		{"pic.svg", "image/svg+xml", true},
		{"feed.xml", "application/atom+xml", true},
		{"data.xml", "text/xml", true},
		{"app.js", "text/javascript", true},
		{"odd", "text/html;;;", true}, // unparsable: assume the worst
		{"pic.png", "image/png", false},
		{"notes.txt", "text/plain", false},
		{"data.json", "application/json", false},
	}
	for _, c := range cases {
		r := s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=media&name="+c.name, "<script>alert(1)</script>",
			"Authorization", "Bearer owner", "Content-Type", c.contentType)
		if r.status != 200 {
			t.Fatalf("upload %s: %d %s", c.name, r.status, r.body)
		}
		for _, path := range []string{"/v0/b/" + bkt + "/o/" + c.name + "?alt=media", "/download/storage/v1/b/" + bkt + "/o/" + c.name + "?alt=media"} {
			r := s.do("GET", path, "", "Authorization", "Bearer owner")
			csp := r.header.Get("Content-Security-Policy")
			if r.status != 200 || r.header.Get("X-Content-Type-Options") != "nosniff" || strings.HasPrefix(csp, "sandbox") != c.sandboxed {
				t.Errorf("%s (%s) via %s: %d nosniff=%q csp=%q, want sandboxed=%v", c.name, c.contentType, path, r.status,
					r.header.Get("X-Content-Type-Options"), csp, c.sandboxed)
			}
		}
	}
}
