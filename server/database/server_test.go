package databaseserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox/service"
	server "github.com/pyric/pyric/server/database"
)

const testRules = `{
  "rules": {
    "public": {".read": true, ".write": true, "items": {".indexOn": ["n"]}},
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
    "presence": {"$uid": {".read": true, ".write": "auth != null && auth.uid === $uid"}},
    "counter": {".read": true, ".write": true}
  }
}`

func start(t testing.TB, rules string) (*httptest.Server, *database.Database) {
	t.Helper()
	db, err := database.New(service.Env{Project: "demo"}, database.Options{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.NewHandler(db, server.Options{}))
	t.Cleanup(srv.Close)
	return srv, db
}

type resp struct {
	status int
	body   string
	header http.Header
}

func do(t testing.TB, srv *httptest.Server, method, path, body string, hdr ...string) resp {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, strings.TrimSpace(string(b)), res.Header}
}

const owner = "Bearer owner"

// mockToken is what the SDKs' createMockUserToken produces.
func mockToken(uid string) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return strings.TrimRight(base64URL(b), "=")
	}
	return enc(map[string]any{"alg": "none", "type": "JWT"}) + "." + enc(map[string]any{"sub": uid, "user_id": uid, "iat": 0, "exp": 3600, "firebase": map[string]any{"sign_in_provider": "custom"}}) + "."
}

