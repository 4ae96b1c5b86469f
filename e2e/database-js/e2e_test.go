// Package databasejs drives Pyric's Realtime Database with the official
// Firebase JavaScript SDK (firebase@12.19.0 in Node, over the websocket
// protocol) and firebase-admin-go's db package (over REST), against the
// engine and its wire handler served on 127.0.0.1. The Node tests skip
// when e2e/js/node_modules is absent and fail under PYRIC_E2E_REQUIRED=1.
package databasejs

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
	server "github.com/pyric/pyric/server/database"
)

const rules = `{
  "rules": {
    "public": {".read": true, ".write": true,
      "scores": {".indexOn": ["score"]}},
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
    "presence": {"$uid": {".read": true, ".write": "auth != null && auth.uid === $uid"}},
    "counter": {".read": "auth != null", ".write": "auth != null", ".validate": "newData.isNumber()"},
    "acl": {".read": true, ".write": "auth != null"},
    "docs": {"$d": {".read": "root.child('acl').child($d).child(auth.uid).val() === true"}}
  }
}`

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// serve starts the database on 127.0.0.1 and returns host:port.
func serve(t testing.TB, project, rules string) (string, *database.Database) {
	t.Helper()
	db, err := database.New(service.Env{Project: project}, database.Options{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewHandler(db, server.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requested.Store(r.Host+r.URL.Path, true)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), db
}

// requested records host+path of every request served (the browser tests
// check which transport the SDK used).
var requested sync.Map

type step = e2etest.Step

func runScript(t *testing.T, timeout time.Duration, script string, env ...string) []step {
	t.Helper()
	return e2etest.RunSteps(t, timeout, here(), script, env...)
}

// check verifies every step passed and, for the steps in want, returned
// that JSON value; every step of want must have run.
func check(t *testing.T, steps []step, want map[string]string) {
	t.Helper()
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: want})
}

var nodeWant = map[string]string{
	"set and get":                         `{"n":1,"name":"Alice"}`,
	"get absent":                          `[false,null]`,
	"arrays round-trip":                   `[[1,2,3],2]`,
	"server timestamp and increment":      `["number",true,5]`,
	"multi-path update":                   `{"a":1,"b":{"c":2}}`,
	"push":                                `[20,"-",1]`,
	"nulls and empty objects pruned":      `{"d":1}`,
	"onValue: initial, changes only":      `[null,{"x":1},{"x":2}]`,
	"child events with previousChildName": `[["added","a",1,null],["added","b",2,"a"],["added","c",3,"b"],["added","d",4,"c"],["changed","b",20,"a"],["removed","a",1]]`,
	"query orderByChild limitToFirst":     `["b","c"]`,
	"query cursors":                       `{"startAt":["c","a","d"],"startAfter":["a","d"],"endAt":["b","c"],"endBefore":["b"],"equalTo":["a"],"limitToLast":["a","d"],"byKey":["b","c"]}`,
	"orderByKey integer keys first":       `["1","2","10","a","b"]`,
	"orderByValue without an index is rejected as production does": `"Index not defined, add \".indexOn\": \".value\", for path \"/public/vals\", to the rules"`,
	"orderByValue without an index, listened to":                   `["w","y","x"]`,
	"live query window moves":                                      `[["added","b",null],["added","c","b"],["removed","c"],["added","e",null],["removed","e"],["added","c","b"]]`,
	"child_moved under an ordered query":                           `[["b","a"]]`,
	"priorities":                                                   `[[["b",1],["c",2],["a",3]],{".value":"A",".priority":3}]`,
	"transaction":                                                  `[true,1]`,
	"transaction abort":                                            `[false,1]`,
	"contended transactions from two clients":                      `[40,true]`,
	// Production's wording first, then why: the failing sub-expression
	// with its values.
	"denied write":                      `["PERMISSION_DENIED","PERMISSION_DENIED: Permission denied\nauth.uid === $uid → 'alice' === 'bob' is false"]`,
	"denied read":                       `"Permission denied\nauth != null → null != null is false"`,
	"denied listen cancels":             `"permission_denied at /users/alice"`,
	"denied transaction":                `"permission_denied"`,
	"denied update writes nothing":      `["PERMISSION_DENIED",null]`,
	"onDisconnect on abrupt disconnect": `["online","offline"]`,
	"onDisconnect cancel":               `"online"`,
}

// TestNodeSDK runs the Node build of the JS SDK over the websocket.
func TestNodeSDK(t *testing.T) {
	e2etest.NeedNode(t)
	addr, _ := serve(t, "demo-rtdb", rules)
	steps := runScript(t, 3*time.Minute, "node_sdk.cjs", "DB="+addr, "NS=demo-rtdb-default-rtdb")
	check(t, steps, nodeWant)
}

