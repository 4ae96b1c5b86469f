package firestoreserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/pyric/pyric/server"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/server/httpjson"
)

// restRules are the rules the REST tests run under.
const restRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /open/{doc} {
      allow read, write;
    }
  }
}
`

const (
	docs  = "/v1/projects/p/databases/(default)/documents"
	owner = "Bearer owner"
)

func aliceToken() string {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	return "Bearer " + enc(`{"alg":"none","type":"JWT"}`) + "." + enc(`{"sub":"alice","user_id":"alice"}`) + "."
}

// startREST serves a fresh engine with restRules loaded.
func startREST(t testing.TB) (*httptest.Server, *Server) {
	t.Helper()
	s := New(Options{Engine: firestore.New(firestore.Options{}), DefaultProject: "p"})
	if _, err := s.Rules().Set("firestore.rules", restRules); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.(interface{ Drain() }).Drain()
		ts.Close()
	})
	return ts, s
}

type reply struct {
	status int
	body   string
	header http.Header
}

func (r reply) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, r.body)
	}
	return v
}

// errStatus returns error.status and error.message of an error reply.
func (r reply) err(t *testing.T) (string, string, int) {
	t.Helper()
	var e struct {
		Error httpjson.Status `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil {
		t.Fatalf("error reply is not the Google envelope: %v\n%s", err, r.body)
	}
	return e.Error.Status, e.Error.Message, e.Error.Code
}

func do(t testing.TB, ts *httptest.Server, method, path, body, auth string, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "text/plain")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: string(b), header: resp.Header}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	if r := do(t, ts, "GET", "/", "", ""); r.status != 200 || r.body != "Ok" {
		t.Errorf("GET / = %d %q", r.status, r.body)
	}
}

// TestRESTDocuments exercises every document method in order, each
// against the result of the previous ones.
func TestRESTDocuments(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	name := "projects/p/databases/(default)/documents/open/a"
	steps := []struct {
		name, method, path, body, auth string
		status                         int
		want                           []string // substrings of the body
	}{
		{"create with documentId", "POST", docs + "/open?documentId=a", `{"fields":{"n":{"integerValue":"1"},"s":{"stringValue":"x"}}}`, "", 200,
			[]string{`"name":"` + name + `"`, `"integerValue":"1"`, `"createTime":"`}},
		{"create again", "POST", docs + "/open?documentId=a", `{"fields":{}}`, "", 409, []string{`"ALREADY_EXISTS"`}},
		{"create with a name in the body", "POST", docs + "/open", `{"name":"` + name + `"}`, "", 400, []string{`?documentId=`}},
		{"create with an auto id", "POST", docs + "/open", `{"fields":{"n":{"integerValue":"2"}}}`, "", 200, []string{`documents/open/`}},
		{"get", "GET", docs + "/open/a", "", "", 200, []string{`"stringValue":"x"`}},
		{"get with mask", "GET", docs + "/open/a?mask.fieldPaths=n", "", "", 200, []string{`"n"`}},
		{"get missing", "GET", docs + "/open/zz", "", "", 404, []string{`"NOT_FOUND"`}},
		{"list", "GET", docs + "/open?pageSize=1", "", owner, 200, []string{`"documents":[`, `"nextPageToken":"`}},
		{"list names only", "GET", docs + "/open?mask.fieldPaths=__name__&showMissing=true", "", owner, 200, []string{`"documents":[`}},
		{"patch with mask and precondition", "PATCH", docs + "/open/a?updateMask.fieldPaths=n&currentDocument.exists=true", `{"fields":{"n":{"integerValue":"5"}}}`, "", 200,
			[]string{`"integerValue":"5"`, `"stringValue":"x"`}},
		{"patch with response mask", "PATCH", docs + "/open/a?updateMask.fieldPaths=t&mask.fieldPaths=t", `{"fields":{"t":{"booleanValue":true}}}`, "", 200,
			[]string{`"booleanValue":true`}},
		{"patch precondition fails", "PATCH", docs + "/open/b?currentDocument.exists=true", `{"fields":{}}`, "", 404, []string{`"NOT_FOUND"`}},
		{"patch with another name in the body", "PATCH", docs + "/open/a", `{"name":"projects/p/databases/(default)/documents/open/b"}`, "", 400, []string{`does not match`}},
		{"delete missing with precondition", "DELETE", docs + "/open/zz?currentDocument.exists=true", "", "", 404, []string{`"NOT_FOUND"`}},
		{"batchGet", "POST", docs + ":batchGet", `{"documents":["` + name + `","projects/p/databases/(default)/documents/open/zz"]}`, "", 200,
			[]string{`"found":{`, `"missing":"projects/p/databases/(default)/documents/open/zz"`, `"readTime":"`}},
		{"runQuery", "POST", docs + ":runQuery", `{"structuredQuery":{"from":[{"collectionId":"open"}],"where":{"fieldFilter":{"field":{"fieldPath":"n"},"op":"EQUAL","value":{"integerValue":"5"}}}}}`, "", 200,
			[]string{`"document":{`, `"done":true`}},
		{"runQuery below a document", "POST", docs + "/open/a:runQuery", `{"structuredQuery":{"from":[{"collectionId":"sub"}]}}`, owner, 200, []string{`"done":true`}},
		{"runAggregationQuery", "POST", docs + ":runAggregationQuery", `{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"open"}]},"aggregations":[{"alias":"c","count":{}}]}}`, "", 200,
			[]string{`"aggregateFields":{"c":{"integerValue":"2"}}`}},
		{"partitionQuery", "POST", docs + ":partitionQuery", `{"structuredQuery":{"from":[{"collectionId":"open","allDescendants":true}],"orderBy":[{"field":{"fieldPath":"__name__"}}]},"partitionCount":"2"}`, owner, 200, nil},
		{"listCollectionIds", "POST", docs + ":listCollectionIds", `{}`, owner, 200, []string{`"collectionIds":["open"]`}},
		{"batchWrite", "POST", docs + ":batchWrite", `{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/open/bw","fields":{}}},{"delete":"projects/p/databases/(default)/documents/open/zz","currentDocument":{"exists":true}}]}`, owner, 200,
			[]string{`"writeResults":[`, `"status":[{},{"code":5`}},
		{"commit", "POST", docs + ":commit", `{"writes":[{"update":{"name":"` + name + `"},"updateMask":{"fieldPaths":[]},"updateTransforms":[{"fieldPath":"n","increment":{"integerValue":"2"}}],"currentDocument":{"exists":true}}]}`, "", 200,
			[]string{`"transformResults":[{"integerValue":"7"}]`, `"commitTime":"`}},
		{"delete", "DELETE", docs + "/open/a", "", "", 200, []string{`{}`}},
		{"get deleted", "GET", docs + "/open/a", "", "", 404, nil},
	}
	for _, s := range steps {
		r := do(t, ts, s.method, s.path, s.body, s.auth)
		if r.status != s.status {
			t.Errorf("%s: status %d, want %d\n%s", s.name, r.status, s.status, r.body)
			continue
		}
		compact := strings.Join(strings.Fields(r.body), "")
		for _, w := range s.want {
			if !strings.Contains(compact, strings.Join(strings.Fields(w), "")) {
				t.Errorf("%s: body lacks %s:\n%s", s.name, w, r.body)
			}
		}
		if r.status != 200 {
			r.err(t)
		} else {
			r.json(t)
		}
	}
}

