package storageserver

import (
	"context"
	"encoding/json"
	"github.com/pyric/pyric/server"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	engine "github.com/pyric/pyric/storage"
	"github.com/pyric/pyric/storage/storagetest"
)

const bkt = "demo-pyric.appspot.com"

// mockToken is a JS SDK mock token for uid (alg none, empty signature).
func mockToken(uid string) string {
	enc := func(s string) string { return strings.TrimRight(b64(s), "=") }
	return enc(`{"alg":"none","type":"JWT"}`) + "." + enc(`{"sub":"`+uid+`","user_id":"`+uid+`","iat":0,"exp":3600}`) + "."
}

type testServer struct {
	*testing.T
	e   *engine.Engine
	url string
}

func newServer(t *testing.T, rules string) *testServer {
	t.Helper()
	e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rules != "" {
		if _, err := e.SetRules("storage.rules", rules); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(server.Guard(NewHandler(e), nil)) // as on its port
	t.Cleanup(ts.Close)
	return &testServer{T: t, e: e, url: ts.URL}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("not JSON (%d): %q", r.status, r.body)
	}
	return m
}

func (s *testServer) do(method, path string, body string, headers ...string) resp {
	s.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = s.url + path
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		s.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: string(b)}
}

const openRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{path=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /teams/{team}/{file} {
      allow read: if firestore.exists(/databases/(default)/documents/teams/$(team));
    }
  }
}`

func multipartBody(meta, contentType, data string) (string, string) {
	b := "BOUNDARY"
	return "--" + b + "\r\nContent-Type: application/json; charset=utf-8\r\n\r\n" + meta + "\r\n--" + b +
		"\r\nContent-Type: " + contentType + "\r\n\r\n" + data + "\r\n--" + b + "--", "multipart/related; boundary=" + b
}

func TestFirebaseAPI(t *testing.T) {
	s := newServer(t, openRules)
	alice := "Firebase " + mockToken("alice")
	body, ct := multipartBody(`{"name":"users/alice/a b.txt","contentType":"text/plain","metadata":{"k":"v"}}`, "application/octet-stream", "hello")
	r := s.do("POST", "/v0/b/"+bkt+"/o?name=users%2Falice%2Fa%20b.txt", body, "Authorization", alice, "X-Goog-Upload-Protocol", "multipart", "Content-Type", ct)
	if r.status != 200 {
		t.Fatalf("multipart upload: %d %s", r.status, r.body)
	}
	m := r.json(t)
	if m["size"] != "5" || m["generation"] == "" || m["metageneration"] != "1" || m["contentType"] != "text/plain" || m["contentEncoding"] != "identity" ||
		m["downloadTokens"] == nil || m["md5Hash"] != "XUFAKrxLKna5cZ2REBfFkg==" || m["metadata"].(map[string]any)["k"] != "v" {
		t.Errorf("metadata %v", m)
	}
	token := m["downloadTokens"].(string)
	obj := "/v0/b/" + bkt + "/o/users%2Falice%2Fa%20b.txt"

	// Reads: metadata, media, Range, the download token for anyone.
	if r := s.do("GET", obj, "", "Authorization", alice); r.status != 200 || r.json(t)["name"] != "users/alice/a b.txt" {
		t.Errorf("get metadata: %d %s", r.status, r.body)
	}
	if r := s.do("GET", obj+"?alt=media", "", "Authorization", alice, "Range", "bytes=1-3"); r.status != 206 || r.body != "ell" || r.header.Get("Content-Range") != "bytes 1-3/5" {
		t.Errorf("range: %d %q %v", r.status, r.body, r.header)
	}
	if r := s.do("GET", obj+"?alt=media&token="+token, ""); r.status != 200 || r.body != "hello" || r.header.Get("Content-Type") != "text/plain" {
		t.Errorf("token download: %d %q", r.status, r.body)
	}
	if r := s.do("GET", obj+"?alt=media", ""); r.status != 403 {
		t.Errorf("anonymous download: %d", r.status)
	}
	if r := s.do("GET", obj, "", "Authorization", "Firebase garbage"); r.status != 401 {
		t.Errorf("bad token: %d %s", r.status, r.body)
	}
	if r := s.do("GET", obj, "", "Authorization", "Firebase owner"); r.status != 200 {
		t.Errorf("owner: %d", r.status)
	}
	if r := s.do("GET", "/v0/b/"+bkt+"/o/users%2Falice%2Fmissing", "", "Authorization", alice); r.status != 404 || r.json(t)["error"] == nil {
		t.Errorf("missing: %d %s", r.status, r.body)
	}

	// Patch: null clears, metageneration moves.
	r = s.do("PATCH", obj, `{"cacheControl":"no-cache","metadata":{"k":null,"n":"1"}}`, "Authorization", alice, "Content-Type", "application/json")
	if m := r.json(t); r.status != 200 || m["metageneration"] != "2" || m["cacheControl"] != "no-cache" || len(m["metadata"].(map[string]any)) != 1 {
		t.Errorf("patch: %d %s", r.status, r.body)
	}
	if r := s.do("PATCH", obj, `{"metadata":[1]}`, "Authorization", alice); r.status != 400 || !strings.Contains(r.body, "metadata") {
		t.Errorf("bad patch: %d %s", r.status, r.body)
	}

	// Tokens: create and revoke.
	r = s.do("POST", obj+"?create_token=true", "", "Authorization", "Firebase owner")
	if toks := r.json(t)["downloadTokens"].(string); r.status != 200 || len(strings.Split(toks, ",")) != 2 {
		t.Errorf("create token: %d %s", r.status, r.body)
	}
	r = s.do("POST", obj+"?delete_token="+token, "", "Authorization", "Firebase owner")
	if strings.Contains(r.body, token) {
		t.Errorf("token not revoked: %s", r.body)
	}
	if r := s.do("GET", obj+"?alt=media&token="+token, ""); r.status != 403 {
		t.Errorf("revoked token still reads: %d", r.status)
	}

	// Raw upload and list with combined maxResults.
	for _, n := range []string{"users/alice/d/1", "users/alice/d/2", "users/alice/d/sub/3"} {
		if r := s.do("POST", "/v0/b/"+bkt+"/o?name="+strings.ReplaceAll(n, "/", "%2F"), n, "Authorization", alice, "Content-Type", "text/plain"); r.status != 200 {
			t.Fatalf("raw upload: %d %s", r.status, r.body)
		}
	}
	r = s.do("GET", "/v0/b/"+bkt+"/o?prefix=users%2Falice%2Fd%2F&delimiter=%2F&maxResults=2", "", "Authorization", alice)
	m = r.json(t)
	if len(m["items"].([]any)) != 2 || len(m["prefixes"].([]any)) != 0 || m["nextPageToken"] == nil {
		t.Errorf("page 1: %s", r.body)
	}
	r = s.do("GET", "/v0/b/"+bkt+"/o?prefix=users%2Falice%2Fd%2F&delimiter=%2F&maxResults=2&pageToken="+m["nextPageToken"].(string), "", "Authorization", alice)
	if m := r.json(t); len(m["items"].([]any)) != 0 || m["prefixes"].([]any)[0] != "users/alice/d/sub/" || m["nextPageToken"] != nil {
		t.Errorf("page 2: %s", r.body)
	}
	for _, bad := range []string{"maxResults=0", "maxResults=1001", "maxResults=x", "pageToken=%25%25"} {
		if r := s.do("GET", "/v0/b/"+bkt+"/o?prefix=users%2Falice%2F&"+bad, "", "Authorization", alice); r.status != 400 {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
	if r := s.do("GET", "/v0/b/"+bkt+"/o?prefix=users%2Fbob%2F", "", "Authorization", alice); r.status != 403 {
		t.Errorf("denied list: %d", r.status)
	} else if want := `"message":"Permission denied. denied by allow read, write at L5 in match /b/{bucket}/o/users/{uid}/{path=**}\nrequest.auth.uid == uid → 'alice' == 'bob' is false"`; !strings.Contains(r.body, want) {
		// Production's words first, then why.
		t.Errorf("denied list body %s lacks %s", r.body, want)
	}

	// Delete: 204, then 404.
	if r := s.do("DELETE", obj, "", "Authorization", alice); r.status != 204 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := s.do("DELETE", obj, "", "Authorization", alice); r.status != 404 {
		t.Errorf("delete again: %d", r.status)
	}
}

// conformance: storage.upload.resumable-range
func TestFirebaseResumable(t *testing.T) {
	s := newServer(t, openRules)
	alice := "Firebase " + mockToken("alice")
	start := func(name string, size int) resp {
		return s.do("POST", "/v0/b/"+bkt+"/o?name="+name, `{"name":"`+name+`","metadata":{"x":"y"}}`, "Authorization", alice,
			"X-Goog-Upload-Protocol", "resumable", "X-Goog-Upload-Command", "start",
			"X-Goog-Upload-Header-Content-Length", itoa(size), "X-Goog-Upload-Header-Content-Type", "text/plain")
	}
	r := start("users%2Falice%2Fr.txt", 10)
	url := r.header.Get("X-Goog-Upload-URL")
	if r.status != 200 || r.header.Get("X-Goog-Upload-Status") != "active" || !strings.Contains(url, "upload_id=") {
		t.Fatalf("start: %d %v", r.status, r.header)
	}
	if r := s.do("POST", url, "x", "X-Goog-Upload-Command", "upload", "X-Goog-Upload-Offset", "5"); r.status != 400 {
		t.Errorf("gap offset: %d", r.status)
	}
	r = s.do("POST", url, "01234", "X-Goog-Upload-Command", "upload", "X-Goog-Upload-Offset", "0")
	if r.status != 200 || r.header.Get("X-Goog-Upload-Status") != "active" || r.header.Get("X-Goog-Upload-Size-Received") != "5" {
		t.Errorf("chunk: %d %v", r.status, r.header)
	}
	if r := s.do("GET", "/v0/b/"+bkt+"/o/users%2Falice%2Fr.txt", "", "Authorization", alice); r.status != 404 {
		t.Errorf("partial upload visible: %d", r.status)
	}
	r = s.do("POST", url, "", "X-Goog-Upload-Command", "query")
	if r.header.Get("X-Goog-Upload-Size-Received") != "5" || r.header.Get("X-Goog-Upload-Status") != "active" {
		t.Errorf("query: %v", r.header)
	}
	r = s.do("POST", url, "56789", "X-Goog-Upload-Command", "upload, finalize", "X-Goog-Upload-Offset", "5")
	if r.status != 200 || r.header.Get("X-Goog-Upload-Status") != "final" || r.json(t)["size"] != "10" || r.json(t)["contentType"] != "text/plain" {
		t.Errorf("finalize: %d %v %s", r.status, r.header, r.body)
	}
	if r := s.do("POST", url, "", "X-Goog-Upload-Command", "query"); r.header.Get("X-Goog-Upload-Status") != "final" {
		t.Errorf("query final: %v", r.header)
	}
	for _, bad := range []string{"", "jump", "query, upload"} {
		if r := s.do("POST", url, "", "X-Goog-Upload-Command", bad); r.status != 400 {
			t.Errorf("command %q: %d", bad, r.status)
		}
	}
	r = start("users%2Falice%2Fc.txt", -1)
	url = r.header.Get("X-Goog-Upload-URL")
	s.do("POST", url, "abc", "X-Goog-Upload-Command", "upload", "X-Goog-Upload-Offset", "0")
	if r := s.do("POST", url, "", "X-Goog-Upload-Command", "cancel"); r.status != 200 || r.header.Get("X-Goog-Upload-Status") != "cancelled" {
		t.Errorf("cancel: %d %v", r.status, r.header)
	}
	if r := s.do("POST", url, "d", "X-Goog-Upload-Command", "upload, finalize", "X-Goog-Upload-Offset", "3"); r.status != 404 {
		t.Errorf("after cancel: %d", r.status)
	}
	if r := start("users%2Fbob%2Fx", 1); r.status != 403 {
		t.Errorf("denied start: %d", r.status)
	}
	if r := s.do("POST", "/v0/b/"+bkt+"/o?upload_id=nope", "", "X-Goog-Upload-Command", "query"); r.status != 404 {
		t.Errorf("unknown session: %d", r.status)
	}
}

func itoa(n int) string {
	if n < 0 {
		return ""
	}
	b, _ := json.Marshal(n)
	return string(b)
}

func TestGCSAPI(t *testing.T) {
	s := newServer(t, "")
	body, ct := multipartBody(`{"name":"a/b.txt","contentType":"text/plain","metadata":{"m":"1"}}`, "text/html", "hello gcs")
	r := s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=multipart", body, "Content-Type", ct)
	m := r.json(t)
	if r.status != 200 || m["kind"] != "storage#object" || m["size"] != "9" || m["contentType"] != "text/plain" || m["crc32c"] == "" {
		t.Fatalf("multipart: %d %s", r.status, r.body)
	}
	gen := m["generation"].(string)

	// XML read with its headers, Range, 416.
	r = s.do("GET", "/"+bkt+"/a%2Fb.txt", "")
	if r.status != 200 || r.body != "hello gcs" || r.header.Get("X-Goog-Generation") != gen || !strings.HasPrefix(r.header.Get("X-Goog-Hash"), "crc32c=") ||
		r.header.Get("X-Goog-Meta-m") != "1" || r.header.Get("X-Goog-Stored-Content-Encoding") != "identity" {
		t.Errorf("xml read: %d %q %v", r.status, r.body, r.header)
	}
	if r := s.do("GET", "/"+bkt+"/a/b.txt", "", "Range", "bytes=-3"); r.status != 206 || r.body != "gcs" {
		t.Errorf("suffix range: %d %q", r.status, r.body)
	}
	if r := s.do("GET", "/"+bkt+"/a/b.txt", "", "Range", "bytes=100-"); r.status != 416 {
		t.Errorf("range past the end: %d", r.status)
	}
	if r := s.do("GET", "/download/storage/v1/b/"+bkt+"/o/a%2Fb.txt?alt=media&generation="+gen, ""); r.status != 200 || r.body != "hello gcs" {
		t.Errorf("download: %d", r.status)
	}
	if r := s.do("GET", "/storage/v1/b/"+bkt+"/o/a%2Fb.txt?alt=media", ""); r.status != 200 || r.body != "hello gcs" {
		t.Errorf("alt=media: %d", r.status)
	}

	// Errors in the GCS envelope, never a 5xx.
	r = s.do("GET", "/storage/v1/b/"+bkt+"/o/missing", "")
	if e := r.json(t)["error"].(map[string]any); r.status != 404 || e["errors"].([]any)[0].(map[string]any)["reason"] != "notFound" {
		t.Errorf("404 envelope: %s", r.body)
	}
	r = s.do("DELETE", "/storage/v1/b/"+bkt+"/o/a%2Fb.txt?ifGenerationMatch=1", "")
	if r.status != 412 || !strings.Contains(r.body, "conditionNotMet") {
		t.Errorf("precondition: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ method, path, body, ct string }{
		{"POST", "/upload/storage/v1/b/" + bkt + "/o?uploadType=multipart", "junk", "text/plain"},
		{"POST", "/upload/storage/v1/b/" + bkt + "/o?uploadType=multipart", "--B\r\n\r\n{bad json\r\n--B--", "multipart/related; boundary=B"},
		{"POST", "/upload/storage/v1/b/" + bkt + "/o?uploadType=odd&name=x", "", ""},
		{"POST", "/upload/storage/v1/b/" + bkt + "/o?uploadType=media", "x", "text/plain"},
		{"POST", "/upload/storage/v1/b/BAD/o?uploadType=media&name=x", "x", ""},
		{"PATCH", "/storage/v1/b/" + bkt + "/o/a%2Fb.txt", "[]", "application/json"},
		{"GET", "/storage/v1/b/" + bkt + "/o?maxResults=-1", "", ""},
		{"GET", "/storage/v1/b/" + bkt + "/o/a%2Fb.txt?ifGenerationMatch=x", "", ""},
		{"POST", "/storage/v1/b/" + bkt + "/o/a%2Fb.txt/compose", "{}", ""},
		{"POST", "/storage/v1/b/" + bkt + "/o/a%2Fb.txt/compose", "{bad", ""},
	} {
		r := s.do(c.method, c.path, c.body, "Content-Type", c.ct)
		if r.status != 400 || r.json(t)["error"] == nil {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	if r := s.do("GET", "/nothing-here", ""); r.status != 404 {
		t.Errorf("unknown path: %d", r.status)
	}

	// Resumable with Location, Content-Range and 308 + Range.
	r = s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=resumable&name=r.bin", `{"contentType":"application/x-r"}`)
	loc := r.header.Get("Location")
	if r.status != 200 || !strings.Contains(loc, "upload_id=") {
		t.Fatalf("resumable start: %d %v", r.status, r.header)
	}
	if r := s.do("PUT", loc, "", "Content-Range", "bytes */*"); r.status != 308 || r.header.Get("Range") != "" {
		t.Errorf("empty query: %d %v", r.status, r.header)
	}
	if r := s.do("PUT", loc, "0123", "Content-Range", "bytes 0-3/*"); r.status != 308 || r.header.Get("Range") != "bytes=0-3" {
		t.Errorf("chunk: %d %v", r.status, r.header)
	}
	if r := s.do("PUT", loc, "x", "Content-Range", "bytes 9-9/*"); r.status != 400 {
		t.Errorf("gap: %d", r.status)
	}
	if r := s.do("PUT", loc, "", "Content-Range", "bytes 5-3/*"); r.status != 400 {
		t.Errorf("bad range: %d", r.status)
	}
	r = s.do("POST", loc, "4567", "Content-Range", "bytes 4-7/8", "X-GUploader-No-308", "yes")
	if r.status != 200 || r.json(t)["size"] != "8" || r.json(t)["contentType"] != "application/x-r" {
		t.Errorf("final chunk: %d %v %s", r.status, r.header, r.body)
	}
	if r := s.do("PUT", loc, "", "Content-Range", "bytes */8"); r.status != 200 || r.json(t)["name"] != "r.bin" {
		t.Errorf("query after final: %d %s", r.status, r.body)
	}
	// @google-cloud/storage's single-request upload: the rest of the
	// object from a byte on, size unknown (bytes a-*/*) or declared.
	for _, c := range []struct {
		name, first, rest, rng string
		status                 int
	}{
		{"s1.bin", "", "hello", "bytes 0-*/*", 200},
		{"s2.bin", "ab", "cd", "bytes 2-*/*", 200},
		{"s3.bin", "", "hello", "bytes 0-*/5", 200},
		{"s4.bin", "", "hell", "bytes 0-*/5", 400},
	} {
		loc := s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=resumable&name="+c.name, "").header.Get("Location")
		if c.first != "" {
			s.do("PUT", loc, c.first, "Content-Range", "bytes 0-1/*")
		}
		r := s.do("PUT", loc, c.rest, "Content-Range", c.rng)
		if r.status != c.status || (c.status == 200 && r.json(t)["size"] != strconv.Itoa(len(c.first+c.rest))) {
			t.Errorf("%s with %s: %d %s", c.name, c.rng, r.status, r.body)
		}
	}
	r = s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=resumable&name=c.bin", "")
	loc = r.header.Get("Location")
	s.do("PUT", loc, "01", "Content-Range", "bytes 0-1/*", "X-GUploader-No-308", "yes")
	if r := s.do("DELETE", loc, ""); r.status != 499 {
		t.Errorf("cancel: %d", r.status)
	}
	if r := s.do("GET", "/storage/v1/b/"+bkt+"/o/c.bin", ""); r.status != 404 {
		t.Errorf("cancelled visible: %d", r.status)
	}

	// Copy, rewrite, list, buckets.
	r = s.do("POST", "/storage/v1/b/"+bkt+"/o/a%2Fb.txt/rewriteTo/b/other-bkt/o/c%2Fd.txt", "")
	if m := r.json(t); r.status != 200 || m["done"] != true || m["resource"].(map[string]any)["bucket"] != "other-bkt" {
		t.Errorf("rewrite: %d %s", r.status, r.body)
	}
	r = s.do("GET", "/storage/v1/b", "")
	if !strings.Contains(r.body, "other-bkt") || !strings.Contains(r.body, "demo-pyric.firebasestorage.app") {
		t.Errorf("buckets: %s", r.body)
	}
	if r := s.do("GET", "/b/other-bkt/o", ""); r.status != 200 || !strings.Contains(r.body, "c/d.txt") {
		t.Errorf("emulator-style list: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/storage/v1/b/nope-bucket", ""); r.status != 404 {
		t.Errorf("missing bucket: %d", r.status)
	}
	// An object written through GCS gets a download token on its first
	// Firebase metadata read (getDownloadURL needs one).
	r = s.do("GET", "/v0/b/"+bkt+"/o/a%2Fb.txt", "", "Authorization", "Firebase owner")
	if tok, _ := r.json(t)["downloadTokens"].(string); r.status != 200 || len(tok) != 36 {
		t.Errorf("token minted on read: %d %s", r.status, r.body)
	}
	// Without rules a Firebase client is denied; GCS clients are admin.
	if r := s.do("GET", "/v0/b/"+bkt+"/o/a%2Fb.txt", "", "Authorization", "Firebase "+mockToken("alice")); r.status != 403 || !strings.Contains(r.body, "no storage.rules") {
		t.Errorf("no rules: %d %s", r.status, r.body)
	}
}

func TestSetRulesAndCORS(t *testing.T) {
	s := newServer(t, "")
	if r := s.do("PUT", "/internal/setRules", `{"rules":{"files":[{"name":"storage.rules","content":"service firebase.storage { match /b/{b}/o { allow read: if } }"}]}}`); r.status != 400 {
		t.Errorf("bad rules: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/internal/setRules", `{}`); r.status != 400 {
		t.Errorf("no files: %d", r.status)
	}
	rules := `rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read: if true; } }`
	b, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []any{map[string]string{"name": "storage.rules", "content": rules}}}})
	if r := s.do("PUT", "/internal/setRules", string(b)); r.status != 200 {
		t.Fatalf("setRules: %d %s", r.status, r.body)
	}
	if _, text, ok := s.e.Rules(); !ok || text != rules {
		t.Error("rules not live")
	}
	r := s.do("OPTIONS", "/v0/b/"+bkt+"/o", "", "Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,x-goog-upload-protocol")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		r.header.Get("Access-Control-Allow-Headers") != "authorization,x-goog-upload-protocol" {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	r = s.do("GET", "/v0/b/"+bkt+"/o?prefix=", "", "Origin", "http://localhost:5173")
	if !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "X-Goog-Upload-URL") {
		t.Errorf("expose: %v", r.header)
	}
	s.e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "x", Body: strings.NewReader("x")})
	if r := s.do("POST", "/internal/reset", ""); r.status != 200 {
		t.Errorf("reset: %d", r.status)
	}
	if r := s.do("GET", "/storage/v1/b/"+bkt+"/o/x", ""); r.status != 404 {
		t.Errorf("after reset: %d", r.status)
	}
}

// TestFirestoreLookup wires rules' firestore.exists() to a real Firestore
// engine.
func TestFirestoreLookup(t *testing.T) {
	s := newServer(t, openRules)
	fs := firestore.New(firestore.Options{})
	s.e.SetFirestore(FirestoreLookup(fs, "demo-pyric"))
	_, err := fs.Commit(context.Background(), identity.AdminIdentity(), &pb.CommitRequest{
		Database: "projects/demo-pyric/databases/(default)",
		Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
			Name:   "projects/demo-pyric/databases/(default)/documents/teams/red",
			Fields: map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}},
		}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, team := range []string{"red", "blue"} {
		s.e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "teams/" + team + "/f", Body: strings.NewReader("x")})
	}
	if r := s.do("GET", "/v0/b/"+bkt+"/o/teams%2Fred%2Ff", ""); r.status != 200 {
		t.Errorf("existing team doc: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v0/b/"+bkt+"/o/teams%2Fblue%2Ff", ""); r.status != 403 {
		t.Errorf("missing team doc: %d %s", r.status, r.body)
	}
}

// TestRejectedRequestsAreEvents: a request refused before the engine could
// decide it is still one request event, with the error.
func TestRejectedRequestsAreEvents(t *testing.T) {
	rec := &storagetest.Recorder{}
	e, err := engine.New(service.Env{Project: "demo-pyric", Events: rec}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHandler(e))
	defer ts.Close()
	s := &testServer{T: t, e: e, url: ts.URL}
	s.do("GET", "/v0/b/"+bkt+"/o?maxResults=0", "")
	s.do("GET", "/v0/b/"+bkt+"/o/x", "", "Authorization", "Firebase garbage")
	s.do("GET", "/storage/v1/b/"+bkt+"/o/missing", "") // decided by the engine: one event, not two
	var got []string
	for _, ev := range rec.Events() {
		if ev.Kind != event.KindRequest {
			continue
		}
		line := string(ev.Verdict) + " " + ev.Method + " " + ev.Path
		if ev.Err != nil {
			line += " " + ev.Err.Code
		}
		got = append(got, line)
	}
	want := "error GET /v0/b/demo-pyric.appspot.com/o invalid\nerror GET /v0/b/demo-pyric.appspot.com/o/x required\nbypassed get missing notFound"
	if strings.Join(got, "\n") != want {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestUploadPreconditionsInQuery: an upload's ifGenerationMatch, in a
// query whose object name is escaped as the GCS Go client sends it (the
// query the handler parses once for its name and its preconditions),
// holds: 0 creates once, then refuses with 412; a bad value is 400.
func TestUploadPreconditionsInQuery(t *testing.T) {
	s := newServer(t, "")
	path := "/upload/storage/v1/b/" + bkt + "/o?alt=json&name=dir%2Fx.txt&uploadType=media&ifGenerationMatch=0"
	if r := s.do("POST", path, "one", "Content-Type", "text/plain"); r.status != 200 || r.json(t)["name"] != "dir/x.txt" {
		t.Fatalf("first upload: %d %s", r.status, r.body)
	}
	if r := s.do("POST", path, "two", "Content-Type", "text/plain"); r.status != 412 {
		t.Fatalf("second upload with ifGenerationMatch=0: %d %s", r.status, r.body)
	}
	bad := "/upload/storage/v1/b/" + bkt + "/o?name=dir%2Fx.txt&uploadType=media&ifGenerationMatch=x"
	if r := s.do("POST", bad, "three", "Content-Type", "text/plain"); r.status != 400 || !strings.Contains(r.body, "ifGenerationMatch") {
		t.Fatalf("bad ifGenerationMatch: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/"+bkt+"/dir%2Fx.txt", ""); r.body != "one" {
		t.Fatalf("the object holds %q, want the first upload's", r.body)
	}
}
