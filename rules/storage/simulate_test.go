package storage

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

var update = flag.Bool("update", false, "rewrite golden files")

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSimulateGolden runs testdata/simulate.cases.json against
// testdata/storage.rules and compares the JSON and text reports with
// testdata/simulate.golden.*.
func TestSimulateGolden(t *testing.T) {
	t.Parallel()
	file := source.NewFile("storage.rules", readTestdata(t, "storage.rules"))
	rs, diags := Compile(file)
	if rs == nil {
		t.Fatal(diags)
	}
	in, err := ParseInput([]byte(`{"rules": "x", "testCases": ` + readTestdata(t, "simulate.cases.json") + `}`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rs.Simulate(in.TestCases, time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 9 || rep.Failed != 1 || rep.ExitCode() != 1 {
		t.Errorf("passed %d failed %d, want 9 and 1", rep.Passed, rep.Failed)
	}
	var js, text bytes.Buffer
	if err := sim.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	sim.WriteText(&text, file, rep)
	for name, got := range map[string][]byte{"simulate.golden.json": js.Bytes(), "simulate.golden.txt": text.Bytes()} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs (run with -update after checking):\n%s", path, got)
		}
	}
}

func TestParseInput(t *testing.T) {
	t.Parallel()
	in, err := ParseInput([]byte(`{"rules": "service firebase.storage {}", "testCases": [{"method": "get", "path": "a", "existingResource": {"size": 12345678901234}}]}`))
	if err != nil || in.Source != "service firebase.storage {}" || len(in.TestCases) != 1 {
		t.Fatalf("rules alias: %+v, %v", in, err)
	}
	for _, bad := range []string{`{`, `{"source": "x"}`, `[]`} {
		if _, err := ParseInput([]byte(bad)); err == nil {
			t.Errorf("ParseInput(%s): want an error", bad)
		}
	}
}

func TestCaseRequest(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	decodeCase := func(s string) Case {
		var c Case
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("valid", func(t *testing.T) {
		c := decodeCase(`{"method": "UPDATE", "path": "/b/photos/o/a/b.png",
			"auth": {"uid": "u", "token": {"n": 1}},
			"resource": {"size": 1, "contentType": "image/png", "metadata": {"k": "v"}, "generation": "1700000000000001", "cacheControl": "no-cache"},
			"existingResource": {"size": 2, "name": "a/b.png", "bucket": "photos", "timeCreated": "2026-01-01T00:00:00.5Z", "updated": "2026-01-02T00:00:00Z", "metageneration": 3, "md5Hash": "x", "crc32c": "y", "etag": "z"},
			"requestTime": "2026-02-03T04:05:06.789Z",
			"functionMocks": [{"function": "get", "path": "a/b", "result": {"x": 1}}, {"function": "firestore.exists", "path": "c/d", "result": false}]}`)
		req, err := c.Request(now)
		if err != nil {
			t.Fatal(err)
		}
		if req.Method != Update || req.Bucket != "photos" || req.Path != "a/b.png" || !req.TestAPI {
			t.Errorf("request: %+v", req)
		}
		if req.Incoming.Generation != 1700000000000001 || req.Incoming.Metadata["k"] != "v" || req.Incoming.CacheControl != "no-cache" {
			t.Errorf("incoming: %+v", req.Incoming)
		}
		if r := req.Resource; r.Name != "a/b.png" || r.Bucket != "photos" || r.Metageneration != 3 || r.TimeCreated.Nanosecond() != 5e8 || r.Updated.Day() != 2 || r.ETag != "z" {
			t.Errorf("resource: %+v", r)
		}
		if !req.Time.Equal(time.Date(2026, 2, 3, 4, 5, 6, 789e6, time.UTC)) || req.Auth.UID != "u" {
			t.Errorf("time %v auth %+v", req.Time, req.Auth)
		}
		if d, ok, err := req.Firestore.Lookup("a/b"); !ok || err != nil || d["x"] == nil {
			t.Errorf("get mock: %v %v %v", d, ok, err)
		}
		if _, ok, err := req.Firestore.Lookup("c/d"); ok || err != nil {
			t.Errorf("exists mock: %v %v", ok, err)
		}
		if _, _, err := req.Firestore.Lookup("e/f"); err != ErrNotMocked {
			t.Errorf("unmocked: %v", err)
		}
	})
	bad := []struct{ name, json, want string }{
		{"umbrella method", `{"method": "read", "path": "a"}`, `method: "read" is a rules umbrella`},
		{"unknown method", `{"method": "patch", "path": "a"}`, `method: "patch" is not one of`},
		{"missing path", `{"method": "get"}`, `path: missing`},
		{"bad expectation", `{"method": "get", "path": "a", "expectation": "MAYBE"}`, `expectation: "MAYBE"`},
		{"bad time", `{"method": "get", "path": "a", "requestTime": "yesterday"}`, `requestTime: "yesterday" is not ISO-8601`},
		{"bucket conflict", `{"method": "get", "path": "/b/x/o/a", "bucket": "y"}`, `path: names bucket "x" but bucket is "y"`},
		{"timeUpdated", `{"method": "get", "path": "a", "existingResource": {"size": 1, "timeUpdated": "2026-01-01T00:00:00Z"}}`, `existingResource.timeUpdated: not a property of a Storage object: the last-update time is updated`},
		{"unknown field", `{"method": "get", "path": "a", "existingResource": {"sizee": 1}}`, `existingResource.sizee: not a property of a Storage object (known: name, bucket, size`},
		{"fractional size", `{"method": "create", "path": "a", "resource": {"size": 1.5}}`, `resource.size: must be an integer`},
		{"numeric metadata", `{"method": "create", "path": "a", "resource": {"size": 1, "metadata": {"n": 1}}}`, `resource.metadata: custom metadata is an object of string values`},
		{"bad timestamp", `{"method": "get", "path": "a", "existingResource": {"size": 1, "timeCreated": "2026"}}`, `existingResource.timeCreated: "2026" is not ISO-8601`},
		{"not an object", `{"method": "get", "path": "a", "existingResource": 5}`, `existingResource.json: must be an object`},
		{"bad auth", `{"method": "get", "path": "a", "auth": "alice"}`, `auth: must be {uid, token?}`},
		{"bad mock function", `{"method": "get", "path": "a", "functionMocks": [{"function": "getAfter", "path": "a/b", "result": {}}]}`, `functionMocks[0].function: "getAfter" is not firestore.get or firestore.exists`},
		{"bad exists mock", `{"method": "get", "path": "a", "functionMocks": [{"function": "exists", "path": "a/b", "result": {}}]}`, `functionMocks[0].result: a firestore.exists mock's result must be true or false`},
		{"bad get mock", `{"method": "get", "path": "a", "functionMocks": [{"function": "get", "path": "a/b", "result": true}]}`, `functionMocks[0].result: a firestore.get mock's result is the document's data`},
		{"mock without path", `{"method": "get", "path": "a", "functionMocks": [{"function": "get", "result": {}}]}`, `functionMocks[0].path: missing`},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			c := decodeCase(b.json)
			_, err := c.Request(now)
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Errorf("got %v, want an error containing %q", err, b.want)
			}
		})
	}
	// Simulate names the failing case.
	rs := mustCompile(t, cond("read", "true"))
	_, err := rs.Simulate([]Case{{Method: "get", Path: "a"}, {Method: "get"}}, now)
	if err == nil || !strings.HasPrefix(err.Error(), "testCases[1].path: missing") {
		t.Errorf("Simulate: %v", err)
	}
}

