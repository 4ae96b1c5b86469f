package databaseserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/identity"
)

// rtdbCase is one request of the RTDB transport matrix: an operation by
// one identity, and the code (and for a read, the data) it must end with
// on every transport. In path and data, %s is the transport's number, so
// that each writes its own location.
type rtdbCase struct {
	name  string
	alice bool   // as the user alice (else admin)
	op    string // set, update, get, or stale (a set whose expected hash no longer matches)
	path  string
	data  string // JSON
	code  errcode.Code
	msg   string // a substring the message must contain
}

var rtdbCases = []rtdbCase{
	{"set allowed", true, "set", "/users/alice/t%s", `{"n":1,"s":"x"}`, errcode.OK, ""},
	{"update allowed", false, "update", "/public/u%s", `{"a/n":2,"b":"y"}`, errcode.OK, ""},
	{"get of the seed", true, "get", "/public/seed", ``, errcode.OK, ""},
	{"get of a missing location", true, "get", "/public/none%s", ``, errcode.OK, ""},
	{"write denied by rules", true, "set", "/users/bob/t%s", `1`, errcode.PermissionDenied, "Permission denied"},
	{"read denied by rules", true, "get", "/users/bob", ``, errcode.PermissionDenied, "Permission denied"},
	{"update denied by rules", true, "update", "/users/bob%s", `{"a":1}`, errcode.PermissionDenied, "Permission denied"},
	{"key with a dot", false, "set", "/public/k%s", `{"a.b":1}`, errcode.InvalidArgument, "a.b"},
	{"update path with a dollar", false, "update", "/public/d%s", `{"a$b":1}`, errcode.InvalidArgument, "a$b"},
	{"stale compare-and-set", false, "stale", "/public/seed", `{"v":9}`, errcode.Aborted, ""},
}

// restWording is, per case, production's REST answer where it words an
// error its own way: a bad key in a body is named by its line and column
// in the body's text, which the other transports do not carry. Only the
// code and the data are compared across transports for these cases.
var restWording = map[string]string{
	"key with a dot": "Invalid data; couldn't parse key beginning at 1:2. Key value can't be empty or contain $ # [ ] / or .",
}

const matrixNS = "demo-default-rtdb"

