package messagingserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/messaging/messagingtest"
)

const project = "demo-project"

func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d non-JSON body %q", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

func mint(t *testing.T, s *messagingtest.Server, body string) string {
	t.Helper()
	st, out := do(t, "POST", s.URL+"/emulator/v1/projects/"+project+"/tokens", body)
	if st != 200 {
		t.Fatalf("mint: %d %v", st, out)
	}
	return out["token"].(string)
}

func TestSendEnvelopes(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	tok := mint(t, s, `{"platform": "web"}`)
	send := s.URL + "/v1/projects/" + project + "/messages:send"

	st, out := do(t, "POST", send, `{"message": {"token": "`+tok+`", "notification": {"title": "hi"}}}`)
	if st != 200 || !strings.HasPrefix(out["name"].(string), "projects/demo-project/messages/") {
		t.Fatalf("send: %d %v", st, out)
	}

	// Exactly production's envelopes.
	cases := []struct {
		body string
		want string
	}{
		{`{"message": {"token": "garbage"}}`, `{"error": {"code": 400, "message": "The registration token is not a valid FCM registration token", "status": "INVALID_ARGUMENT", "details": [
			{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.token", "description": "Invalid registration token"}]}]}}`},
		{`{"message": {}}`, `{"error": {"code": 400, "message": "Recipient of the message is not set.", "status": "INVALID_ARGUMENT", "details": [
			{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message", "description": "Recipient of the message is not set."}]}]}}`},
		{`{"message": {"topic": "a", "data": {"k": "` + strings.Repeat("x", 5000) + `"}}}`, `{"error": {"code": 400, "message": "Android message is too big", "status": "INVALID_ARGUMENT", "details": [
			{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
			{"@type": "type.googleapis.com/google.rpc.BadRequest"}]}}`},
		{`{"message": {"condition": "'a' in topics &&"}}`, `{"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT", "details": [
			{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.condition", "description": "Invalid condition expression provided."}]},
			{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "Invalid condition \"'a' in topics \u0026\u0026\": expected a quoted topic, '(' or '!' but found end of condition at offset 16"}]}}`},
		{`{"message": {"topic": "a", "data": {"from": "x"}}}`, `{"error": {"code": 400, "message": "Invalid data payload key: from", "status": "INVALID_ARGUMENT", "details": [
			{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.data", "description": "Invalid data payload key: from"}]}]}}`},
		{`{"message": {"topic": "a", "foo": 1}}`, `{"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \"foo\" at 'message': Cannot find field.", "status": "INVALID_ARGUMENT", "details": [
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message", "description": "Invalid JSON payload received. Unknown name \"foo\" at 'message': Cannot find field."}]}]}}`},
	}
	for _, tc := range cases {
		st, out := do(t, "POST", send, tc.body)
		var want map[string]any
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(out)
		exp, _ := json.Marshal(want)
		if st != int(want["error"].(map[string]any)["code"].(float64)) || string(got) != string(exp) {
			t.Errorf("%s:\n got %d %s\nwant %s", tc.body[:min(60, len(tc.body))], st, got, exp)
		}
	}

	// UNREGISTERED after deleteToken through the emulator endpoint.
	if st, out := do(t, "DELETE", s.URL+"/emulator/v1/projects/"+project+"/tokens/"+tok, ""); st != 200 {
		t.Fatalf("delete token: %d %v", st, out)
	}
	st, out = do(t, "POST", send, `{"message": {"token": "`+tok+`"}}`)
	if st != 404 || fmt.Sprint(out["error"].(map[string]any)["details"]) != "[map[@type:type.googleapis.com/google.firebase.fcm.v1.FcmError errorCode:UNREGISTERED]]" {
		t.Fatalf("deleted token: %d %v", st, out)
	}
	// validate_only returns a name and delivers nothing.
	other := mint(t, s, `{}`)
	st, out = do(t, "POST", send, `{"validate_only": true, "message": {"token": "`+other+`"}}`)
	if st != 200 || out["name"] == nil {
		t.Fatalf("dry run: %d %v", st, out)
	}
	if _, in := do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/tokens/"+other+"/messages", ""); len(in["messages"].([]any)) != 0 {
		t.Fatalf("dry run delivered: %v", in)
	}
}