func TestRESTTransactions(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	do(t, ts, "POST", docs+"/open?documentId=c", `{"fields":{"v":{"integerValue":"1"}}}`, "")
	r := do(t, ts, "POST", docs+":beginTransaction", `{}`, "")
	var begin struct{ Transaction string }
	if err := json.Unmarshal([]byte(r.body), &begin); err != nil || begin.Transaction == "" {
		t.Fatalf("beginTransaction: %d %s", r.status, r.body)
	}
	// A read in the transaction, over GET with ?transaction= (URL-safe or
	// standard base64) and over batchGet.
	if r := do(t, ts, "GET", docs+"/open/c?transaction="+strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(begin.Transaction), "", ""); r.status != 200 {
		t.Fatalf("get in transaction: %d %s", r.status, r.body)
	}
	r = do(t, ts, "POST", docs+":commit", `{"transaction":"`+begin.Transaction+`","writes":[{"update":{"name":"projects/p/databases/(default)/documents/open/c","fields":{"v":{"integerValue":"2"}}}}]}`, "")
	if r.status != 200 {
		t.Fatalf("commit: %d %s", r.status, r.body)
	}
	// The transaction is over: rolling it back is an error.
	r = do(t, ts, "POST", docs+":rollback", `{"transaction":"`+begin.Transaction+`"}`, "")
	if st, _, _ := r.err(t); r.status != 400 || st != "INVALID_ARGUMENT" {
		t.Errorf("rollback of a committed transaction: %d %s", r.status, r.body)
	}
	r = do(t, ts, "POST", docs+":beginTransaction", `{"options":{"readOnly":{}}}`, "")
	json.Unmarshal([]byte(r.body), &begin)
	if r := do(t, ts, "POST", docs+":rollback", `{"transaction":"`+begin.Transaction+`"}`, ""); r.status != 200 || strings.TrimSpace(r.body) != "{}" {
		t.Errorf("rollback: %d %s", r.status, r.body)
	}
	r = do(t, ts, "POST", docs+":runQuery", `{"structuredQuery":{"from":[{"collectionId":"open"}]},"newTransaction":{}}`, "")
	if r.status != 200 || !strings.Contains(r.body, `"transaction"`) {
		t.Errorf("runQuery with newTransaction: %d %s", r.status, r.body)
	}
}

