package storageserver

import (
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	engine "github.com/pyric/pyric/storage"
)

// FuzzMultipart: any Content-Type and body decode to an upload or a 400,
// never a panic; the media part streams to its end.
func FuzzMultipart(f *testing.F) {
	body, ct := multipartBody(`{"name":"a","contentType":"text/plain","metadata":{"k":"v","n":null}}`, "text/plain", "data")
	f.Add(ct, body)
	f.Add("multipart/related; boundary=B", "--B\r\n\r\n{}\r\n--B\r\nContent-Type: x/y\r\n\r\n\r\n--B--")
	f.Add("multipart/related", "")
	f.Add("text/plain", "x")
	f.Add("multipart/related; boundary=B", "--B\r\n\r\n{\"metadata\":[1]}\r\n--B--")
	f.Add("multipart/related; boundary=\"\"", "--\r\n")
	f.Fuzz(func(t *testing.T, ct, body string) {
		mp, err := decodeMultipart(ct, strings.NewReader(body))
		if err != nil {
			if engine.CodeOf(err) != engine.InvalidArgument {
				t.Fatalf("error %v is not InvalidArgument", err)
			}
			return
		}
		io.Copy(io.Discard, mp.Media)
	})
}

// FuzzResource: any metadata body is an object resource or a 400 naming
// the problem.
func FuzzResource(f *testing.F) {
	for _, s := range []string{`{}`, ``, `null`, `{"contentType":null}`, `{"metadata":null}`, `{"metadata":{"a":1,"b":true,"c":null,"d":"x"}}`,
		`{"metadata":{"a":{}}}`, `{"name":5}`, `[]`, `{"cacheControl":"x","md5Hash":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseResource(b); err != nil && engine.CodeOf(err) != engine.InvalidArgument {
			t.Fatalf("error %v is not InvalidArgument", err)
		}
	})
}

// FuzzContentRange: the resumable Content-Range parser accepts exactly the
// four forms and yields consistent ranges.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"", "bytes */*", "bytes */10", "bytes 0-9/*", "bytes 0-9/10", "bytes 5-3/*", "bytes 0-9/5", "bytes -1-2/*", "bits 0-1/2", "bytes 0-/*", "bytes 0-*/*", "bytes 3-*/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cr, err := parseContentRange(s)
		if err != nil {
			if engine.CodeOf(err) != engine.InvalidArgument {
				t.Fatalf("error %v", err)
			}
			return
		}
		if cr.toEnd && (cr.first < 0 || cr.last != -1 || (cr.total >= 0 && cr.first > cr.total)) {
			t.Fatalf("inconsistent open range %+v from %q", cr, s)
		}
		if cr.hasBytes && !cr.toEnd && (cr.first < 0 || cr.last < cr.first || (cr.total >= 0 && cr.last >= cr.total)) {
			t.Fatalf("inconsistent range %+v from %q", cr, s)
		}
	})
}

// FuzzUploadCommand: X-Goog-Upload-Command parses or is a 400.
func FuzzUploadCommand(f *testing.F) {
	for _, s := range []string{"start", "upload", "upload, finalize", "finalize", "query", "cancel", "", "query, cancel", ", ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseUploadCommand(s)
		if err == nil && (c.query || c.cancel) && (c.upload || c.finalize) {
			t.Fatalf("%q combines query/cancel with upload", s)
		}
	})
}

// FuzzPath: path decoding never panics and names round-trip through
// escaping.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"/b", "/b/bkt", "/b/bkt/o", "/b/bkt/o/a%2Fb", "/b/bkt/o/a/b/copyTo/b/x/o/y", "/b/bkt/o/a/rewriteTo/b/x/o/", "/b/%zz/o", "/b/bkt/o/a/compose", "/bkt/a%2Fb", "/b//o/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tg, ok := parsePath(s); ok && tg.Action != "" && tg.DstObject == "" && tg.Action != "compose" {
			t.Fatalf("%q: copy without a destination object", s)
		}
		parseXMLPath(s)
	})
}

// FuzzHandler: any request to any route is answered without a panic and
// without a 5xx, and what was stored before stays readable.
func FuzzHandler(f *testing.F) {
	f.Add("POST", "/v0/b/demo-pyric.appspot.com/o?name=x", "multipart", "", "multipart/related; boundary=B", "--B\r\n\r\n{}\r\n--B\r\n\r\nz\r\n--B--")
	f.Add("POST", "/v0/b/demo-pyric.appspot.com/o?name=x", "resumable", "start", "", "{}")
	f.Add("POST", "/v0/b/demo-pyric.appspot.com/o?upload_id=u", "", "upload, finalize", "", "abc")
	f.Add("GET", "/v0/b/demo-pyric.appspot.com/o?prefix=&delimiter=/&maxResults=1", "", "", "", "")
	f.Add("PATCH", "/storage/v1/b/demo-pyric.appspot.com/o/keep", "", "", "application/json", `{"metadata":{"a":null}}`)
	f.Add("PUT", "/upload/storage/v1/b/demo-pyric.appspot.com/o?upload_id=zz", "", "", "", "x")
	f.Add("POST", "/upload/storage/v1/b/demo-pyric.appspot.com/o?uploadType=resumable&name=r", "", "", "", "")
	f.Add("GET", "/demo-pyric.appspot.com/keep", "", "", "", "")
	f.Add("POST", "/storage/v1/b/demo-pyric.appspot.com/o/keep/copyTo/b/x-y-z/o/k2", "", "", "", "{}")
	f.Add("DELETE", "/b/demo-pyric.appspot.com/o/%ff", "", "", "", "")
	f.Add("PUT", "/internal/setRules", "", "", "", `{"rules":{"files":[{"content":"x"}]}}`)
	e, err := engine.New(service.Env{Project: "demo-pyric"}, engine.Options{MaxObjectSize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	e.SetRules("", `rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read, write: if request.auth != null; } }`)
	if _, err := e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "keep", Body: strings.NewReader("kept")}); err != nil {
		f.Fatal(err)
	}
	h := NewHandler(e)
	f.Fuzz(func(t *testing.T, method, target, protocol, command, ct, body string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://pyric.test"+target, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("X-Goog-Upload-Protocol", protocol)
		req.Header.Set("X-Goog-Upload-Command", command)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Firebase "+mockToken("u"))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body.String())
		}
		// Whatever the request did, every stored object's bytes still
		// match its metadata.
		total := 0
		for _, b := range e.Buckets() {
			res, err := e.List(identity.AdminIdentity(), engine.ListRequest{Bucket: b})
			if err != nil {
				t.Fatalf("list %s: %v", b, err)
			}
			for _, o := range res.Items {
				_, r, err := e.Open(identity.AdminIdentity(), engine.ReadRequest{Bucket: b, Name: o.Name})
				if err != nil {
					t.Fatalf("stored object %s unreadable: %v", o.Name, err)
				}
				h := md5.New()
				io.Copy(h, io.NewSectionReader(r, 0, o.Size))
				r.Close()
				if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != o.MD5Hash {
					t.Fatalf("stored object %s corrupted: md5 %s, metadata says %s", o.Name, got, o.MD5Hash)
				}
			}
			total += len(res.Items)
		}
		if total > 100 {
			// Keep each check cheap: start over from the one object.
			e.Reset()
			e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "keep", Body: strings.NewReader("kept")})
		}
	})
}
