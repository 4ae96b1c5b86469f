package hosting_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/pyric/pyric/hosting"
)

// comparedHeaders are the response headers the differential test holds
// pyric to: the ones a browser or an app acts on.
var comparedHeaders = []string{"Location", "Content-Type", "Content-Encoding", "ETag", "Last-Modified", "Vary",
	"Cache-Control", "X-Frame-Options", "X-Docs", "Access-Control-Allow-Origin", "X-Page", "X-Init", "X-App"}

// diffCase is one request sent to the Hosting emulator and to pyric.
type diffCase struct {
	name   string
	site   string // "" is main
	method string
	path   string
	header map[string]string
	// production is set where the emulator departs from production and
	// pyric follows production: the reason, and pyric's expected status
	// and headers (the emulator's answer is only logged).
	production string
	wantStatus int
	wantHeader map[string]string
	wantBody   string // a substring of pyric's body, when set
	// ownBody: pyric's body is its own (init.js), only the status and
	// headers are compared.
	ownBody bool
	// noOracle: the request is not sent to the emulator (it hangs on it
	// offline, or its process dies).
	noOracle bool
}

func diffCases() []diffCase {
	fr := map[string]string{"Accept-Language": "fr"}
	return []diffCase{
		// Files, directory indexes, MIME types, compression.
		{name: "root index", path: "/"},
		{name: "html file", path: "/about.html"},
		{name: "directory without slash", path: "/docs"},
		{name: "directory with slash", path: "/docs/"},
		{name: "directory index file", path: "/docs/index.html"},
		{name: "nested directory", path: "/nested/deep/"},
		{name: "query kept on directory redirect", path: "/docs?x=1&y=%20"},
		{name: "double slashes", path: "//docs//page.html"},
		{name: "css", path: "/assets/app.css"},
		{name: "json with a regex header", path: "/data.json"},
		{name: "png", path: "/logo.png"},
		{name: "big js identity", path: "/assets/big.js"},
		{name: "big js gzip", path: "/assets/big.js", header: map[string]string{"Accept-Encoding": "gzip"}},
		{name: "big js brotli preferred", path: "/assets/big.js", header: map[string]string{"Accept-Encoding": "gzip, deflate, br"}},
		{name: "big js gzip by q", path: "/assets/big.js", header: map[string]string{"Accept-Encoding": "br;q=0.5, gzip"}},
		{name: "small html not compressed", path: "/about.html", header: map[string]string{"Accept-Encoding": "gzip, br"}},
		{name: "png not compressed", path: "/logo.png", header: map[string]string{"Accept-Encoding": "gzip, br"}},
		{name: "HEAD", method: "HEAD", path: "/about.html"},
		{name: "space in name", path: "/space%20name.html"},
		{name: "symlink inside public", path: "/link-in.html"},
		{name: "missing file", path: "/nope.html"},
		{name: "missing deep", path: "/a/b/c"},
		{name: "dot dot", path: "/docs/../about.html"},
		{name: "encoded dot dot", path: "/docs/%2e%2e/about.html"},
		{name: "encoded slash", path: "/docs%2Fpage.html"},
		{name: "rewrite target, stale etag", path: "/app/x", header: map[string]string{"If-None-Match": "ec1a0f6b5fb2a3e2b2e5c5a4e0c1d0f0"}},
		{name: "rewrite target, matching etag", path: "/app/x", header: map[string]string{"If-None-Match": "@index-etag"},
			production: "a 304 carries ETag and Last-Modified (RFC 9110 15.4.5); the emulator's has neither", wantStatus: 304,
			wantHeader: map[string]string{"Last-Modified": "@mtime:index.html"}},
		{name: "query on a file", path: "/about.html?x=1&y"},
		{name: "file with a trailing slash", path: "/about.html/"},
		{name: "HEAD compressible big file", method: "HEAD", path: "/assets/big.js", header: map[string]string{"Accept-Encoding": "gzip"}},
		{name: "POST to a file", method: "POST", path: "/about.html"},
		{name: "POST to init.json", method: "POST", path: "/__/firebase/init.json"},
		{name: "other reserved path", path: "/__/other"},
		{name: "redirect optional segments absent", path: "/docs-old"},
		{name: "redirect optional segments one", path: "/docs-old/x"},

		// Redirects.
		{name: "redirect 301", path: "/old"},
		{name: "redirect keeps query", path: "/old?a=1&b=two"},
		{name: "redirect 302 glob", path: "/temp/a/b"},
		{name: "redirect capture", path: "/posts/hello-world"},
		{name: "redirect capture with slash", path: "/posts/hello/"},
		{name: "redirect capture case", path: "/POSTS/Hi"},
		{name: "redirect segments capture", path: "/docs-old/a/b/c"},
		{name: "redirect regex captures", path: "/r/42/widget"},
		{name: "redirect regex no match", path: "/r/x/widget"},
		{name: "redirect named group", path: "/named/abc"},
		{name: "redirect external", path: "/ext"},
		{name: "redirect destination with query", path: "/withq?z=9"},
		{name: "redirect decoded path", path: "/caf%C3%A9"},
		{name: "redirect before files", path: "/old", header: map[string]string{"If-None-Match": "x"}},

		// Headers.
		{name: "header on 404 page", path: "/missing/page"},
		{name: "header later overrides", path: "/docs/page.html"},
		{name: "404 page: the path's headers beat the page's", path: "/conflict/x"},
		{name: "header glob on dotfile-free path", path: "/hello.html"},

		// Rewrites.
		{name: "rewrite to index", path: "/app/some/route"},
		{name: "rewrite regex", path: "/spa/x/y"},
		{name: "rewrite missing destination is 404", path: "/gone/x"},
		{name: "file wins over rewrite", path: "/app/../about.html"},

		// i18n.
		{name: "i18n language", path: "/", header: fr},
		{name: "i18n language region tag", path: "/hello.html", header: map[string]string{"Accept-Language": "fr-FR"}},
		{name: "i18n second language", path: "/hello.html", header: map[string]string{"Accept-Language": "de,es"}},
		{name: "i18n country", path: "/hello.html", header: map[string]string{"x-country-code": "ca"}},
		{name: "i18n language and country", path: "/hello.html", header: map[string]string{"Accept-Language": "fr", "x-country-code": "ca"}},
		{name: "i18n 404 page", path: "/nothing-here", header: fr},
		{name: "i18n cookie override", path: "/hello.html", header: map[string]string{"Cookie": "firebase-language-override=es"}},
		{name: "i18n no match", path: "/hello.html", header: map[string]string{"Accept-Language": "ja"}},

		// Reserved URLs.
		{name: "init.json", path: "/__/firebase/init.json"},
		{name: "init.js", path: "/__/firebase/init.js", ownBody: true},
		{name: "init.js useEmulator", path: "/__/firebase/init.js?useEmulator=true", ownBody: true},

		// cleanUrls × trailingSlash.
		{name: "clean: .html redirects", site: "clean", path: "/about.html"},
		{name: "clean: extensionless", site: "clean", path: "/about"},
		{name: "clean: extensionless slash", site: "clean", path: "/about/"},
		{name: "clean: index.html", site: "clean", path: "/docs/index.html"},
		{name: "clean: directory", site: "clean", path: "/docs"},
		{name: "clean: directory slash", site: "clean", path: "/docs/"},
		{name: "clean: root index.html", site: "clean", path: "/index.html"},
		{name: "clean: query kept", site: "clean", path: "/about.html?q=1"},
		{name: "clean-slash: .html", site: "clean-slash", path: "/about.html"},
		{name: "clean-slash: extensionless", site: "clean-slash", path: "/about"},
		{name: "clean-slash: extensionless slash", site: "clean-slash", path: "/about/"},
		{name: "clean-slash: directory", site: "clean-slash", path: "/docs"},
		{name: "clean-slash: directory slash", site: "clean-slash", path: "/docs/"},
		{name: "clean-slash: index.html", site: "clean-slash", path: "/docs/index.html"},
		{name: "clean-noslash: .html", site: "clean-noslash", path: "/about.html"},
		{name: "clean-noslash: extensionless", site: "clean-noslash", path: "/about"},
		{name: "clean-noslash: extensionless slash", site: "clean-noslash", path: "/about/"},
		{name: "clean-noslash: directory", site: "clean-noslash", path: "/docs"},
		{name: "clean-noslash: directory slash", site: "clean-noslash", path: "/docs/"},
		{name: "clean-noslash: root", site: "clean-noslash", path: "/"},
		{name: "slash: file", site: "slash", path: "/about.html"},
		{name: "slash: directory", site: "slash", path: "/docs"},
		{name: "slash: directory slash", site: "slash", path: "/docs/"},
		{name: "slash: extensionless", site: "slash", path: "/about"},
		{name: "noslash: directory", site: "noslash", path: "/docs"},
		{name: "noslash: directory slash", site: "noslash", path: "/docs/"},
		{name: "noslash: root", site: "noslash", path: "/"},
		{name: "noslash: file with slash", site: "noslash", path: "/about.html/"},
		{name: "intl-clean: clean URL in a language folder", site: "intl-clean", path: "/hello/", header: map[string]string{"Accept-Language": "fr"}},
		{name: "intl-clean: redirect from .html", site: "intl-clean", path: "/hello.html", header: map[string]string{"Accept-Language": "fr"}},
		{name: "intl-clean: add the slash", site: "intl-clean", path: "/hello", header: map[string]string{"Accept-Language": "es"}},
		{name: "intl-clean: root", site: "intl-clean", path: "/", header: map[string]string{"Accept-Language": "fr", "x-country-code": "ca"}},
		{name: "intl-clean: 404 in a language", site: "intl-clean", path: "/none/", header: map[string]string{"Accept-Language": "fr"}},
		{name: "intl-clean: rewrite target", site: "intl-clean", path: "/spa/x", header: map[string]string{"Accept-Language": "fr"}},

		// Where production differs from the emulator, pyric follows production.
		{name: "ignored dot file", path: "/.hidden", production: "production never uploads ignored files",
			wantStatus: 404, wantHeader: map[string]string{"X-Page": "not-found"}},
		{name: "ignored folder", path: "/secret/x.txt", production: "production never uploads ignored files", wantStatus: 404},
		{name: "ignored node_modules", path: "/node_modules/pkg/index.js", production: "production never uploads ignored files", wantStatus: 404},
		{name: "symlink out of public", path: "/link-out.txt", production: "a path never leaves public", wantStatus: 404},
		{name: "unknown extension", path: "/file.unknownext", production: "a real Content-Type, not the literal false",
			wantStatus: 200, wantHeader: map[string]string{"Content-Type": "application/octet-stream"}},
		{name: "range", path: "/about.html", header: map[string]string{"Range": "bytes=0-9"}, production: "production honours Range",
			wantStatus: 206, wantHeader: map[string]string{"Content-Range": "bytes 0-9/36", "Content-Length": "10"}, wantBody: "<!doctype "},
		{name: "suffix range", path: "/about.html", header: map[string]string{"Range": "bytes=-4"}, production: "production honours Range",
			wantStatus: 206, wantHeader: map[string]string{"Content-Range": "bytes 32-35/36"}},
		{name: "range not satisfiable", path: "/about.html", header: map[string]string{"Range": "bytes=100-"}, production: "production answers 416",
			wantStatus: 416, wantHeader: map[string]string{"Content-Range": "bytes */36"}},
		{name: "if-none-match on a file", path: "/about.html", header: map[string]string{"If-None-Match": "@etag"}, production: "production answers 304 for every file",
			wantStatus: 304},
		{name: "if-modified-since on a file", path: "/about.html", header: map[string]string{"If-Modified-Since": "@later"}, production: "production answers 304 for every file",
			wantStatus: 304},
		{name: "accept-language q-values", path: "/hello.html", header: map[string]string{"Accept-Language": "ja, fr;q=0.8"}, production: "q-values are read (the emulator takes \"fr;q=0.8\" for a language)",
			wantStatus: 200, wantBody: "fr hello"},
		{name: "function rewrite without Functions", path: "/api/x", production: "no network hop to a live function: pyric says Functions are not running",
			wantStatus: 501, wantHeader: map[string]string{"X-Frame-Options": "DENY"}},
		{name: "function rewrite object form", path: "/eu/x", production: "no network hop to a live function", wantStatus: 501},
		{name: "run rewrite", path: "/run/x", production: "Cloud Run is not emulated: a clear 501, not a failed lookup", wantStatus: 501},
		{name: "dynamic links rewrite", path: "/links/x", production: "Dynamic Links is refused clearly", wantStatus: 501},
		{name: "if-none-match on the 404 page", path: "/missing/page", header: map[string]string{"If-None-Match": "@404-etag"}, production: "a 404 is never a 304 (the emulator answers 304)",
			wantStatus: 404, wantBody: "not found"},
		{name: "sdk without a local copy", path: "/__/firebase/0.0.1/firebase-app.js", production: "no network: a clear 404 instead of a hung request", wantStatus: 404, noOracle: true},
		{name: "malformed percent-encoding", path: "/%zz", production: "production answers 400 (the emulator's process dies)", wantStatus: 400, noOracle: true},
		{name: "malformed UTF-8 escape", path: "/caf%C3", production: "production answers 400 (the emulator's process dies)", wantStatus: 400, noOracle: true},
	}
}