func TestREST(t *testing.T) {
	srv, _ := start(t, testRules)
	steps := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		want                     string
	}{
		{"put", "PUT", "/public/items.json", `{"a":{"n":2},"b":{"n":1},"c":{"n":3}}`, nil, 200, `{"a":{"n":2},"b":{"n":1},"c":{"n":3}}`},
		{"put silent", "PUT", "/public/x.json?print=silent", `[1,2]`, nil, 204, ``},
		{"array read back", "GET", "/public/x.json", ``, nil, 200, `[1,2]`},
		{"patch", "PATCH", "/public/items.json", `{"a/n":5,"d":{"n":0}}`, nil, 200, `{"a/n":5,"d":{"n":0}}`},
		{"get", "GET", "/public/items.json", ``, nil, 200, `{"a":{"n":5},"b":{"n":1},"c":{"n":3},"d":{"n":0}}`},
		{"shallow", "GET", "/public/items.json?shallow=true", ``, nil, 200, `{"a":true,"b":true,"c":true,"d":true}`},
		{"query by child", "GET", `/public/items.json?orderBy="n"&limitToFirst=2`, ``, nil, 200, `{"b":{"n":1},"d":{"n":0}}`},
		{"query startAt endAt", "GET", `/public/items.json?orderBy="n"&startAt=1&endAt=3`, ``, nil, 200, `{"b":{"n":1},"c":{"n":3}}`},
		{"query by key", "GET", `/public/items.json?orderBy="$key"&limitToLast=1`, ``, nil, 200, `{"d":{"n":0}}`},
		{"query equalTo", "GET", `/public/items.json?orderBy="n"&equalTo=3`, ``, nil, 200, `{"c":{"n":3}}`},
		{"unindexed query", "GET", `/public/items.json?orderBy="m"&limitToFirst=1`, ``, nil, 400, `{"error":"Index not defined, add \".indexOn\": \"m\", for path \"/public/items\", to the rules"}`},
		{"unindexed value query", "GET", `/public/items.json?orderBy="$value"`, ``, nil, 400, `{"error":"Index not defined, add \".indexOn\": \".value\", for path \"/public/items\", to the rules"}`},
		{"query without orderBy", "GET", `/public/items.json?limitToFirst=1`, ``, nil, 400, `{"error":"orderBy must be defined when other query parameters are defined"}`},
		{"bad orderBy", "GET", `/public/items.json?orderBy=n`, ``, nil, 400, `{"error":"orderBy must be a valid JSON encoded path"}`},
		{"shallow with query", "GET", `/public/items.json?orderBy="n"&shallow=true`, ``, nil, 400, `{"error":"Mixing 'shallow' and querying parameters is not supported"}`},
		{"denied read", "GET", "/users/alice.json", ``, nil, 401, `{"error":"Permission denied\nauth != null → null != null is false"}`},
		{"user write", "PUT", "/users/alice.json", `{"name":"A"}`, []string{"Authorization", "Bearer " + mockToken("alice")}, 200, `{"name":"A"}`},
		{"other user write", "PUT", "/users/alice.json", `{"name":"B"}`, []string{"Authorization", "Bearer " + mockToken("bob")}, 401, `{"error":"Permission denied\nauth.uid === $uid → 'bob' === 'alice' is false"}`},
		{"owner bypasses rules", "GET", "/users/alice.json", ``, []string{"Authorization", owner}, 200, `{"name":"A"}`},
		{"auth_variable_override", "GET", "/users/alice.json?auth_variable_override=" + url.QueryEscape(`{"uid":"alice"}`), ``, []string{"Authorization", owner}, 200, `{"name":"A"}`},
		{"override null", "GET", "/users/alice.json?auth_variable_override=null", ``, []string{"Authorization", owner}, 401, `{"error":"Permission denied\nauth != null → null != null is false"}`},
		{"override needs admin", "GET", "/users/alice.json?auth_variable_override=null", ``, nil, 401, `{"error":"auth_variable_override can only be used with admin credentials"}`},
		{"bad token", "GET", "/public.json", ``, []string{"Authorization", "Bearer garbage"}, 401, `{"error":"Could not parse auth token."}`},
		{"invalid json", "PUT", "/public/y.json", `{nope`, nil, 400, `{"error":"Invalid data; couldn't parse JSON object, array, or value."}`},
		{"invalid key", "PUT", "/public/y.json", `{"a.b":1}`, nil, 400, `{"error":"Invalid data; couldn't parse key beginning at 1:2. Key value can't be empty or contain $ # [ ] / or ."}`},
		{"invalid path", "PUT", "/public/a$b.json", `1`, nil, 400, `{"error":"Invalid path: Invalid token in path"}`},
		{"invalid path read", "GET", "/public/a.b.json", ``, nil, 400, `{"error":"Invalid path: Invalid token in path"}`},
		{"invalid path delete", "DELETE", "/public/a%5Bb%5D.json", ``, nil, 400, `{"error":"Invalid path: Invalid token in path"}`},
		{"patch non-object", "PATCH", "/public.json", `1`, nil, 400, `{"error":"Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"}`},
		{"server value", "PUT", "/public/t.json", `{".sv":{"increment":2}}`, nil, 200, `2`},
		{"export format", "PUT", "/public/p.json", `{".value":1,".priority":5}`, nil, 200, `1`},
		{"export read", "GET", "/public/p.json?format=export", ``, nil, 200, `{".priority":5,".value":1}`},
		{"array with priorities", "PUT", "/public/pa.json", `{"0":{".value":"a",".priority":1},"2":{"n":1,".priority":2},".priority":3}`, nil, 200, `["a",null,{"n":1}]`},
		{"array read plain", "GET", "/public/pa.json", ``, nil, 200, `["a",null,{"n":1}]`},
		{"array read export", "GET", "/public/pa.json?format=export", ``, nil, 200, `{".priority":3,"0":{".priority":1,".value":"a"},"2":{".priority":2,"n":1}}`},
		{"pretty", "GET", "/public/x.json?print=pretty", ``, nil, 200, "[\n  1,\n  2\n]"},
		{"delete", "DELETE", "/public/x.json", ``, nil, 200, `null`},
		{"deleted", "GET", "/public/x.json", ``, nil, 200, `null`},
		{"namespace", "PUT", "/k.json?ns=other", `1`, []string{"Authorization", owner}, 200, `1`},
		{"namespace isolated", "GET", "/k.json", ``, []string{"Authorization", owner}, 200, `null`},
		{"rules put needs admin", "PUT", "/.settings/rules.json?ns=other", `{"rules":{".read":true}}`, nil, 401, `{"error":"Unauthorized request: setting rules needs admin credentials (Authorization: Bearer owner)"}`},
		{"rules put", "PUT", "/.settings/rules.json?ns=other", `{"rules":{".read":true}}`, []string{"Authorization", owner}, 200, `{"status":"ok"}`},
		{"rules get", "GET", "/.settings/rules.json?ns=other", ``, []string{"Authorization", owner}, 200, `{"rules":{".read":true}}`},
		{"new rules apply", "GET", "/k.json?ns=other", ``, nil, 200, `1`},
		{"bad rules", "PUT", "/.settings/rules.json?ns=other", `{"rules":{".read":"a b"}}`, []string{"Authorization", owner}, 400, ``},
		{"clear namespace", "DELETE", "/.json?ns=other", ``, []string{"Authorization", owner}, 200, `null`},
		{"cleared", "GET", "/k.json?ns=other", ``, nil, 200, `null`},
		{"bad namespace", "GET", "/k.json?ns=a%2Fb", ``, nil, 400, `{"error":"invalid namespace \"a/b\": use 1 to 128 letters, digits, '-' or '_'"}`},
		{"post", "POST", "/public/list.json", `{"v":1}`, nil, 200, ``},
	}
	for _, s := range steps {
		r := do(t, srv, s.method, s.path, s.body, s.hdr...)
		if r.status != s.status || (s.want != "" && r.body != s.want) {
			t.Errorf("%s: %d %s, want %d %s", s.name, r.status, r.body, s.status, s.want)
		}
	}
	cov := do(t, srv, "GET", "/.inspect/coverage?ns=demo-default-rtdb", "")
	var c struct {
		Namespace string
		Rules     []struct {
			MatchPath, Kind              string
			Evaluations, Allowed, Denied int
		}
		Expressions []struct {
			MatchPath, Kind, Text string
			True, False, Skipped  int
		}
	}
	if err := json.Unmarshal([]byte(cov.body), &c); err != nil || c.Namespace != "demo-default-rtdb" {
		t.Fatalf("coverage %s", cov.body)
	}
	found := false
	for _, r := range c.Rules {
		if r.MatchPath == "/users/$uid" && r.Kind == ".write" && r.Allowed >= 1 && r.Denied >= 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("coverage lacks /users/$uid .write allowed and denied: %s", cov.body)
	}
	// Expression counts include the allowed write (decided untraced).
	found = false
	for _, x := range c.Expressions {
		if x.MatchPath == "/users/$uid" && x.Kind == ".write" && x.Text == "auth.uid === $uid" && x.True >= 1 && x.False >= 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("coverage lacks the true and false counts of auth.uid === $uid: %s", cov.body)
	}
	r := do(t, srv, "GET", "/public/list.json?shallow=true", "")
	var m map[string]bool
	json.Unmarshal([]byte(r.body), &m)
	for k := range m {
		if len(k) != 20 || k[0] != '-' {
			t.Errorf("push id %q", k)
		}
	}
	if len(m) != 1 {
		t.Errorf("post wrote %s", r.body)
	}
}

