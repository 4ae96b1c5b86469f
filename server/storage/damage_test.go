package storageserver

import (
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	engine "github.com/pyric/pyric/storage"
)

// TestDamagedObjectDownload: an object whose file is damaged is never
// served as a complete download. Damage the size shows is answered
// before any byte with a clear error naming the object (a 410 in the
// API's envelope, never a 500 or an internal path); same-size garbage is
// found as the bytes stream, and the response is aborted (the client
// sees a broken body, not a clean end).
func TestDamagedObjectDownload(t *testing.T) {
	t.Parallel()
	data := strings.Repeat("the quick brown fox ", 10000)
	urls := []string{
		"/v0/b/" + bkt + "/o/d%2Fobj?alt=media",
		"/download/storage/v1/b/" + bkt + "/o/d%2Fobj?alt=media",
		"/" + bkt + "/d/obj",
	}
	cases := []struct {
		name   string
		damage func(string)
		want   string // the error before any byte; "" aborted mid-body
	}{
		{"truncated", func(p string) { os.Truncate(p, 100) }, "its file holds 100 bytes, not the 200000 stored"},
		{"deleted", func(p string) { os.Remove(p) }, "is missing from the data dir"},
		{"same-size garbage", func(p string) {
			b, _ := os.ReadFile(p)
			rand.New(rand.NewSource(2)).Read(b[len(b)-10:])
			os.WriteFile(p, b, 0o644)
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			e, err := engine.New(service.Env{Project: "demo-pyric", DataDir: dir}, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(NewHandler(e))
			defer ts.Close()
			s := &testServer{T: t, e: e, url: ts.URL}
			o, err := s.e.Put(identity.AdminIdentity(), engine.PutRequest{Bucket: bkt, Name: "d/obj", Body: strings.NewReader(data)})
			if err != nil {
				t.Fatal(err)
			}
			c.damage(filepath.Join(dir, "storage", "blobs", strconv.FormatInt(o.Generation, 10)))
			for _, u := range urls {
				req, _ := http.NewRequest("GET", s.url+u, nil)
				req.Header.Set("Authorization", "Bearer owner")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, rerr := io.ReadAll(res.Body)
				res.Body.Close()
				if c.want != "" {
					if res.StatusCode != http.StatusGone || !strings.Contains(string(body), c.want) || !strings.Contains(string(body), bkt+"/d/obj") ||
						strings.Contains(string(body), dir) {
						t.Errorf("%s: %d %s", u, res.StatusCode, body)
					}
					continue
				}
				if rerr == nil || len(body) >= len(data) {
					t.Errorf("%s: %d, %d of %d bytes, read error %v: want an aborted body", u, res.StatusCode, len(body), len(data), rerr)
				}
			}
			// A range inside the intact bytes is served (ranges check the
			// size only).
			if c.want == "" {
				r := s.do("GET", urls[2], "", "Range", "bytes=0-9", "Authorization", "Bearer owner")
				if r.status != 206 || r.body != data[:10] {
					t.Errorf("range: %d %q", r.status, r.body)
				}
			}
		})
	}
}
