package hosting_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/hosting"
)

// site builds one site from a hosting object over a public folder holding
// files.
func site(t *testing.T, cfg string, files map[string]string, opts hosting.Options) (*hosting.Engine, string, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, "public", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "public"), 0o755); err != nil {
		t.Fatal(err)
	}
	if opts.Project == "" {
		opts.Project = "demo-x"
	}
	cfgs, err := hosting.ParseConfig(json.RawMessage(cfg), dir, opts.Project)
	if err != nil {
		t.Fatal(err)
	}
	eng := hosting.New(cfgs, opts)
	srv := httptest.NewServer(eng.Sites()[0])
	t.Cleanup(srv.Close)
	return eng, srv.URL, dir
}

type resp struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string, hdr ...string) resp {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, string(b)}
}

func TestPathSafety(t *testing.T) {
	t.Parallel()
	_, url, dir := site(t, `{"public": "public"}`, map[string]string{"index.html": "home", "a/b.html": "b", "404.html": "missing"}, hosting.Options{})
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(dir, "public", "out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "public", "updir")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/../secret.txt", "/a/../../secret.txt", "/%2e%2e/secret.txt", "/a%2F..%2F..%2Fsecret.txt",
		"/out.txt", "/updir/secret.txt", "/a%5C..%5C..%5Csecret.txt", "/a/b.html%00", "/..%5csecret.txt"} {
		r := do(t, "GET", url+p)
		if r.status != 404 || strings.Contains(r.body, "secret") {
			t.Errorf("%s: %d %q, want the 404 page", p, r.status, r.body)
		}
	}
	for _, p := range []string{"/%zz", "/%", "/a/%C3"} {
		raw := rawGet(t, url, p)
		if !strings.HasPrefix(raw, "HTTP/1.1 400") {
			t.Errorf("%s: %.60q, want 400", p, raw)
		}
	}
	if r := do(t, "GET", url+"/a/b.html"); r.status != 200 || r.body != "b" {
		t.Errorf("/a/b.html: %d %q", r.status, r.body)
	}
}

