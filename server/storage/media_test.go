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
