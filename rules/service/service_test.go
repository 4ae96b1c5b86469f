package service

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

func TestCompile(t *testing.T) {
	ok := "rules_version = '2';\nservice cloud.firestore {\n  match /d/{id} { allow read: if undefinedFn(); }\n}\n"
	p, diags := Compile(source.NewFile("", ok), "firestore.rules", check.Options{Service: "cloud.firestore"}, nil)
	if p == nil || p.File.Name != "firestore.rules" || len(diags) == 0 {
		t.Fatalf("program %v, diags %v: want a program named firestore.rules with an undefined-function warning", p, diags)
	}
	bad := "rules_version = '2';\nservice cloud.firestore {\n  match /d/{id} { allow read: if ; }\n}\n"
	if p, diags := Compile(source.NewFile("x.rules", bad), "firestore.rules", check.Options{Service: "cloud.firestore"}, nil); p != nil || !diags.HasErrors() {
		t.Fatalf("a syntax error compiled: %v", diags)
	}
}

func TestAuthValue(t *testing.T) {
	if v, ok := AuthValue(nil, false); !ok || v != (value.Null{}) {
		t.Errorf("unauthenticated real request: %v %v, want null", v, ok)
	}
	if _, ok := AuthValue(nil, true); ok {
		t.Error("unauthenticated Test API request: auth is bound, want unbound")
	}
	v, ok := AuthValue(&Auth{UID: "u"}, false)
	m, isMap := value.AsMap(v)
	if !ok || !isMap || v.Type() != value.TMap || m["uid"] != value.String("u") || m["token"] == nil {
		t.Errorf("auth = %v, want uid and an empty token", value.Show(v))
	}
	v, _ = AuthValue(&Auth{Token: map[string]any{"admin": true}}, true)
	if uid, has := value.Field(v, "uid"); has {
		t.Errorf("auth.uid = %v, want no uid", uid)
	}
	if m, _ := value.AsMap(v); m["uid"] != nil || m["token"].(value.Map)["admin"] != value.Bool(true) {
		t.Errorf("auth = %v, want the token's claims and no uid", value.Show(v))
	}
}

func TestMocks(t *testing.T) {
	m := Mocks{}
	m.Get("a/1", value.Map{"x": value.Int(1)})
	m.Exists("a/1", true) // keeps the get mock's data
	m.Exists("a/2", false)
	notMocked := errors.New("not mocked")
	look := m.Lookup(notMocked)
	if d, ok, err := look("a/1"); err != nil || !ok || d["x"] != value.Int(1) {
		t.Errorf("a/1 = %v %v %v", d, ok, err)
	}
	if _, ok, err := look("a/2"); err != nil || ok {
		t.Errorf("a/2 exists=%v err=%v, want false", ok, err)
	}
	if _, _, err := look("a/3"); err != notMocked {
		t.Errorf("a/3 err = %v, want not mocked", err)
	}
	if MockPath("/databases/(default)/documents/users/alice") != "users/alice" {
		t.Error("absolute mock path not made relative")
	}
}

func TestCaseBasics(t *testing.T) {
	now := time.Unix(100, 0)
	m, tm, err := CaseBasics("GET", "allow", "", now)
	if err != nil || m != "get" || !tm.Equal(now) {
		t.Fatalf("%q %v %v", m, tm, err)
	}
	for _, c := range []struct{ method, exp, at, want string }{
		{"read", "", "", "method: \"read\" is a rules umbrella"},
		{"fetch", "", "", "method: \"fetch\" is not one of"},
		{"get", "maybe", "", "expectation: \"maybe\""},
		{"get", "", "yesterday", "requestTime: \"yesterday\""},
	} {
		if _, _, err := CaseBasics(c.method, c.exp, c.at, now); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c, err, c.want)
		}
	}
	if _, err := CaseAuth([]byte(`{"uid": "u", "token": {"n": 1}}`), nil); err != nil {
		t.Error(err)
	}
	if _, err := CaseAuth([]byte(`[1]`), nil); err == nil || !strings.HasPrefix(err.Error(), "auth:") {
		t.Errorf("auth as a list: %v", err)
	}
}