// TestRESTErrors checks that bad input gets a precise 4xx in Google's
// envelope, never a 500.
func TestRESTErrors(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	do(t, ts, "POST", docs+"/users?documentId=alice", `{"fields":{"n":{"integerValue":"1"}}}`, owner)
	do(t, ts, "POST", docs+"/open?documentId=a", `{"fields":{"n":{"integerValue":"1"}}}`, owner)
	cases := []struct {
		name, method, path, body, auth string
		status                         int
		code, msg                      string
	}{
		{"malformed JSON", "POST", docs + ":commit", `{bad`, "", 400, "INVALID_ARGUMENT", "Invalid JSON payload received for CommitRequest"},
		{"unknown field", "POST", docs + ":commit", `{"unknownField":1}`, "", 400, "INVALID_ARGUMENT", `unknownField`},
		{"not an object", "POST", docs + ":commit", `[]`, "", 400, "INVALID_ARGUMENT", "Invalid JSON payload"},
		{"bad enum", "POST", docs + ":runQuery", `{"structuredQuery":{"from":[{"collectionId":"open"}],"where":{"fieldFilter":{"op":"NOPE"}}}}`, "", 400, "INVALID_ARGUMENT", "NOPE"},
		{"bad value", "POST", docs + ":commit", `{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/a/b","fields":{"x":{"bogus":1}}}}]}`, owner, 400, "INVALID_ARGUMENT", "bogus"},
		{"bad document name", "POST", docs + ":commit", `{"writes":[{"update":{"name":"bad","fields":{}}}]}`, owner, 400, "INVALID_ARGUMENT", "bad"},
		{"body names another database", "POST", docs + ":commit", `{"database":"projects/q/databases/(default)"}`, "", 400, "INVALID_ARGUMENT", "projects/q/databases/(default)"},
		{"invalid jwt", "GET", docs + "/open/a", "", "Bearer garbage", 400, "INVALID_ARGUMENT", "invalid jwt"},
		{"permission denied names the rule", "GET", docs + "/users/alice", "", "", 403, "PERMISSION_DENIED", "\nfalse for 'get' @ L5"},
		{"denied write", "PATCH", docs + "/users/bob", `{"fields":{}}`, aliceToken(), 403, "PERMISSION_DENIED", "@ L5"},
		{"unknown query parameter", "GET", docs + "/open/a?bogus=1", "", "", 400, "INVALID_ARGUMENT", `"bogus"`},
		{"bad integer parameter", "GET", docs + "/open?pageSize=ten", "", "", 400, "INVALID_ARGUMENT", "32-bit integer"},
		{"bad boolean parameter", "DELETE", docs + "/open/a?currentDocument.exists=maybe", "", "", 400, "INVALID_ARGUMENT", "true or false"},
		{"bad timestamp parameter", "GET", docs + "/open/a?readTime=yesterday", "", "", 400, "INVALID_ARGUMENT", "RFC 3339"},
		{"bad base64 parameter", "GET", docs + "/open/a?transaction=!!", "", "", 400, "INVALID_ARGUMENT", "base64"},
		{"repeated scalar parameter", "GET", docs + "/open?pageSize=1&pageSize=2", "", "", 400, "INVALID_ARGUMENT", "2 times"},
		{"parameter naming a message", "GET", docs + "/open/a?mask=x", "", "", 400, "INVALID_ARGUMENT", "mask.fieldPaths"},
		{"path-bound parameter", "GET", docs + "/open/a?name=x", "", "", 400, "INVALID_ARGUMENT", `"name"`},
		{"bad field path", "GET", docs + "/open/a?mask.fieldPaths=a..b", "", "", 400, "INVALID_ARGUMENT", "a..b"},
		{"custom method with GET", "GET", docs + ":commit", "", "", 404, "NOT_FOUND", "takes POST"},
		{"root method on a document", "POST", docs + "/open/a:commit", `{}`, "", 404, "NOT_FOUND", "documents root only"},
		{"PUT on a document", "PUT", docs + "/open/a", `{}`, "", 404, "NOT_FOUND", "no such method"},
		{"not a resource", "GET", "/v1/foo", "", "", 404, "NOT_FOUND", "/v1/projects/{project}"},
		{"missing documents", "GET", "/v1/projects/p/databases/(default)/docs/a", "", "", 404, "NOT_FOUND", "documents"},
		{"empty segment", "GET", docs + "/open//a", "", "", 400, "INVALID_ARGUMENT", "empty segment"},
		{"unknown endpoint", "GET", "/nowhere", "", "", 404, "NOT_FOUND", "no such endpoint"},
		{"REST write stream", "POST", docs + ":write", `{}`, "", 501, "UNIMPLEMENTED", "WebChannel"},
	}
	for _, c := range cases {
		r := do(t, ts, c.method, c.path, c.body, c.auth)
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d\n%s", c.name, r.status, c.status, r.body)
			continue
		}
		st, msg, code := r.err(t)
		if st != c.code || code != c.status || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %s %q, want %s containing %q", c.name, code, st, msg, c.code, c.msg)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
	}
	// A body over the limit.
	big := `{"writes":[],"x":"` + strings.Repeat("a", maxBodyBytes) + `"}`
	if r := do(t, ts, "POST", docs+":commit", big, ""); r.status != 400 || !strings.Contains(r.body, "exceeds the limit") {
		t.Errorf("huge body: %d %.200s", r.status, r.body)
	}
}