// TestRulesUnitTesting runs @firebase/rules-unit-testing@5.0.2 with
// database rules.
func TestRulesUnitTesting(t *testing.T) {
	e2etest.NeedNode(t)
	addr, _ := serve(t, "demo-rut", "")
	steps := runScript(t, 2*time.Minute, "rut.cjs", "DB="+addr)
	check(t, steps, map[string]string{
		"own write succeeds":              `true`,
		"other write fails":               `true`,
		"validate fails":                  `true`,
		"anonymous read fails":            `true`,
		"public write fails":              `true`,
		"withSecurityRulesDisabled seeds": `"seeded"`,
		"clearDatabase":                   `[null,null]`,
	})
}

// TestBrowser runs the browser build of the JS SDK in headless Chromium,
// over the browser's WebSocket.
func TestBrowser(t *testing.T) { browser(t, false) }

// TestBrowserLongPolling is the same over the long-polling transport
// (forceLongPolling: JSONP scripts in a hidden iframe).
func TestBrowserLongPolling(t *testing.T) { browser(t, true) }

// TestBrowserUpgrade starts the SDK on long polling, as after an earlier
// websocket that closed early (the localStorage flag), and checks that it
// moves the session onto a websocket (/.ws?s=) and runs the whole
// scenario there.
func TestBrowserUpgrade(t *testing.T) { browserMode(t, "upgrade") }

func browser(t *testing.T, longPolling bool) {
	mode := "websocket"
	if longPolling {
		mode = "long polling"
	}
	browserMode(t, mode)
}

func browserMode(t *testing.T, mode string) {
	bin := e2etest.Chromium(t)
	addr, _ := serve(t, "demo-browser", rules)
	env := []string{"DB=" + addr, "NS=demo-browser-default-rtdb", "CHROMIUM=" + bin}
	switch mode {
	case "long polling":
		env = append(env, "LONG_POLLING=1")
	case "upgrade":
		env = append(env, "UPGRADE=1")
	}
	steps := runScript(t, 3*time.Minute, "browser.cjs", env...)
	_, lp := requested.Load(addr + "/.lp")
	_, ws := requested.Load(addr + "/.ws")
	switch {
	case mode == "websocket" && !ws:
		t.Errorf("the SDK never requested /.ws")
	case mode == "long polling" && (!lp || ws):
		t.Errorf("forceLongPolling: /.lp requested %v, /.ws requested %v", lp, ws)
	case mode == "upgrade" && (!lp || !ws):
		t.Errorf("upgrade: /.lp requested %v, /.ws requested %v; want both", lp, ws)
	}
	want := map[string]string{
		"set and get":                                   `["Alice","number"]`,
		"onValue sees another client":                   `[null,"hi"]`,
		"query window":                                  `["b","c"]`,
		"contended transactions":                        `20`,
		"denied write":                                  `"PERMISSION_DENIED"`,
		"onDisconnect when the socket closes":           `"offline"`,
		"a listen the rules stop allowing is cancelled": `[[null],"permission_denied at /docs/d1"]`,
	}
	if mode == "upgrade" {
		want["the session moved to the websocket"] = `{"flag":null,"writeUnderASecond":true}`
	}
	check(t, steps, want)
}

const revokeRules = `{
  "rules": {
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
    "acl": {".read": true, ".write": "auth.uid === 'setup'"},
    "docs": {"$d": {".read": "root.child('acl').child($d).child(auth.uid).val() === true", ".write": "auth.uid === 'setup'"}},
    "capped": {".read": "query.orderByKey && query.limitToFirst <= 2", ".write": "auth.uid === 'setup'"},
    "public": {".read": true, ".write": true}
  }
}`

// TestNodeRevocation runs the JS SDK in Node through listen revocation
// (sign-out through Pyric's Auth endpoint, a write to data the read rule
// reads), query.* rules, the listen hash on a reconnect and the "ac" push
// of a token that expires while in use.
// conformance: database.rules.revocation, database.listen.hash, database.rules.query
func TestNodeRevocation(t *testing.T) {
	e2etest.NeedNode(t)
	addr, _ := serve(t, "demo-revoke", revokeRules)
	authSrv := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: "demo-revoke"})
	steps := runScript(t, 3*time.Minute, "node_revoke.cjs", "DB="+addr, "NS=demo-revoke-default-rtdb", "AUTH_URL="+authSrv.URL)
	check(t, steps, map[string]string{
		"sign-out revokes a listen":                        `[[{"n":1}],"permission_denied at /users/UID"]`,
		"a write to data the rule reads revokes a listen":  `[[{"title":"x"},{"title":"y"}],"permission_denied at /docs/d1"]`,
		"a revoked query listen is cancelled by its query": `[[{"a":1}],"permission_denied at /docs/d3",{"p":"/docs/d3","q":[{"i":".key","l":1,"vf":"l"}],"s":"permission_denied"}]`,
		"query rules": `[["a","b"],"Permission denied\nquery.limitToFirst <= 2 → 3 <= 2 is false","Permission denied\nquery.orderByKey is false","permission_denied at /capped"]`,
		"a reconnect re-listens with the hash and gets no data again":     `[true,0,2,2]`,
		"a token expiring in use gets the ac push and the SDK reconnects": `[{"d":"Auth token is expired.","s":"expired_token"},null,[null,"after"]]`,
	})
}