// TestDifferentialEmulator sends the same requests to firebase-tools'
// Hosting emulator and to pyric over one firebase.json exercising every
// option, and compares status, the headers that matter and the body.
// conformance: hosting.static, hosting.rules
func TestDifferentialEmulator(t *testing.T) {
	dir := project(t)
	oracle := startEmulator(t, dir, 7)
	eng := loadEngine(t, dir, hosting.Options{})
	ours := map[string]string{}
	for _, s := range eng.Sites() {
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		ours[s.Name()] = srv.URL
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       20 * time.Second,
	}
	fi, err := os.Stat(filepath.Join(dir, "public", "about.html"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, aboutTag := fetch(t, client, "GET", ours["main"]+"/about.html", nil)
	_, _, _, indexTag := fetch(t, client, "GET", ours["main"]+"/index.html", nil)
	_, _, _, notFoundTag := fetch(t, client, "GET", ours["main"]+"/404.html", nil)
	for _, tc := range diffCases() {
		site := tc.site
		if site == "" {
			site = "main"
		}
		hdr := map[string]string{}
		for k, v := range tc.header {
			switch v {
			case "@etag":
				v = aboutTag
			case "@index-etag":
				v = indexTag
			case "@404-etag":
				v = notFoundTag
			case "@later":
				v = fi.ModTime().Add(time.Hour).UTC().Format(http.TimeFormat)
			}
			hdr[k] = v
		}
		method := tc.method
		if method == "" {
			method = "GET"
		}
		t.Run(tc.name, func(t *testing.T) {
			gs, gh, gb, _ := fetch(t, client, method, ours[site]+tc.path, hdr)
			if tc.noOracle {
				if gs != tc.wantStatus {
					t.Errorf("status %d, want %d (%s): %s", gs, tc.wantStatus, tc.production, gb)
				}
				return
			}
			es, eh, eb, _ := fetch(t, client, method, oracle[site]+tc.path, hdr)
			if tc.production != "" {
				t.Logf("production behaviour (%s): emulator %s, pyric %s", tc.production, describe(es, pick(eh)), describe(gs, pick(gh)))
				if gs != tc.wantStatus {
					t.Errorf("status %d, want %d (%s)", gs, tc.wantStatus, tc.production)
				}
				for k, v := range tc.wantHeader {
					if name, ok := strings.CutPrefix(v, "@mtime:"); ok {
						st, err := os.Stat(filepath.Join(dir, "public", name))
						if err != nil {
							t.Fatal(err)
						}
						v = st.ModTime().UTC().Format(http.TimeFormat)
					}
					if gh.Get(k) != v {
						t.Errorf("%s: %q, want %q", k, gh.Get(k), v)
					}
				}
				if !bytes.Contains(gb, []byte(tc.wantBody)) {
					t.Errorf("body %q does not hold %q", gb, tc.wantBody)
				}
				return
			}
			if gs != es {
				t.Errorf("status: pyric %d, emulator %d", gs, es)
			}
			for _, k := range comparedHeaders {
				if g, e := gh.Get(k), eh.Get(k); g != e {
					t.Errorf("%s: pyric %q, emulator %q", k, g, e)
				}
			}
			if !tc.ownBody && eh.Get("Content-Encoding") == "" && eh.Get("Content-Length") != "" && gh.Get("Content-Length") != eh.Get("Content-Length") {
				t.Errorf("Content-Length: pyric %q, emulator %q", gh.Get("Content-Length"), eh.Get("Content-Length"))
			}
			if !tc.ownBody && !bytes.Equal(gb, eb) {
				t.Errorf("body differs:\npyric:    %.200q\nemulator: %.200q", gb, eb)
			}
			if tc.ownBody && len(gb) == 0 {
				t.Errorf("empty body")
			}
		})
	}
}

func pick(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range append(comparedHeaders, "Content-Range") {
		if v := h.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// fetch sends one request and returns the status, headers, the decoded
// body and the ETag.
func fetch(t *testing.T, c *http.Client, method, url string, hdr map[string]string) (int, http.Header, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		// A malformed escape: send the path as it is.
		scheme, rest, _ := strings.Cut(url, "://")
		host, path, _ := strings.Cut(rest, "/")
		if req, err = http.NewRequest(method, scheme+"://"+host, nil); err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = "/" + path
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if _, ok := hdr["Accept-Encoding"]; !ok {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	switch resp.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("%s: gzip: %v", url, err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(resp.Body)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body, strings.TrimSpace(resp.Header.Get("ETag"))
}
