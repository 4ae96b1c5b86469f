package databaseserver

import (
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestReplyRenderMatchesAPIBody: a REST answer written from the pooled
// buffer (replyRender, restReply) has api.Body's status, headers and
// body for every rendering (plain, export, pretty), and a short answer
// after a long one holds nothing of the long one.
func TestReplyRenderMatchesAPIBody(t *testing.T) {
	t.Parallel()
	values := []any{
		nil, "s", 1.5, true, map[string]any{},
		map[string]any{"n": 1.0, "s": "x"},
		map[string]any{".value": "v", ".priority": 1.0},
		map[string]any{"0": "a", "1": "b", ".priority": 3.0},
		map[string]any{"a": map[string]any{"b": strings.Repeat("long ", 20000)}}, // past the pooled size
		map[string]any{"k": "<&>\u2028"},
	}
	queries := []string{"", "format=export", "print=pretty", "format=export&print=pretty"}
	check := func(v any, query string) {
		t.Helper()
		qv, _ := url.ParseQuery(query)
		print := qv.Get("print")
		want := httptest.NewRecorder()
		api.Body(want, 200, render(v, qv, print))
		got := httptest.NewRecorder()
		replyRender(got, 200, v, qv, print)
		if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) || got.Body.String() != want.Body.String() {
			t.Fatalf("%v ?%s: replyRender %d %v %q, api.Body %d %v %q", v, query, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
	for _, v := range values {
		for _, q := range queries {
			check(v, q)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		m := map[string]any{}
		for range rng.IntN(40) {
			m[strings.Repeat("k", 1+rng.IntN(30))] = strings.Repeat("v", rng.IntN(300))
		}
		check(m, queries[rng.IntN(len(queries))])
	}
}
