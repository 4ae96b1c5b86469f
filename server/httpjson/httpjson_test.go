package httpjson_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/server/httpjson"
)

type item struct {
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

// Each variant's exact bytes and headers: the adapters' users see these.
func TestBytes(t *testing.T) {
	gcs := httpjson.Style{Charset: "utf-8", Newline: true}
	fcm := httpjson.Style{Charset: "UTF-8", Indent: true, Newline: true}
	rtdb := httpjson.Style{Charset: "utf-8", Newline: true, Header: map[string]string{"Cache-Control": "no-cache"}}
	firestore := httpjson.Style{Charset: "utf-8", Newline: true, Length: true}
	raw := httpjson.Style{Charset: "UTF-8", RawHTML: true}
	for _, tc := range []struct {
		name    string
		write   func(*httptest.ResponseRecorder)
		status  int
		body    string
		headers map[string]string
	}{
		{"canonical", func(w *httptest.ResponseRecorder) { firestore.Fail(w, errcode.NotFound, "no <doc>") }, 404,
			`{"error":{"code":404,"message":"no \u003cdoc\u003e","status":"NOT_FOUND"}}` + "\n",
			map[string]string{"Content-Type": "application/json; charset=utf-8", "Content-Length": "75"}},
		{"errors list", func(w *httptest.ResponseRecorder) {
			gcs.Error(w, httpjson.Status{Code: 400, Message: "EMAIL_EXISTS", Errors: []item{{"EMAIL_EXISTS", "invalid"}}})
		}, 400, `{"error":{"code":400,"errors":[{"message":"EMAIL_EXISTS","reason":"invalid"}],"message":"EMAIL_EXISTS"}}` + "\n",
			map[string]string{"Content-Type": "application/json; charset=utf-8", "Content-Length": ""}},
		{"details, indented", func(w *httptest.ResponseRecorder) {
			fcm.Error(w, httpjson.Status{Code: 404, Message: "m", Status: "NOT_FOUND", Details: []map[string]any{{"@type": "t"}}})
		}, 404, "{\n  \"error\": {\n    \"code\": 404,\n    \"message\": \"m\",\n    \"status\": \"NOT_FOUND\",\n    \"details\": [\n      {\n        \"@type\": \"t\"\n      }\n    ]\n  }\n}\n",
			map[string]string{"Content-Type": "application/json; charset=UTF-8"}},
		{"message only", func(w *httptest.ResponseRecorder) { rtdb.Message(w, 401, "Permission denied") }, 401,
			`{"error":"Permission denied"}` + "\n", map[string]string{"Cache-Control": "no-cache"}},
		{"body as is", func(w *httptest.ResponseRecorder) { raw.Body(w, 200, []byte(`[1]`)) }, 200, `[1]`, nil},
		{"raw HTML", func(w *httptest.ResponseRecorder) { raw.JSON(w, 200, "<&>") }, 200, `"<&>"`, nil},
		{"unencodable", func(w *httptest.ResponseRecorder) { raw.JSON(w, 200, func() {}) }, 500, "", nil},
		{"no charset", func(w *httptest.ResponseRecorder) { httpjson.Style{}.JSON(w, 200, 1) }, 200, "1",
			map[string]string{"Content-Type": "application/json"}},
	} {
		w := httptest.NewRecorder()
		tc.write(w)
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, w.Code, w.Body.String(), tc.status, tc.body)
		}
		for k, v := range tc.headers {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", tc.name, k, got, v)
			}
		}
	}
}

// JSON's buffers are reused: each answer holds its own bytes only, after
// a longer one, after one that failed to encode half-way, in each style.
func TestJSONReusedBuffers(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, st := range []httpjson.Style{{Newline: true}, {}, {Indent: true}, {RawHTML: true}} {
		for range 3 {
			w := httptest.NewRecorder()
			st.JSON(w, 200, map[string]any{"long": long})
			w = httptest.NewRecorder()
			st.JSON(w, 200, []any{1, func() {}}) // fails after "[1,"
			if w.Code != 500 || strings.Contains(w.Body.String(), "[1") {
				t.Errorf("%+v: unencodable answered %d %q", st, w.Code, w.Body)
			}
			w = httptest.NewRecorder()
			st.JSON(w, 201, "<a>")
			want, _ := st.Encode("<a>")
			if w.Code != 201 || w.Body.String() != string(want) || len(want) > 16 {
				t.Errorf("%+v: %d %q, want %q", st, w.Code, w.Body, want)
			}
		}
	}
}