// TestTransportMatrix runs one table of operations in-process (the
// engine, its errors read by errcode.Of), over REST and over the
// websocket, and requires the same code from each, the same message
// where the protocol carries one, and the same data for a read.
func TestTransportMatrix(t *testing.T) {
	srv, db := start(t, testRules)
	if _, err := db.Set(identity.AdminIdentity(), matrixNS, "/public/seed", map[string]any{"v": 1.0}, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	admin := dial(t, srv.URL, matrixNS)
	user := dial(t, srv.URL, matrixNS)
	user.ok("auth", map[string]any{"cred": mockToken("alice")})

	type outcome struct {
		code errcode.Code
		msg  string
		data string // a read's value as JSON
	}
	restCode := map[int]errcode.Code{200: errcode.OK, 204: errcode.OK, 400: errcode.InvalidArgument,
		401: errcode.PermissionDenied, 412: errcode.Aborted, 413: errcode.ResourceExhausted}
	wsCode := map[string]errcode.Code{"ok": errcode.OK, "invalid_data": errcode.InvalidArgument,
		"permission_denied": errcode.PermissionDenied, "datastale": errcode.Aborted, "too_big": errcode.ResourceExhausted}
	stale := "not-the-hash"

	transports := []struct {
		name string
		run  func(c rtdbCase, path string, data any) outcome
	}{
		{"in-process", func(c rtdbCase, path string, data any) outcome {
			who := identity.AdminIdentity()
			if c.alice {
				who = alice
			}
			var err error
			var got any
			switch c.op {
			case "set":
				_, err = db.Set(who, matrixNS, path, data, database.WriteOptions{})
			case "stale":
				_, err = db.Set(who, matrixNS, path, data, database.WriteOptions{IfHash: &stale})
			case "update":
				err = db.Update(who, matrixNS, path, data.(map[string]any), "")
			case "get":
				var r database.Read
				r, err = db.Get(who, matrixNS, path, nil, false)
				got = r.Value
			}
			var den *database.Denied
			var e *database.Error
			switch {
			case err == nil:
				b, _ := json.Marshal(got)
				return outcome{errcode.OK, "", string(b)}
			case errcode.Of(err) == errcode.Aborted: // the protocols' fixed text
				return outcome{errcode.Aborted, "", ""}
			case errors.As(err, &den):
				return outcome{errcode.Of(err), den.Message(), ""}
			case errors.As(err, &e):
				return outcome{errcode.Of(err), e.Msg, ""}
			}
			return outcome{errcode.Of(err), err.Error(), ""}
		}},
		{"REST", func(c rtdbCase, path string, data any) outcome {
			q := "?ns=" + matrixNS
			if c.alice {
				q += "&auth=" + url.QueryEscape(mockToken("alice"))
			}
			body, _ := json.Marshal(data)
			var r resp
			switch c.op {
			case "set":
				r = do(t, srv, "PUT", path+".json"+q, string(body))
			case "stale":
				r = do(t, srv, "PUT", path+".json"+q, string(body), "If-Match", stale)
			case "update":
				r = do(t, srv, "PATCH", path+".json"+q, string(body))
			case "get":
				r = do(t, srv, "GET", path+".json"+q, "")
			}
			code, ok := restCode[r.status]
			if !ok {
				t.Fatalf("REST %s %s: status %d %s", c.op, path, r.status, r.body)
			}
			if code == errcode.OK {
				if c.op != "get" {
					return outcome{code, "", "null"}
				}
				return outcome{code, "", compact(t, r.body)}
			}
			var e struct{ Error string }
			if json.Unmarshal([]byte(r.body), &e) != nil || e.Error == "" {
				if code == errcode.Aborted { // 412 answers with the current value
					return outcome{code, "", ""}
				}
				t.Fatalf("REST %s %s: %d without {\"error\"}: %s", c.op, path, r.status, r.body)
			}
			return outcome{code, e.Error, ""}
		}},
		{"WebSocket", func(c rtdbCase, path string, data any) outcome {
			cl := admin
			if c.alice {
				cl = user
			}
			var res map[string]any
			switch c.op {
			case "set":
				_, res = cl.call("p", map[string]any{"p": path, "d": data})
			case "stale":
				_, res = cl.call("p", map[string]any{"p": path, "d": data, "h": stale})
			case "update":
				_, res = cl.call("m", map[string]any{"p": path, "d": data})
			case "get":
				_, res = cl.call("g", map[string]any{"p": path, "q": map[string]any{}})
			}
			s, _ := res["s"].(string)
			code, ok := wsCode[s]
			if !ok {
				t.Fatalf("websocket %s %s: status %v", c.op, path, res)
			}
			if code == errcode.OK {
				if c.op != "get" {
					return outcome{code, "", "null"}
				}
				b, _ := json.Marshal(res["d"])
				return outcome{code, "", string(b)}
			}
			msg, _ := res["d"].(string)
			if code == errcode.Aborted { // the protocol's fixed text
				msg = ""
			}
			return outcome{code, msg, ""}
		}},
	}
	for _, c := range rtdbCases {
		t.Run(c.name, func(t *testing.T) {
			var first *outcome
			for i, tr := range transports {
				n := fmt.Sprint("tx", i)
				path := strings.ReplaceAll(c.path, "%s", n)
				var data any
				if c.data != "" {
					if err := json.Unmarshal([]byte(c.data), &data); err != nil {
						t.Fatal(err)
					}
				}
				got := tr.run(c, path, data)
				want, own := c.msg, false
				if w, ok := restWording[c.name]; ok && tr.name == "REST" {
					want, own = w, true
				}
				if got.code != c.code || !strings.Contains(got.msg, want) {
					t.Errorf("%s: %v %q, want %v containing %q", tr.name, got.code, got.msg, c.code, want)
				}
				if own && first != nil {
					got.msg = first.msg // its own words, compared above
				}
				if got.code == errcode.OK && c.op != "get" {
					// A write's data is what a read of it gives back, on
					// the engine (admin), whichever transport wrote it.
					r, err := db.Get(identity.AdminIdentity(), matrixNS, path, nil, false)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := json.Marshal(r.Value)
					got.data = string(b)
				}
				// Messages name the transport's own location; compare them
				// with its number taken out.
				norm := outcome{got.code, strings.ReplaceAll(got.msg, n, "#"), got.data}
				if first == nil {
					first = &norm
				} else if norm != *first {
					t.Errorf("%s: %+v differs from in-process %+v", tr.name, norm, *first)
				}
			}
		})
	}
}

// compact is a JSON text without insignificant space, keys sorted.
func compact(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
