package firestoreserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/server/httpjson"
)

// FuzzRESTRequest sends arbitrary methods, paths, query strings, bodies
// and tokens to the REST handler: every answer is a 2xx or a precise 4xx/5xx
// in Google's envelope, never a 500 and never a panic.
func FuzzRESTRequest(f *testing.F) {
	seeds := []struct{ method, path, query, body, auth string }{
		{"POST", "documents:commit", "", `{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/a/b","fields":{"x":{"integerValue":"1"}}}}]}`, "owner"},
		{"POST", "documents:runQuery", "", `{"structuredQuery":{"from":[{"collectionId":"a"}],"where":{"fieldFilter":{"field":{"fieldPath":"x"},"op":"GREATER_THAN","value":{"integerValue":"0"}}},"orderBy":[{"field":{"fieldPath":"x"},"direction":"DESCENDING"}],"limit":3}}`, ""},
		{"POST", "documents:runAggregationQuery", "", `{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"a"}]},"aggregations":[{"alias":"s","sum":{"field":{"fieldPath":"x"}}}]}}`, "owner"},
		{"POST", "documents:batchGet", "", `{"documents":["projects/p/databases/(default)/documents/a/b"],"mask":{"fieldPaths":["x"]}}`, "owner"},
		{"POST", "documents:beginTransaction", "", `{"options":{"readWrite":{}}}`, "owner"},
		{"POST", "documents:batchWrite", "", `{"writes":[{"delete":"projects/p/databases/(default)/documents/a/b"}]}`, "owner"},
		{"POST", "documents/a/b:listCollectionIds", "", `{"pageSize":1}`, "owner"},
		{"POST", "documents:partitionQuery", "", `{"partitionCount":"3"}`, "owner"},
		{"GET", "documents/a/b", "mask.fieldPaths=x&readTime=2020-01-01T00:00:00Z", "", "owner"},
		{"GET", "documents/a", "pageSize=2&orderBy=x&showMissing=true", "", "owner"},
		{"PATCH", "documents/a/b", "updateMask.fieldPaths=x.y&currentDocument.updateTime=2020-01-01T00:00:00Z", `{"fields":{"x":{"mapValue":{"fields":{"y":{"doubleValue":"NaN"}}}}}}`, "owner"},
		{"DELETE", "documents/a/b", "currentDocument.exists=false", "", "x.y.z"},
		{"POST", "documents/a", "documentId=%00", `{"fields":{"\u0000":{"bytesValue":"AA=="}}}`, "owner"},
		{"POST", "documents:commit", "", `{"writes":[{"transform":{"document":"projects/p/databases/(default)/documents/a/b","fieldTransforms":[{"fieldPath":"` + "`a`" + `","increment":{"integerValue":"9223372036854775807"}}]}}]}`, "owner"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.body, s.auth)
	}
	s := New(Options{Engine: firestore.New(firestore.Options{}), DefaultProject: "p"})
	if _, err := s.Rules().Set("firestore.rules", restRules); err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, method, path, query, body, auth string) {
		target := "/v1/projects/p/databases/(default)/" + path
		if query != "" {
			target += "?" + query
		}
		u, err := url.Parse(target)
		if err != nil || !validMethod(method) {
			return
		}
		req := httptest.NewRequest("GET", "/", strings.NewReader(body))
		req.Method, req.URL, req.RequestURI = method, u, u.RequestURI()
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s %q: 500 %s", method, target, body, rec.Body.String())
		}
		if rec.Code != 200 {
			var e struct {
				Error httpjson.Status `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Status == "" || e.Error.Code != rec.Code {
				t.Fatalf("%s %s: %d with a body that is not the error envelope: %s", method, target, rec.Code, rec.Body.String())
			}
		} else if method != "OPTIONS" && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s: 200 with invalid JSON: %s", method, target, rec.Body.String())
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case "GET", "POST", "PATCH", "DELETE", "PUT", "OPTIONS", "HEAD":
		return true
	}
	return false
}

// FuzzWebChannelMessage feeds arbitrary JSON messages (and form framing)
// to Listen and Write sessions: nothing panics, and a message the session
// cannot use ends it with an error naming a client problem.
func FuzzWebChannelMessage(f *testing.F) {
	for _, s := range []string{
		`{"database":"projects/p/databases/(default)","addTarget":{"documents":{"documents":["projects/p/databases/(default)/documents/a/b"]},"targetId":2}}`,
		`{"addTarget":{"query":{"parent":"projects/p/databases/(default)/documents","structuredQuery":{"from":[{"collectionId":"a"}]}},"targetId":4,"resumeToken":"CgkI5Yj1xMOvmAM=","expectedCount":1}}`,
		`{"removeTarget":2}`,
		`{"streamToken":"MA==","writes":[{"update":{"name":"projects/p/databases/(default)/documents/a/b","fields":{}}}]}`,
		`{"writes":[{"delete":"projects/p/databases/(default)/documents/a/b","currentDocument":{"exists":true}}]}`,
		`{"database":"nonsense"}`,
		`{"addTarget":{"targetId":"x"}}`,
		`[]`, `{`, ``, `null`,
	} {
		f.Add(s, "owner", 0)
	}
	s := New(Options{Engine: firestore.New(firestore.Options{}), DefaultProject: "p"})
	if _, err := s.Rules().Set("firestore.rules", restRules); err != nil {
		f.Fatal(err)
	}
	wc := newWebChannel(s)
	f.Fuzz(func(t *testing.T, msg, auth string, ofs int) {
		for _, kind := range []string{"Listen", "Write"} {
			body := url.Values{"count": {"2"}, "ofs": {"0"}, "headers": {"Authorization:Bearer " + auth + "\r\n"},
				"req0___data__": {`{"database":"projects/p/databases/(default)"}`}, "req1___data__": {msg}}
			req := httptest.NewRequest("POST", webChannelPrefix+kind+"/channel?VER=8&RID=1&CVER=22", strings.NewReader(body.Encode()))
			rec := httptest.NewRecorder()
			wc.serve(rec, req)
			if rec.Code != 200 {
				t.Fatalf("%s handshake: %d %s", kind, rec.Code, rec.Body.String())
			}
			var sess *wcSession
			wc.mu.Lock()
			for _, x := range wc.sessions {
				sess = x
			}
			wc.mu.Unlock()
			if sess == nil {
				t.Fatalf("%s: no session", kind)
			}
			// A forward request with arbitrary framing numbers.
			fwd := url.Values{"count": {"1"}, "ofs": {strconv.Itoa(ofs)}, "req0___data__": {msg}}
			req = httptest.NewRequest("POST", webChannelPrefix+kind+"/channel?VER=8&RID=2&AID=0&SID="+url.QueryEscape(sess.id), strings.NewReader(fwd.Encode()))
			wc.serve(httptest.NewRecorder(), req)
			sess.mu.Lock()
			for _, m := range sess.msgs {
				if strings.Contains(string(m.data), `"status":"INTERNAL"`) || strings.Contains(string(m.data), `"status":"UNKNOWN"`) {
					t.Errorf("%s %q: %s", kind, msg, m.data)
				}
				if !json.Valid(m.data) {
					t.Errorf("%s %q: invalid JSON message %s", kind, msg, m.data)
				}
			}
			sess.mu.Unlock()
			sess.close()
		}
	})
}