func TestRESTETag(t *testing.T) {
	srv, _ := start(t, testRules)
	do(t, srv, "PUT", "/counter.json", `1`)
	r := do(t, srv, "GET", "/counter.json", "", "X-Firebase-ETag", "true")
	etag := r.header.Get("ETag")
	if etag == "" || r.body != "1" {
		t.Fatalf("no etag: %v %s", r.header, r.body)
	}
	if r := do(t, srv, "GET", "/counter.json", "", "If-None-Match", etag); r.status != 304 {
		t.Fatalf("if-none-match: %d", r.status)
	}
	if r := do(t, srv, "PUT", "/counter.json", `2`, "If-Match", etag); r.status != 200 {
		t.Fatalf("if-match: %d %s", r.status, r.body)
	}
	r = do(t, srv, "PUT", "/counter.json", `3`, "If-Match", etag)
	if r.status != 412 || r.body != "2" || r.header.Get("ETag") == etag || r.header.Get("ETag") == "" {
		t.Fatalf("stale if-match: %d %s %v", r.status, r.body, r.header)
	}
	// A delete's lost compare-and-set answers as a put's: the current
	// value and its ETag; nothing is deleted.
	cur := r.header.Get("ETag")
	r = do(t, srv, "DELETE", "/counter.json", "", "If-Match", etag)
	if r.status != 412 || r.body != "2" || r.header.Get("ETag") != cur {
		t.Fatalf("stale delete if-match: %d %s %v", r.status, r.body, r.header)
	}
	if r := do(t, srv, "DELETE", "/counter.json", "", "If-Match", cur); r.status != 200 || r.body != "null" {
		t.Fatalf("delete if-match: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "GET", "/public/absent.json", "", "X-Firebase-ETag", "true"); r.header.Get("ETag") != "null_etag" {
		t.Fatalf("null etag %v", r.header)
	}
	// Two REST clients x 20 read-modify-write loops end at exactly 40.
	do(t, srv, "PUT", "/counter.json", `0`)
	errs := make(chan error, 2)
	for c := 0; c < 2; c++ {
		go func() {
			for i := 0; i < 20; {
				r := do(t, srv, "GET", "/counter.json", "", "X-Firebase-ETag", "true")
				var n int
				fmt.Sscan(r.body, &n)
				w := do(t, srv, "PUT", "/counter.json", fmt.Sprint(n+1), "If-Match", r.header.Get("ETag"))
				switch w.status {
				case 200:
					i++
				case 412:
				default:
					errs <- fmt.Errorf("put: %d %s", w.status, w.body)
					return
				}
			}
			errs <- nil
		}()
	}
	for c := 0; c < 2; c++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if r := do(t, srv, "GET", "/counter.json", ""); r.body != "40" {
		t.Fatalf("counter %s", r.body)
	}
}

func TestRESTStream(t *testing.T) {
	srv, db := start(t, testRules)
	do(t, srv, "PUT", "/public/s.json", `{"a":1}`)
	req, _ := http.NewRequest("GET", srv.URL+"/public/s.json", nil)
	req.Header.Set("Accept", "text/event-stream")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req = req.WithContext(ctx)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %s", res.Header.Get("Content-Type"))
	}
	buf := make([]byte, 4096)
	var got strings.Builder
	read := func(want string) {
		t.Helper()
		for !strings.Contains(got.String(), want) {
			n, err := res.Body.Read(buf)
			got.Write(buf[:n])
			if err != nil && !strings.Contains(got.String(), want) {
				t.Fatalf("stream ended (%v) before %q; got %q", err, want, got.String())
			}
		}
	}
	read("event: put\ndata: {\"data\":{\"a\":1},\"path\":\"/\"}\n\n")
	do(t, srv, "PUT", "/public/s/b.json", `2`)
	read("event: put\ndata: {\"data\":2,\"path\":\"/b\"}\n\n")
	do(t, srv, "PATCH", "/public/s.json", `{"a":5,"c":3}`)
	read("event: patch\ndata: {\"data\":{\"a\":5,\"c\":3},\"path\":\"/\"}\n\n")
	if err := db.SetRules(database.DefaultNamespace("demo"), `{"rules":{}}`); err != nil {
		t.Fatal(err)
	}
	read("event: cancel\ndata: null\n\n")
}

func base64URL(b []byte) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var sb strings.Builder
	for i := 0; i < len(b); i += 3 {
		var n uint32
		k := min(3, len(b)-i)
		for j := 0; j < 3; j++ {
			n <<= 8
			if j < k {
				n |= uint32(b[i+j])
			}
		}
		for j := 0; j < k+1; j++ {
			sb.WriteByte(enc[(n>>(18-6*j))&63])
		}
	}
	return sb.String()
}

var _ = websocket.MessageText

var adminID = identityAdmin()