func TestTopicManagementAndInbox(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	a := mint(t, s, `{"platform": "android"}`)
	b := mint(t, s, `{"platform": "web", "instance": "sw-1"}`)
	if again := mint(t, s, `{"instance": "sw-1"}`); again != b {
		t.Fatal("instance minting is not stable")
	}
	st, out := do(t, "POST", s.URL+"/iid/v1:batchAdd", `{"to": "/topics/news", "registration_tokens": ["`+a+`", "`+b+`", "junk"]}`)
	if st != 200 || fmt.Sprint(out["results"]) != "[map[] map[] map[error:INVALID_ARGUMENT]]" {
		t.Fatalf("batchAdd: %d %v", st, out)
	}
	st, out = do(t, "POST", s.URL+"/iid/v1:batchRemove", `{"to": "/topics/news", "registration_tokens": ["`+b+`"]}`)
	if st != 200 || fmt.Sprint(out["results"]) != "[map[]]" {
		t.Fatalf("batchRemove: %d %v", st, out)
	}
	do(t, "POST", s.URL+"/iid/v1:batchAdd", `{"to": "sports", "registration_tokens": ["`+b+`"]}`)
	st, out = do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/topics", "")
	if st != 200 || toJSON(out) != `{"topics":[{"name":"news","tokens":["`+a+`"]},{"name":"sports","tokens":["`+b+`"]}]}` {
		t.Fatalf("topics: %d %v", st, out)
	}
	if st, out := do(t, "GET", s.URL+"/emulator/v1/projects/other/topics", ""); st != 200 || toJSON(out) != `{"topics":[]}` {
		t.Fatalf("topics of a project without any: %d %v", st, out)
	}
	for _, bad := range []string{`{"to": "/topics/bad topic", "registration_tokens": ["x"]}`, `{"to": "news"}`, `{"registration_tokens": ["x"]}`, `nope`} {
		st, out := do(t, "POST", s.URL+"/iid/v1:batchAdd", bad)
		if st != 400 || out["error"] == nil {
			t.Errorf("batchAdd %s: %d %v", bad, st, out)
		}
	}
	st, out = do(t, "POST", s.URL+"/v1/projects/"+project+"/messages:send", `{"message": {"topic": "news", "data": {"k": "v"}}}`)
	if st != 200 {
		t.Fatalf("topic send: %d %v", st, out)
	}
	name := out["name"].(string)
	_, out = do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/messages", "")
	msgs := out["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["name"] != name || fmt.Sprint(msgs[0].(map[string]any)["tokens"]) != "["+a+"]" {
		t.Fatalf("messages: %v", out)
	}
	_, out = do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/tokens/"+a+"/messages", "")
	in := out["messages"].([]any)
	p := in[0].(map[string]any)["payload"].(map[string]any)
	if len(in) != 1 || p["from"] != messaging.SenderID(project) || fmt.Sprint(p["data"]) != "map[k:v]" {
		t.Fatalf("inbox: %v", out)
	}
	_, out = do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/tokens", "")
	if len(out["tokens"].([]any)) != 2 {
		t.Fatalf("tokens: %v", out)
	}
	if st, _ := do(t, "DELETE", s.URL+"/emulator/v1/projects/"+project+"/messages", ""); st != 200 {
		t.Fatal("clear")
	}
	_, out = do(t, "GET", s.URL+"/emulator/v1/projects/"+project+"/messages", "")
	if len(out["messages"].([]any)) != 0 {
		t.Fatalf("after clear: %v", out)
	}
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	cases := []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/v1/projects/p/messages:send", "", 405},
		{"POST", "/v1/projects/p/messages:sent", "{}", 404},
		{"POST", "/v1/projects//messages:send", "{}", 404},
		{"GET", "/iid/v1:batchAdd", "", 405},
		{"GET", "/nothing", "", 404},
		{"GET", "/emulator/v1/projects/p/tokens/nope", "", 404},
		{"GET", "/emulator/v1/projects/p/tokens/nope/messages", "", 404},
		{"DELETE", "/emulator/v1/projects/p/tokens/nope", "", 404},
		{"PUT", "/emulator/v1/projects/p/messages", "", 405},
		{"PUT", "/emulator/v1/projects/p/tokens", "", 405},
		{"POST", "/emulator/v1/projects/p/tokens", `{"platform": "fax"}`, 400},
		{"POST", "/emulator/v1/projects/p/tokens", `{"colour": "red"}`, 400},
		{"POST", "/emulator/v1/projects/p/tokens", `{"token": "a b"}`, 400},
		{"GET", "/emulator/v1/projects/p/other", "", 404},
		{"POST", "/batch", "{}", 400},
		{"POST", "/v1/projects/p/messages:send", strings.Repeat(" ", 2<<20), 413},
	}
	for _, tc := range cases {
		st, out := do(t, tc.method, s.URL+tc.path, tc.body)
		if st != tc.status || out["error"] == nil {
			t.Errorf("%s %s: %d %v, want %d", tc.method, tc.path, st, out, tc.status)
		}
	}
	req, _ := http.NewRequest("OPTIONS", s.URL+"/v1/projects/p/messages:send", nil)
	resp, err := http.DefaultClient.Do(req)
	// CORS is the port's (server.Guard, tested there): the adapter grants none.
	if err != nil || resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("OPTIONS: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestLegacyBatch(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	tok := mint(t, s, `{}`)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, msg := range []string{`{"message": {"token": "` + tok + `"}}`, `{"message": {"token": "bad"}}`} {
		pw, _ := mw.CreatePart(map[string][]string{"Content-Type": {"application/http"}})
		fmt.Fprintf(pw, "POST /v1/projects/%s/messages:send HTTP/1.1\r\nHost: fcm.googleapis.com\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", project, len(msg), msg)
	}
	mw.Close()
	resp, err := http.Post(s.URL+"/batch", "multipart/mixed; boundary="+mw.Boundary(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("batch: %d %v", resp.StatusCode, err)
	}
	mr := multipart.NewReader(resp.Body, params["boundary"])
	var statuses []int
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(part)
		r, err := http.ReadResponse(bufioReader(b), nil)
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, r.StatusCode)
	}
	if fmt.Sprint(statuses) != "[200 400]" {
		t.Fatalf("batch statuses %v", statuses)
	}
}
