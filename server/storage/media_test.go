package storageserver

import (
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	engine "github.com/pyric/pyric/storage"
)

// TestDownloadHeaders holds a download's whole header set, names in
// their canonical form (serveMedia writes the map directly), for a plain
// object and for one with every optional header, custom metadata and an
// active type.
func TestDownloadHeaders(t *testing.T) {
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	cases := []struct {
		name, body string
		attrs      engine.Attrs
		extra      map[string]string
	}{
		{name: "plain.bin", body: strings.Repeat("s", 1024)},
		{name: "page.html", body: "<p>hi</p>", attrs: engine.Attrs{ContentType: s("text/html; charset=utf-8"), ContentEncoding: s("identity"),
			ContentDisposition: s("inline"), ContentLanguage: s("en"), CacheControl: s("no-cache"),
			Metadata: map[string]*string{"color": s("blue"), engine.TokenKey: s("tok")}},
			extra: map[string]string{"Content-Security-Policy": "sandbox", "Content-Encoding": "identity", "Content-Disposition": "inline",
				"Content-Language": "en", "Cache-Control": "no-cache", "X-Goog-Meta-Color": "blue"}},
	}
	h := NewHandler(e)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: c.name, Attrs: c.attrs, Body: strings.NewReader(c.body)})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/"+bkt+"/"+c.name, nil))
			if rec.Code != 200 || rec.Body.String() != c.body {
				t.Fatalf("%d %q", rec.Code, rec.Body)
			}
			want := map[string]string{
				"Content-Type": o.ContentType, "X-Content-Type-Options": "nosniff", "Etag": `"` + o.ETag() + `"`,
				"X-Goog-Generation": strconv.FormatInt(o.Generation, 10), "X-Goog-Metageneration": "1",
				"X-Goog-Hash": "crc32c=" + o.CRC32C + ",md5=" + o.MD5Hash, "X-Goog-Stored-Content-Encoding": "identity",
				"X-Goog-Stored-Content-Length": strconv.Itoa(len(c.body)), "X-Goog-Storage-Class": "STANDARD",
				"Last-Modified": o.Updated.UTC().Format(http.TimeFormat), "Accept-Ranges": "bytes",
			}
			if o.ContentEncoding == "" {
				want["Content-Length"] = strconv.Itoa(len(c.body))
			}
			maps.Copy(want, c.extra)
			got := rec.Result().Header
			for k, vs := range rec.Header() {
				if http.CanonicalHeaderKey(k) != k {
					t.Errorf("header %q is not in canonical form", k)
				}
				if len(vs) != 1 {
					t.Errorf("%s: %q, want one value", k, vs)
				}
			}
			for k, v := range want {
				if got.Get(k) != v {
					t.Errorf("%s: %q, want %q", k, got.Get(k), v)
				}
			}
			for _, k := range slices.Sorted(maps.Keys(got)) {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected header %s: %q", k, got[k])
				}
			}
		})
	}
}

// TestPassiveTypesParsePassive holds activeType's table of common types
// to what parsing them decides.
func TestPassiveTypesParsePassive(t *testing.T) {
	for ct := range passiveTypes {
		if _, _, err := mime.ParseMediaType(ct); err != nil || parsedActive(ct) {
			t.Errorf("%q is in passiveTypes but parses as active (or does not parse: %v)", ct, err)
		}
	}
	for _, ct := range []string{"text/html", "image/svg+xml", "application/javascript", "TEXT/HTML", "text/html; charset=utf-8", "bad type"} {
		if !activeType(ct) {
			t.Errorf("activeType(%q) = false, want true", ct)
		}
	}
}

// TestServeWholeMatchesServeContent holds serveWhole's answer to a plain
// download (GET or HEAD, no range, no condition) to net/http's
// ServeContent's for the same request: an If-Range without a Range,
// which ServeContent ignores, sends the request through ServeContent.
// Each range or condition header still gets ServeContent's answer.
func TestServeWholeMatchesServeContent(t *testing.T) {
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	h := NewHandler(e)
	objects := []struct {
		name, body string
		attrs      engine.Attrs
	}{
		{name: "plain.bin", body: strings.Repeat("s", 1024)},
		{name: "empty.txt", body: ""},
		{name: "large.bin", body: strings.Repeat("0123456789abcdef", 5<<10)},
		{name: "page.html.gz", body: "\x1f\x8bnot really gzip", attrs: engine.Attrs{ContentType: s("text/html"), ContentEncoding: s("gzip"),
			CacheControl: s("no-cache"), Metadata: map[string]*string{"color": s("blue")}}},
	}
	do := func(method, name string, kv ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "/"+bkt+"/"+name, nil)
		for i := 0; i < len(kv); i += 2 {
			req.Header.Set(kv[i], kv[i+1])
		}
		if wholeRead(req) == (len(kv) > 0) {
			t.Fatalf("wholeRead(%s %v) = %v", method, kv, wholeRead(req))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, c := range objects {
		o, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: c.name, Attrs: c.attrs, Body: strings.NewReader(c.body)})
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"GET", "HEAD"} {
			got, want := do(method, c.name), do(method, c.name, "If-Range", `"other"`)
			if got.Code != 200 || got.Code != want.Code || got.Body.String() != want.Body.String() {
				t.Errorf("%s %s: %d %q, ServeContent %d %q", method, c.name, got.Code, got.Body, want.Code, want.Body)
			}
			if method == "GET" && got.Body.String() != c.body {
				t.Errorf("GET %s: body %q, want %q", c.name, got.Body, c.body)
			}
			if !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) {
				t.Errorf("%s %s: headers\n%v\nServeContent's\n%v", method, c.name, got.Header(), want.Header())
			}
		}
		past, future := o.Updated.Add(-time.Hour).UTC().Format(http.TimeFormat), o.Updated.Add(time.Hour).UTC().Format(http.TimeFormat)
		for _, cond := range []struct {
			kv   []string
			code int
		}{
			{[]string{"Range", "bytes=0-0"}, http.StatusPartialContent},
			{[]string{"If-None-Match", `"` + o.ETag() + `"`}, http.StatusNotModified},
			{[]string{"If-Match", `"other"`}, http.StatusPreconditionFailed},
			{[]string{"If-Modified-Since", future}, http.StatusNotModified},
			{[]string{"If-Unmodified-Since", past}, http.StatusPreconditionFailed},
			{[]string{"If-Range", `"other"`, "Range", "bytes=0-0"}, http.StatusOK},
		} {
			if c.body == "" && cond.kv[0] == "Range" {
				continue // no byte 0 to send
			}
			if got := do("GET", c.name, cond.kv...); got.Code != cond.code {
				t.Errorf("GET %s %v: %d, want %d", c.name, cond.kv, got.Code, cond.code)
			}
		}
	}
}