// rawGet sends a request line as written and returns the raw answer.
func rawGet(t *testing.T, base, path string) string {
	t.Helper()
	req, err := http.NewRequest("GET", base, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = path
	r, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return "HTTP/1.1 " + r.Status + "\n" + string(b)
}

func TestConditionalRangeAndFreshness(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("body { color: red; }\n", 200)
	_, url, dir := site(t, `{"public": "public"}`, map[string]string{"app.css": big, "page.html": "v1"}, hosting.Options{})
	r := do(t, "GET", url+"/page.html")
	etag := r.header.Get("ETag")
	if r.status != 200 || etag == "" || strings.Contains(etag, `"`) || r.header.Get("Last-Modified") == "" {
		t.Fatalf("first GET: %d %v", r.status, r.header)
	}
	for _, inm := range []string{etag, `"` + etag + `"`, `W/"` + etag + `", "x"`, "*"} {
		if r := do(t, "GET", url+"/page.html", "If-None-Match", inm); r.status != 304 || r.body != "" {
			t.Errorf("If-None-Match %s: %d %q", inm, r.status, r.body)
		}
	}
	if r := do(t, "GET", url+"/page.html", "If-None-Match", "other"); r.status != 200 {
		t.Errorf("a stale ETag: %d", r.status)
	}
	// The file changes on disk (a watching build): served fresh, new ETag.
	p := filepath.Join(dir, "public", "page.html")
	if err := os.WriteFile(p, []byte("v2, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	r2 := do(t, "GET", url+"/page.html", "If-None-Match", etag)
	if r2.status != 200 || r2.body != "v2, longer" || r2.header.Get("ETag") == etag {
		t.Errorf("after a change: %d %q etag %s", r2.status, r2.body, r2.header.Get("ETag"))
	}
	// The whole folder is replaced (a build deleting and recreating it).
	pub := filepath.Join(dir, "public")
	if err := os.Rename(pub, pub+".old"); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(pub, 0o755)
	os.WriteFile(filepath.Join(pub, "page.html"), []byte("v3"), 0o644)
	os.WriteFile(filepath.Join(pub, "new.html"), []byte("new"), 0o644)
	if r := do(t, "GET", url+"/new.html"); r.status != 200 || r.body != "new" {
		t.Fatalf("a file of the new folder: %d %q", r.status, r.body)
	}
	if r := do(t, "GET", url+"/page.html"); r.body != "v3" {
		t.Fatalf("after the folder was replaced: %q", r.body)
	}
	os.WriteFile(filepath.Join(pub, "page.html"), []byte("v2, longer"), 0o644)
	os.WriteFile(filepath.Join(pub, "app.css"), []byte(big), 0o644)
	// Ranges.
	for _, tc := range []struct {
		rng, body, cr string
		status        int
	}{
		{"bytes=0-1", "v2", "bytes 0-1/10", 206},
		{"bytes=4-", "longer", "bytes 4-9/10", 206},
		{"bytes=-3", "ger", "bytes 7-9/10", 206},
		{"bytes=5-100", "onger", "bytes 5-9/10", 206},
		{"bytes=10-", "Requested range not satisfiable\n", "bytes */10", 416},
		{"bytes=0-1,4-5", "v2, longer", "", 200},
		{"bytes=x-y", "v2, longer", "", 200},
		{"items=0-1", "v2, longer", "", 200},
	} {
		r := do(t, "GET", url+"/page.html", "Range", tc.rng)
		if len(r.header.Values("Vary")) > 1 {
			t.Errorf("Range %s: Vary %q", tc.rng, r.header.Values("Vary"))
		}
		if r.status != tc.status || r.body != tc.body || r.header.Get("Content-Range") != tc.cr {
			t.Errorf("Range %s: %d %q %q", tc.rng, r.status, r.body, r.header.Get("Content-Range"))
		}
	}
	if r := do(t, "GET", url+"/page.html", "Range", "bytes=0-1", "If-Range", "stale"); r.status != 200 {
		t.Errorf("If-Range with a stale ETag: %d", r.status)
	}
	// Compression: brotli preferred, gzip by q-value, identity for small.
	for _, tc := range []struct{ ae, enc string }{{"gzip, br", "br"}, {"gzip", "gzip"}, {"br;q=0.1, gzip", "gzip"}, {"identity", ""}, {"*", "br"}} {
		r := do(t, "GET", url+"/app.css", "Accept-Encoding", tc.ae)
		if r.header.Get("Content-Encoding") != tc.enc || r.header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: encoding %q vary %q", tc.ae, r.header.Get("Content-Encoding"), r.header.Get("Vary"))
		}
		if tc.enc != "" && len(r.body) >= len(big)/2 {
			t.Errorf("Accept-Encoding %q: %d bytes for %d", tc.ae, len(r.body), len(big))
		}
	}
}

// fakeFunctions is a FunctionRouter with one function, "api".
type fakeFunctions struct{ got *http.Request }

func (f *fakeFunctions) ServeFunction(w http.ResponseWriter, r *http.Request, id, region string) bool {
	if id != "api" || region != "us-central1" {
		return false
	}
	f.got = r
	switch r.URL.Path {
	case "/api/pass":
		w.Header().Set("X-Cascade", "PASS")
		w.WriteHeader(404)
		io.WriteString(w, "passed")
	case "/api/public":
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("Set-Cookie", "a=b")
		w.Header().Set("Vary", "origin")
		io.WriteString(w, "public")
	default:
		w.Header().Set("Set-Cookie", "a=b")
		io.WriteString(w, "hello from api at "+r.URL.RequestURI())
	}
	return true
}

func TestFunctionRewrites(t *testing.T) {
	t.Parallel()
	cfg := `{"public": "public", "rewrites": [
		{"source": "/api/**", "function": "api"},
		{"source": "/other/**", "function": {"functionId": "other", "region": "europe-west1"}},
		{"source": "/svc/**", "run": {"serviceId": "api"}},
		{"source": "/svc2/**", "run": {"serviceId": "nope", "region": "asia-east1"}}],
		"headers": [{"source": "/api/**", "headers": [{"key": "X-Site", "value": "1"}]}]}`
	eng, url, _ := site(t, cfg, map[string]string{"404.html": "the 404 page"}, hosting.Options{})
	if r := do(t, "GET", url+"/api/x"); r.status != 501 || !strings.Contains(r.body, `"api"`) || !strings.Contains(r.body, "not running") {
		t.Errorf("no router: %d %q", r.status, r.body)
	}
	if r := do(t, "GET", url+"/svc/x"); r.status != 501 || !strings.Contains(r.body, `Cloud Run service "api"`) {
		t.Errorf("run rewrite, no router: %d %q", r.status, r.body)
	}
	fn := &fakeFunctions{}
	eng.SetFunctionRouter(fn)
	if r := do(t, "GET", url+"/api/found-at-request-time"); r.status != 200 {
		t.Fatalf("with a router: %d %q", r.status, r.body)
	}
	r := do(t, "GET", url+"/api/x?q=1", "Cookie", "__session=s1; other=o", "Host", "example.test")
	if r.status != 200 || r.body != "hello from api at /api/x?q=1" {
		t.Fatalf("function: %d %q", r.status, r.body)
	}
	if cc, vary := r.header.Get("Cache-Control"), r.header.Get("Vary"); cc != "private" || vary != "Accept-Encoding, Authorization, Cookie" || r.header.Get("Set-Cookie") != "a=b" || r.header.Get("X-Site") != "1" {
		t.Errorf("response policy: %v", r.header)
	}
	g := fn.got
	if g.Header.Get("Cookie") != "__session=s1" || g.Header.Get("X-Forwarded-Host") != "example.test" || g.Header.Get("X-Original-Url") != "/api/x?q=1" || g.Header.Get("X-Forwarded-For") != "127.0.0.1" {
		t.Errorf("request seen by the function: %v", g.Header)
	}
	if r := do(t, "GET", url+"/api/public"); r.header.Get("Set-Cookie") != "" || r.header.Get("Vary") != "Origin, Accept-Encoding, Authorization, Cookie" {
		t.Errorf("public response: %v", r.header)
	}
	if r := do(t, "GET", url+"/api/pass"); r.status != 404 || r.body != "the 404 page" {
		t.Errorf("X-Cascade: PASS: %d %q", r.status, r.body)
	}
	if r := do(t, "GET", url+"/svc/y"); r.status != 200 || r.body != "hello from api at /svc/y" {
		t.Errorf("run rewrite answered by the function of its name: %d %q", r.status, r.body)
	}
	if r := do(t, "GET", url+"/svc2/y"); r.status != 501 || !strings.Contains(r.body, `"nope" in asia-east1`) {
		t.Errorf("run rewrite without a function: %d %q", r.status, r.body)
	}
	if r := do(t, "GET", url+"/other/x"); r.status != 404 || !strings.Contains(r.body, `"other" in europe-west1`) {
		t.Errorf("unknown function: %d %q", r.status, r.body)
	}
}

func TestReservedURLs(t *testing.T) {
	t.Parallel()
	sdk := t.TempDir()
	os.WriteFile(filepath.Join(sdk, "package.json"), []byte(`{"name": "firebase", "version": "12.19.0"}`), 0o644)
	os.WriteFile(filepath.Join(sdk, "firebase-app-compat.js"), []byte("/* app */"), 0o644)
	opts := hosting.Options{Project: "demo-p", SDKDirs: []string{sdk}, Emulators: func() map[string]string {
		return map[string]string{"auth": "127.0.0.1:9099", "firestore": "0.0.0.0:8080", "messaging": "127.0.0.1:1"}
	}}
	_, url, _ := site(t, `{"public": "public", "rewrites": [{"source": "**", "destination": "/index.html"}]}`, map[string]string{"index.html": "app"}, opts)
	r := do(t, "GET", url+"/__/firebase/init.json")
	var cfg map[string]string
	if err := json.Unmarshal([]byte(r.body), &cfg); err != nil || cfg["projectId"] != "demo-p" || cfg["apiKey"] == "" || cfg["authDomain"] != "demo-p.firebaseapp.com" {
		t.Errorf("init.json: %d %q", r.status, r.body)
	}
	r = do(t, "GET", url+"/__/firebase/init.js?useEmulator=true")
	if r.header.Get("Content-Type") != "application/javascript" || !strings.Contains(r.body, `"hostAndPort": "127.0.0.1:9099"`) ||
		!strings.Contains(r.body, `"hostAndPort": "127.0.0.1:8080"`) || strings.Contains(r.body, "messaging") {
		t.Errorf("init.js?useEmulator=true: %s", r.body)
	}
	if r := do(t, "GET", url+"/__/firebase/init.js"); !strings.Contains(r.body, "var emulators = undefined;") {
		t.Errorf("init.js: %s", r.body)
	}
	if r := do(t, "GET", url+"/__/auth/handler?apiKey=k&authType=signInViaPopup"); r.status != 302 || r.header.Get("Location") != "http://127.0.0.1:9099/emulator/auth/handler?apiKey=k&authType=signInViaPopup" {
		t.Errorf("auth handler: %d %v", r.status, r.header)
	}
	if r := do(t, "GET", url+"/__/auth/iframe"); r.status != 302 || r.header.Get("Location") != "http://127.0.0.1:9099/emulator/auth/iframe" {
		t.Errorf("auth iframe: %d %v", r.status, r.header)
	}
	if r := do(t, "GET", url+"/__/firebase/12.19.0/firebase-app-compat.js"); r.status != 200 || r.body != "/* app */" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/javascript") {
		t.Errorf("local SDK: %d %q", r.status, r.body)
	}
	r = do(t, "GET", url+"/__/firebase/11.0.0/firebase-app-compat.js")
	if r.status != 404 || !strings.Contains(r.body, "version 11.0.0") || !strings.Contains(r.body, "12.19.0") {
		t.Errorf("SDK version without a copy: %d %q", r.status, r.body)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cfg, want string }{
		{`{"public": "p", "redirects": [{"source": "/a"}]}`, `hosting.redirects[0]: "destination" is required`},
		{`{"public": "p", "redirects": [{"source": "/a", "destination": "/b", "type": 307}]}`, `"type" must be 301 or 302`},
		{`{"public": "p", "redirects": [{"destination": "/b"}]}`, `"source" or "regex" is required`},
		{`{"public": "p", "rewrites": [{"source": "/a", "regex": "b", "destination": "/x"}]}`, `not both`},
		{`{"public": "p", "rewrites": [{"regex": "(", "destination": "/x"}]}`, `not RE2 syntax`},
		{`{"public": "p", "rewrites": [{"source": "/a", "function": {"functionId": "f"}, "region": "r"}]}`, `"region" is allowed only when "function" is a string`},
		{`{"public": "p", "rewrites": [{"source": "/a"}]}`, `one of "destination", "function", "run" or "dynamicLinks" is required`},
		{`{"public": "p", "rewrites": [{"source": "/a", "run": {}}]}`, `"serviceId" is required`},
		{`{"public": "p", "headers": [{"source": "/a", "headers": [{"key": "Bad Key", "value": "v"}]}]}`, `"key" must be a header name`},
		{`{"public": "p", "headers": [{"source": "/a", "headers": [{"key": "X", "value": "a\nb"}]}]}`, `line break`},
		{`{"public": "p", "i18n": {}}`, `"root" is required`},
		{`{"public": "p", "appAssociation": "YES"}`, `want "AUTO" or "NONE"`},
		{`{"public": "p", "cleanUrls": "yes"}`, `cleanUrls`},
		{`{}`, `give a "public" directory`},
		{`{"source": "."}`, `web frameworks`},
		{`[{"public": "p"}]`, `hosting[0]: a site in a list needs "site" or "target"`},
		{`[{"site": "a", "public": "p"}, {"site": "a", "public": "q"}]`, `site "a" appears twice`},
		{`{"site": "a", "target": "b", "public": "p"}`, `either "site" or "target"`},
		{`{"public": "p", "rewrites": [{"source": "/!(x)", "destination": "/y"}]}`, `not supported`},
	} {
		_, err := hosting.ParseConfig(json.RawMessage(tc.cfg), "/proj", "demo")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one holding %q", tc.cfg, err, tc.want)
		}
	}
	cfgs, err := hosting.ParseConfig(json.RawMessage(`{"public": "dist", "rewrites": [{"source": "**", "function": "api", "region": "europe-west1"}]}`), "/proj", "demo")
	if err != nil {
		t.Fatal(err)
	}
	c := cfgs[0]
	if c.Name != "demo" || c.Public != "/proj/dist" || c.Rewrites[0].Function.FunctionID != "api" || c.Rewrites[0].Function.Region != "europe-west1" {
		t.Errorf("parsed %+v", c)
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	var got []hosting.Record
	ch := make(chan hosting.Record, 10)
	eng, url, _ := site(t, `{"public": "public", "redirects": [{"source": "/r", "destination": "/"}], "headers": [{"source": "**", "headers": [{"key": "X", "value": "1"}]}], "rewrites": [{"source": "/app/**", "destination": "/index.html"}]}`,
		map[string]string{"index.html": "i"}, hosting.Options{Log: func(r hosting.Record) { ch <- r }})
	do(t, "GET", url+"/r")
	do(t, "GET", url+"/app/x")
	do(t, "GET", url+"/nope")
	for i := 0; i < 3; i++ {
		got = append(got, <-ch)
	}
	if kept := eng.Requests(); len(kept) != 3 || kept[2].Path != "/nope" || kept[0].At.IsZero() {
		t.Errorf("Requests() = %+v", kept)
	}
	if got[0].Rule != "redirects[0]" || got[0].Status != 301 || got[1].Rule != "rewrites[0]" || got[1].File != "/index.html" || len(got[1].Headers) != 1 || got[2].Rule != "404" || got[2].Status != 404 {
		t.Errorf("records: %+v", got)
	}
}

func FuzzServe(f *testing.F) {
	for _, s := range []string{"/", "/a%2Fb", "/%zz", "/docs/../x", "//a//b", "/posts/x", "/r/1/a", "/__/firebase/1/x.js", "/caf%C3%A9?x=%zz"} {
		f.Add(s, "fr;q=0.5, en", "bytes=0-5", "gzip, br")
	}
	dir := f.TempDir()
	os.MkdirAll(filepath.Join(dir, "public", "docs"), 0o755)
	os.WriteFile(filepath.Join(dir, "public", "index.html"), bytes.Repeat([]byte("x"), 2000), 0o644)
	os.WriteFile(filepath.Join(dir, "public", "docs", "index.html"), []byte("d"), 0o644)
	cfgs, err := hosting.ParseConfig(json.RawMessage(`{"public": "public", "cleanUrls": true, "i18n": {"root": "/intl"},
		"redirects": [{"source": "/posts/:p*", "destination": "/b/:p*"}, {"regex": "^/r/(\\d+)/(\\w+)", "destination": "/i/:1?n=:2"}],
		"headers": [{"source": "**/*.@(js|css)", "headers": [{"key": "X", "value": "1"}]}],
		"rewrites": [{"source": "/app/**", "destination": "/index.html"}]}`), dir, "demo")
	if err != nil {
		f.Fatal(err)
	}
	s := hosting.New(cfgs, hosting.Options{Project: "demo"}).Sites()[0]
	f.Fuzz(func(t *testing.T, path, lang, rng, ae string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		req := httptest.NewRequest("GET", "http://x/", nil)
		req.RequestURI = path
		req.URL.Path = path
		req.Header.Set("Accept-Language", lang)
		req.Header.Set("Range", rng)
		req.Header.Set("Accept-Encoding", ae)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Errorf("%q: %d %s", path, w.Code, w.Body)
		}
	})
}

// TestFunctionsOption: the router found at request time (the backend's
// Functions endpoint, once it runs).
func TestFunctionsOption(t *testing.T) {
	t.Parallel()
	var router atomic.Pointer[fakeFunctions]
	_, url, _ := site(t, `{"public": "public", "rewrites": [{"source": "/api/**", "function": "api"}]}`, nil,
		hosting.Options{Functions: func() hosting.FunctionRouter {
			if f := router.Load(); f != nil {
				return f
			}
			return nil
		}})
	if r := do(t, "GET", url+"/api/x"); r.status != 501 {
		t.Errorf("before Functions run: %d", r.status)
	}
	router.Store(&fakeFunctions{})
	if r := do(t, "GET", url+"/api/x"); r.status != 200 || r.body != "hello from api at /api/x" {
		t.Errorf("once Functions run: %d %q", r.status, r.body)
	}
}
