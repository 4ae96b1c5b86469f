package httpjson_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
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

// quoted is an Appender: a string written as encoding/json writes it
// (HTML characters escaped); its JSON tag makes encoding/json's encoding
// of it, when a style sends it there, the same string.
type quoted struct {
	S string `json:"s"`
}

func (q quoted) AppendJSON(b []byte) []byte {
	b = append(b, `{"s":"`...)
	for _, c := range []byte(q.S) {
		switch c {
		case '<':
			b = append(b, `\u003c`...)
		case '>':
			b = append(b, `\u003e`...)
		case '&':
			b = append(b, `\u0026`...)
		default:
			b = append(b, c)
		}
	}
	return append(b, `"}`...)
}

// Append answers what JSON answers, status, headers and bytes, in every
// style; its reused buffers hold each answer's bytes only.
func TestAppendIsJSON(t *testing.T) {
	styles := []httpjson.Style{{Newline: true, Charset: "utf-8"}, {}, {Indent: true}, {RawHTML: true, Charset: "UTF-8"},
		{Length: true, Charset: "latin1", Header: map[string]string{"cache-control": "no-cache", "X-A": "b"}}}
	for _, st := range styles {
		for _, v := range []quoted{{strings.Repeat("long ", 2000)}, {"<a & b>"}, {""}} {
			a, j := httptest.NewRecorder(), httptest.NewRecorder()
			st.Append(a, 201, v)
			st.JSON(j, 201, v)
			if a.Code != j.Code || a.Body.String() != j.Body.String() {
				t.Errorf("%+v: Append %d %q, JSON %d %q", st, a.Code, a.Body, j.Code, j.Body)
			}
			if !maps.EqualFunc(a.Header(), j.Header(), slices.Equal) {
				t.Errorf("%+v: Append's headers %v, JSON's %v", st, a.Header(), j.Header())
			}
		}
	}
}

// Headers sets what Header().Set would, each value a slice of its own
// (appending to one leaves the others).
func TestHeadersAreSet(t *testing.T) {
	st := httpjson.Style{Charset: "iso-8859-1", Header: map[string]string{"cache-control": "no-cache", "X-Content-Type-Options": "nosniff"}}
	w := httptest.NewRecorder()
	st.Headers(w)
	want := http.Header{}
	want.Set("Content-Type", "application/json; charset=iso-8859-1")
	want.Set("Cache-Control", "no-cache")
	want.Set("X-Content-Type-Options", "nosniff")
	if !maps.EqualFunc(w.Header(), want, slices.Equal) {
		t.Fatalf("headers %v, want %v", w.Header(), want)
	}
	w.Header().Add("Content-Type", "x")
	if w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("adding to one header changed another: %v", w.Header())
	}
}
