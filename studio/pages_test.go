package studio_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
)

const testDatabaseRules = `{"rules": {"public": {".read": true, "$k": {".write": "auth != null && newData.isString()"}}}}`

const testStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /public/{name} {
      allow read: if true;
      allow write: if request.auth != null && request.resource.size < 100;
    }
  }
}
`

// startAll serves every service.
func startAll(t testing.TB) *env {
	t.Helper()
	return startWith(t, backend.Options{DatabaseRules: testDatabaseRules, StorageRules: testStorageRules},
		backend.Firestore, backend.Auth, backend.Database, backend.Storage, backend.Messaging, backend.AI)
}

// raw sends a body as is and returns the status and response body.
func (e *env) raw(t *testing.T, method, path, contentType string, body []byte) (int, []byte, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

type treeAnswer struct {
	Exists   bool
	Value    any
	Count    int
	More     bool
	Children []struct {
		Key      string
		Node     bool
		Children int
		Value    any
	}
}

func TestDatabaseTree(t *testing.T) {
	e := startAll(t)
	if c, b, _ := e.raw(t, "PUT", "/api/database/value?path=users", "application/json",
		[]byte(`{"alice": {"name": "Alice", "age": 30}, "bob": {"name": "Bob"}, "count": 2}`)); c != 200 {
		t.Fatalf("set: %d %s", c, b)
	}
	var root treeAnswer
	e.do(t, "GET", "/api/database/tree?path=/", nil, &root)
	if !root.Exists || root.Count != 1 || root.Children[0].Key != "users" || !root.Children[0].Node || root.Children[0].Children != 3 {
		t.Fatalf("root = %+v", root)
	}
	var users treeAnswer
	e.do(t, "GET", "/api/database/tree?path=users", nil, &users)
	keys := ""
	for _, c := range users.Children {
		keys += c.Key + " "
	}
	if keys != "alice bob count " || users.Children[2].Value != 2.0 || users.Children[2].Node {
		t.Fatalf("users = %+v", users)
	}
	var leaf treeAnswer
	e.do(t, "GET", "/api/database/tree?path=users/alice/name", nil, &leaf)
	if !leaf.Exists || leaf.Value != "Alice" {
		t.Fatalf("leaf = %+v", leaf)
	}

	// Paging a node's children by key.
	big := map[string]any{}
	for i := 0; i < 120; i++ {
		big[strings.Repeat("k", 1)+string(rune('A'+i/26))+string(rune('a'+i%26))] = i
	}
	e.do(t, "PUT", "/api/database/value?path=big", big, nil)
	var p1, p2 treeAnswer
	e.do(t, "GET", "/api/database/tree?path=big&limit=100", nil, &p1)
	if len(p1.Children) != 100 || !p1.More || p1.Count != 120 {
		t.Fatalf("page 1: %d children, more %v, count %d", len(p1.Children), p1.More, p1.Count)
	}
	e.do(t, "GET", "/api/database/tree?path=big&limit=100&after="+p1.Children[99].Key, nil, &p2)
	if len(p2.Children) != 20 || p2.More || p2.Children[0].Key <= p1.Children[99].Key {
		t.Fatalf("page 2: %d children, more %v, first %q", len(p2.Children), p2.More, p2.Children[0].Key)
	}

	// Delete, then the node is gone.
	if c := e.do(t, "DELETE", "/api/database/value?path=users/bob", nil, nil); c != 200 {
		t.Fatalf("delete: %d", c)
	}
	e.do(t, "GET", "/api/database/tree?path=users", nil, &users)
	if len(users.Children) != 2 {
		t.Fatalf("after delete: %+v", users)
	}

	// App lens: rules apply; a denial is a 403 with a reason.
	var den struct {
		Error   string
		Details struct {
			Reason      string
			Event       string
			Explanation []string
		}
	}
	if c := e.do(t, "PUT", "/api/database/value?path=public/x&as=alice", 42, &den); c != 403 || den.Error != "Permission denied" || den.Details.Reason == "" {
		t.Fatalf("app-lens write of a number: %d %+v", c, den)
	}
	// The denial names its event, which the inspector opens.
	var ev struct{ Event event.Event }
	if c := e.do(t, "GET", "/api/events/"+den.Details.Event, nil, &ev); c != 200 || ev.Event.Service != "database" || ev.Event.Request == nil || ev.Event.Request.Verdict != event.Deny || ev.Event.Path != "/public/x" {
		t.Fatalf("denial event %q: %d %+v", den.Details.Event, c, ev.Event)
	}
	if c, b, _ := e.raw(t, "PUT", "/api/database/value?path=public/x&as=alice", "application/json", []byte(`"ok"`)); c != 200 {
		t.Fatalf("app-lens write of a string: %d %s", c, b)
	}
	// Bad input is a 400 naming the problem.
	if c, b, _ := e.raw(t, "PUT", "/api/database/value?path=a", "application/json", []byte(`{nope`)); c != 400 || !strings.Contains(string(b), "couldn't parse JSON") {
		t.Fatalf("bad JSON: %d %s", c, b)
	}
	if c, b, _ := e.raw(t, "GET", "/api/database/tree?path=a%2Eb", "", nil); c != 400 {
		t.Fatalf("bad path: %d %s", c, b)
	}
	if c, _, _ := e.raw(t, "GET", "/api/database/tree?limit=0", "", nil); c != 400 {
		t.Fatalf("limit 0: %d", c)
	}
}

func TestStorageObjects(t *testing.T) {
	e := startAll(t)
	var bk struct {
		Buckets []string
		Default string
	}
	e.do(t, "GET", "/api/storage/buckets", nil, &bk)
	if bk.Default == "" || !slices.Contains(bk.Buckets, bk.Default) {
		t.Fatalf("buckets = %+v", bk)
	}
	q := "/api/storage/object?bucket=" + bk.Default + "&name="
	if c, b, _ := e.raw(t, "POST", q+"public/hello.txt", "text/plain", []byte("hello, storage")); c != 200 {
		t.Fatalf("upload: %d %s", c, b)
	}
	if c, b, _ := e.raw(t, "POST", q+"public/img/dot.png", "image/png", []byte("\x89PNG fake")); c != 200 {
		t.Fatalf("upload: %d %s", c, b)
	}
	var ls struct {
		Prefixes []string
		Items    []struct {
			Name        string
			Size        int64
			ContentType string
		}
	}
	e.do(t, "GET", "/api/storage/objects?bucket="+bk.Default+"&prefix=public/", nil, &ls)
	if len(ls.Prefixes) != 1 || ls.Prefixes[0] != "public/img/" || len(ls.Items) != 1 || ls.Items[0].Name != "public/hello.txt" || ls.Items[0].Size != 14 || ls.Items[0].ContentType != "text/plain" {
		t.Fatalf("list = %+v", ls)
	}
	// Download: the bytes, sandboxed, as an attachment when asked.
	c, b, h := e.raw(t, "GET", "/api/storage/media?bucket="+bk.Default+"&name=public/hello.txt&download=1", "", nil)
	if c != 200 || string(b) != "hello, storage" || !strings.Contains(h.Get("Content-Disposition"), `filename=hello.txt`) || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("download: %d %q %v", c, b, h)
	}
	if c, b, _ := e.raw(t, "GET", "/api/storage/media?bucket="+bk.Default+"&name=public/hello.txt&limit=5", "", nil); c != 200 || string(b) != "hello" {
		t.Fatalf("preview: %d %q", c, b)
	}
	// Metadata: set a custom key and the cache control, then delete the key.
	var o struct {
		CacheControl string
		Metadata     map[string]string
	}
	if c := e.do(t, "PATCH", q+"public/hello.txt", map[string]any{"cacheControl": "no-cache", "metadata": map[string]any{"owner": "alice"}}, &o); c != 200 || o.CacheControl != "no-cache" || o.Metadata["owner"] != "alice" {
		t.Fatalf("patch: %d %+v", c, o)
	}
	o.Metadata = nil
	if c := e.do(t, "PATCH", q+"public/hello.txt", map[string]any{"metadata": map[string]any{"owner": nil}}, &o); c != 200 || o.Metadata["owner"] != "" {
		t.Fatalf("patch delete key: %d %+v", c, o)
	}
	// App lens: rules apply.
	c, b, _ = e.raw(t, "POST", q+"public/big.bin&as=alice", "application/octet-stream", make([]byte, 200))
	var den struct {
		Error   string
		Details struct{ Event string }
	}
	if err := json.Unmarshal(b, &den); err != nil || c != 403 || !strings.Contains(den.Error, "request.resource.size < 100 → 200 < 100 is false") || !strings.HasPrefix(den.Details.Event, "evt-") {
		t.Fatalf("app-lens upload over the rules' size: %d %s", c, b)
	}
	if c, b, _ := e.raw(t, "POST", q+"private/x&as=alice", "text/plain", []byte("x")); c != 403 {
		t.Fatalf("app-lens upload outside the rules: %d %s", c, b)
	}
	// Delete, then it is gone (404 with the reason).
	if c := e.do(t, "DELETE", q+"public/hello.txt", nil, nil); c != 200 {
		t.Fatalf("delete: %d", c)
	}
	if c, b, _ := e.raw(t, "GET", q+"public/hello.txt", "", nil); c != 404 || !strings.Contains(string(b), "notFound") {
		t.Fatalf("stat after delete: %d %s", c, b)
	}
	if c, b, _ := e.raw(t, "GET", "/api/storage/objects?bucket=", "", nil); c != 400 {
		t.Fatalf("no bucket: %d %s", c, b)
	}
}

func TestMessagingPage(t *testing.T) {
	e := startAll(t)
	var tok struct{ Token string }
	if c := e.do(t, "POST", "/api/messaging/tokens", map[string]any{"platform": "web"}, &tok); c != 200 || tok.Token == "" {
		t.Fatalf("mint: %d %+v", c, tok)
	}
	var res struct{ Results []struct{ Error string } }
	if c := e.do(t, "POST", "/api/messaging/topics", map[string]any{"topic": "news", "tokens": []string{tok.Token, "not a token"}}, &res); c != 200 || len(res.Results) != 2 || res.Results[0].Error != "" || res.Results[1].Error == "" {
		t.Fatalf("subscribe: %d %+v", c, res)
	}
	var sent struct{ Name string }
	if c := e.do(t, "POST", "/api/messaging/send", map[string]any{"message": map[string]any{"topic": "news", "notification": map[string]any{"title": "Hi"}}}, &sent); c != 200 || !strings.Contains(sent.Name, "/messages/") {
		t.Fatalf("send: %d %+v", c, sent)
	}
	// A message with two targets is production's INVALID_ARGUMENT.
	var bad struct{ Error, Code string }
	if c := e.do(t, "POST", "/api/messaging/send", map[string]any{"message": map[string]any{"topic": "news", "token": tok.Token}}, &bad); c != 400 || bad.Code != "INVALID_ARGUMENT" {
		t.Fatalf("two targets: %d %+v", c, bad)
	}
	var st struct {
		Tokens []struct {
			Token  string
			Topics []string
		}
		Topics []struct {
			Topic  string
			Count  int
			Tokens []string
		}
		Messages []struct {
			Name   string
			Tokens []string
		}
	}
	e.do(t, "GET", "/api/messaging", nil, &st)
	if len(st.Tokens) != 1 || len(st.Topics) != 1 || st.Topics[0].Topic != "news" || st.Topics[0].Count != 1 || len(st.Messages) != 1 || st.Messages[0].Tokens[0] != tok.Token {
		t.Fatalf("state = %+v", st)
	}
	var in struct {
		Deliveries []struct {
			Name    string
			Payload map[string]any
		}
	}
	e.do(t, "GET", "/api/messaging/tokens/"+tok.Token+"/inbox", nil, &in)
	if len(in.Deliveries) != 1 || in.Deliveries[0].Name != sent.Name {
		t.Fatalf("inbox = %+v", in)
	}
	// A deleted token is UNREGISTERED to a later send.
	if c := e.do(t, "DELETE", "/api/messaging/tokens/"+tok.Token, nil, nil); c != 200 {
		t.Fatalf("delete: %d", c)
	}
	if c := e.do(t, "POST", "/api/messaging/send", map[string]any{"message": map[string]any{"token": tok.Token}}, &bad); c != 404 || bad.Code != "UNREGISTERED" {
		t.Fatalf("send to deleted: %d %+v", c, bad)
	}
	if c := e.do(t, "DELETE", "/api/messaging/messages", nil, nil); c != 200 {
		t.Fatalf("clear: %d", c)
	}
	e.do(t, "GET", "/api/messaging", nil, &st)
	if len(st.Messages) != 0 {
		t.Fatalf("after clear: %+v", st.Messages)
	}
}

func TestAIPage(t *testing.T) {
	e := startAll(t)
	if c, b, _ := e.raw(t, "PUT", "/api/ai/script", "application/json", []byte(`[{"text": "scripted answer"}, {"match": {"contains": "weather"}, "text": "sunny", "repeat": true}]`)); c != 200 {
		t.Fatalf("set script: %d %s", c, b)
	}
	var st struct {
		Script []map[string]any
		Calls  []struct {
			Prompt, Answer, Source string
			TotalTokens            int
		}
	}
	e.do(t, "GET", "/api/ai", nil, &st)
	if len(st.Script) != 2 || st.Script[0]["text"] != "scripted answer" {
		t.Fatalf("script = %+v", st.Script)
	}
	// A call through the AI endpoint is in the call log.
	url := "http://" + e.b.Addr(backend.AI) + "/v1beta/models/gemini-2.0-flash:generateContent?key=test"
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"contents": [{"role": "user", "parts": [{"text": "what is the weather"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "sunny") {
		t.Fatalf("generateContent: %d %s", resp.StatusCode, b)
	}
	e.do(t, "GET", "/api/ai", nil, &st)
	if len(st.Calls) != 1 || st.Calls[0].Prompt != "what is the weather" || st.Calls[0].Answer != "sunny" || st.Calls[0].Source != "script" || st.Calls[0].TotalTokens == 0 {
		t.Fatalf("calls = %+v", st.Calls)
	}
	// An invalid script is a 400 naming the problem; the old one stays.
	if c, b, _ := e.raw(t, "PUT", "/api/ai/script", "application/json", []byte(`[{"match": {"regex": "("}, "text": "x"}]`)); c != 400 || !strings.Contains(string(b), "regex") {
		t.Fatalf("bad script: %d %s", c, b)
	}
	if c, _, _ := e.raw(t, "POST", "/api/ai/script", "application/json", []byte(`[{"text": "appended"}]`)); c != 200 {
		t.Fatalf("append: %d", c)
	}
	e.do(t, "GET", "/api/ai", nil, &st)
	if len(st.Script) != 3 {
		t.Fatalf("after append: %+v", st.Script)
	}
	if c := e.do(t, "DELETE", "/api/ai", nil, nil); c != 200 {
		t.Fatalf("clear: %d", c)
	}
	e.do(t, "GET", "/api/ai", nil, &st)
	if len(st.Script) != 0 || len(st.Calls) != 0 {
		t.Fatalf("after clear: %+v", st)
	}
}

// TestFirestoreDenialEvent: an app-lens denial names its request event.
func TestFirestoreDenialEvent(t *testing.T) {
	e := startAll(t)
	// An empty database has no collections: [], not null.
	if c, b, _ := e.raw(t, "GET", "/api/firestore/collections", "", nil); c != 200 || !strings.Contains(string(b), `"collections":[]`) {
		t.Fatalf("collections of an empty database: %d %s", c, b)
	}
	var den struct {
		Details struct {
			Event       string
			Explanation []string
		}
	}
	if c := e.do(t, "PUT", "/api/firestore/document?path=posts/b&as=alice", map[string]any{"data": map[string]any{"title": strings.Repeat("t", 27)}}, &den); c != 403 {
		t.Fatalf("app lens write: %d", c)
	}
	var ev struct{ Event event.Event }
	if c := e.do(t, "GET", "/api/events/"+den.Details.Event, nil, &ev); c != 200 || ev.Event.Service != "firestore" || ev.Event.Path != "posts/b" ||
		ev.Event.Request == nil || ev.Event.Request.Verdict != event.Deny || ev.Event.Identity.UID != "alice" {
		t.Fatalf("denial event %q: %d %+v", den.Details.Event, c, ev.Event)
	}
}