// TestRESTContentTypes: text/plain, empty and JSON bodies are all JSON.
func TestRESTContentTypes(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	for i, ct := range []string{"text/plain;charset=UTF-8", "", "application/json"} {
		body := `{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/open/ct` + string(rune('0'+i)) + `","fields":{}}}]}`
		req, _ := http.NewRequest("POST", ts.URL+docs+":commit", strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("Content-Type %q: %d", ct, resp.StatusCode)
		}
	}
}

func TestRESTCORS(t *testing.T) {
	t.Parallel()
	plain, _ := startREST(t)
	ts := httptest.NewServer(server.Guard(plain.Config.Handler, nil)) // as on its port
	t.Cleanup(ts.Close)
	r := do(t, ts, "OPTIONS", docs+":commit", "", "", "Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization,content-type,x-goog-api-client")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		r.header.Get("Access-Control-Allow-Credentials") != "true" ||
		r.header.Get("Access-Control-Allow-Headers") != "authorization,content-type,x-goog-api-client" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "PATCH") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	r = do(t, ts, "GET", docs+"/open/none", "", "", "Origin", "http://localhost:5173")
	if r.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "x-http-session-id") {
		t.Errorf("CORS on an error: %v", r.header)
	}
	// A page of another site is refused whatever it asks, even an open read.
	r = do(t, ts, "GET", docs+"/open/none", "", "", "Origin", "http://app.test")
	if r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign origin: %d %v", r.status, r.header)
	}
}

// TestRESTPanicIsInternal: a panic below the handler answers 500 INTERNAL
// in the envelope instead of killing the connection.
func TestRESTPanicIsInternal(t *testing.T) {
	t.Parallel()
	s := New(Options{Engine: firestore.New(firestore.Options{})})
	s.Engine().SetRules(firestore.RulesFunc(func(_ context.Context, _ *firestore.AuthzRequest) firestore.AuthzDecision { panic("boom") }))
	h := s.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", docs+"/a/b", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"INTERNAL"`) || !strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

// TestVerifyWrites: the JS SDKs' {"verify": name} write (absent from the
// published protos) decodes to the unknown field 5 of the Write, the bytes
// a gRPC decode of the same message leaves there.
func TestVerifyWrites(t *testing.T) {
	t.Parallel()
	req := &pb.CommitRequest{}
	body := `{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/a/b"}},{"verify":"projects/p/databases/(default)/documents/a/c","currentDocument":{"updateTime":"2026-11-30T09:48:10.888081000Z"}}]}`
	if err := unmarshalJSON([]byte(body), req); err != nil {
		t.Fatal(err)
	}
	want := protowire.AppendString(protowire.AppendTag(nil, 5, protowire.BytesType), "projects/p/databases/(default)/documents/a/c")
	if got := req.Writes[1].ProtoReflect().GetUnknown(); string(got) != string(want) {
		t.Errorf("unknown fields %x, want %x", got, want)
	}
	if req.Writes[1].GetCurrentDocument().GetUpdateTime().GetNanos() != 888081000 || req.Writes[0].GetUpdate() == nil {
		t.Errorf("the rest of the request was lost: %v", req)
	}
	for _, bad := range []string{
		`{"writes":[{"verify":1}]}`,
		`{"writes":[{"verify":"x","delete":"y"}]}`,
	} {
		if err := unmarshalJSON([]byte(bad), &pb.CommitRequest{}); Status(err).Code() != codes.InvalidArgument {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// Other messages are untouched: "verify" is an unknown field there.
	if err := unmarshalJSON([]byte(`{"verify":"x"}`), &pb.BatchGetDocumentsRequest{}); Status(err).Code() != codes.InvalidArgument {
		t.Errorf("verify outside writes: %v", err)
	}
}