// TestSimulateRulesTestAPIShape reads the hosted Rules Test API's shape:
// /b/<bucket>/o/<path>, request.resource, resource and firestore mocks.
func TestSimulateRulesTestAPIShape(t *testing.T) {
	in, err := ParseInput([]byte(`{"source": {"files": [{"name": "storage.rules", "content": "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    match /u/{uid}/{f} {\n      allow read: if request.auth.uid == uid || firestore.get(/databases/(default)/documents/admins/$(request.auth.uid)).data.on == true;\n      allow write: if request.resource.size < 100 && bucket == 'bk';\n    }\n  }\n}"}]},
	 "testSuite": {"testCases": [
	  {"expectation": "ALLOW", "request": {"auth": {"uid": "a"}, "method": "get", "path": "/b/bk/o/u/a/x.png"}, "resource": {"name": "u/a/x.png", "size": 3}},
	  {"expectation": "ALLOW", "request": {"auth": {"uid": "root"}, "method": "get", "path": "/b/bk/o/u%2Fa%2Fx.png"}, "resource": {"name": "u/a/x.png", "size": 3},
	   "functionMocks": [{"function": "firestore.get", "args": [{"exactValue": "/databases/(default)/documents/admins/root"}], "result": {"value": {"data": {"on": true}}}}]},
	  {"expectation": "DENY", "request": {"auth": {"uid": "a"}, "method": "create", "path": "/b/bk/o/u/a/y.png", "resource": {"name": "u/a/y.png", "size": 500}}}
	 ]}}`))
	if err != nil {
		t.Fatal(err)
	}
	rs, diags := Compile(source.NewFile(in.Name, in.Source))
	if rs == nil {
		t.Fatal(diags)
	}
	rep, err := rs.Simulate(in.TestCases, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 3 {
		for _, c := range rep.Results {
			t.Logf("%s: %s %v", c.Description, c.Decision, c.Notes)
		}
		t.Fatalf("%d of 3 passed", rep.Passed)
	}
}
