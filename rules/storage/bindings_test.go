package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

func mustCompile(t testing.TB, src string) *Ruleset {
	t.Helper()
	rs, diags := Compile(source.NewFile("storage.rules", src))
	if rs == nil {
		t.Fatalf("does not compile:\n%v", diags)
	}
	return rs
}

// cond wraps one allow condition in a ruleset matching every object.
func cond(methods, c string) string {
	return `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{allPaths=**} {
      allow ` + methods + `: if ` + c + `;
    }
  }
}`
}

var (
	t0      = time.Date(2026, 7, 21, 0, 0, 0, 0, time.UTC)
	alice   = &Auth{UID: "alice", Token: map[string]any{"role": "editor"}}
	stored  = &Object{Name: "uploads/a.png", Bucket: DefaultBucket, Size: 2048, ContentType: "image/png", Metadata: map[string]string{"owner": "alice"}, TimeCreated: t0, Updated: t0.Add(30 * time.Second), Generation: 1753056000000000, Metageneration: 2, MD5Hash: "XrY7u+Ae7tCTyyK7j1rNww==", CRC32C: "yZRlqg==", ETag: "CJjk0s6Q"}
	payload = &Object{Name: "uploads/a.png", Bucket: DefaultBucket, Size: 1024, ContentType: "image/png", Metadata: map[string]string{"owner": "alice", "purpose": "avatar"}}
)

type bindingCase struct {
	name    string
	rule    string // the allow condition
	methods string // the allow's methods; "write" when empty for writes, "read" for reads
	req     Request
	want    sim.Outcome
	note    string // a note the decision must carry, if set
}

func runBindingCases(t *testing.T, cases []bindingCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			methods := tc.methods
			if methods == "" {
				methods = "read, write"
			}
			rs := mustCompile(t, cond(methods, tc.rule))
			req := tc.req
			if req.Time.IsZero() {
				req.Time = t0.Add(time.Minute)
			}
			if req.Path == "" {
				req.Path = "uploads/a.png"
			}
			d := rs.Decide(&req)
			if d.Outcome != tc.want {
				t.Fatalf("%s: got %s, want %s\n  notes: %q\n  trace: %+v", tc.rule, d.Outcome, tc.want, d.Notes, d.Trace)
			}
			if tc.note != "" && !contains(d.Notes, tc.note) {
				t.Fatalf("%s: want note %q, got %q", tc.rule, tc.note, d.Notes)
			}
		})
	}
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	upd := func(o *Object) Request {
		return Request{Method: Update, Auth: alice, Resource: stored, Incoming: o}
	}
	noMeta := &Object{Size: 1}
	runBindingCases(t, []bindingCase{
		{name: "dotted", rule: "resource.metadata.owner == request.auth.uid", req: upd(payload), want: sim.Allow},
		{name: "bracket", rule: "resource.metadata['owner'] == request.auth.uid", req: upd(payload), want: sim.Allow},
		{name: "missing key errors", rule: "request.resource.metadata.missing == null", req: upd(payload), want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Property missing is undefined on object."},
		{name: "missing key survives negation", rule: "!(request.resource.metadata.missing == 'x')", req: upd(payload), want: sim.Deny},
		{name: "get with default", rule: "request.resource.metadata.get('missing', 'none') == 'none'", req: upd(payload), want: sim.Allow},
		{name: "keys hasAll", rule: "request.resource.metadata.keys().hasAll(['owner', 'purpose'])", req: upd(payload), want: sim.Allow},
		{name: "keys hasOnly", rule: "request.resource.metadata.keys().hasOnly(['owner'])", req: upd(payload), want: sim.Deny},
		{name: "metadata is map", rule: "request.resource.metadata is map && request.resource.metadata.size() == 2", req: upd(payload), want: sim.Allow},
		{name: "unchanged owner", rule: "request.resource.metadata.owner == resource.metadata.owner", req: upd(payload), want: sim.Allow},
		{name: "real request: absent metadata is empty", rule: "request.resource.metadata.size() == 0", req: upd(noMeta), want: sim.Allow},
		{name: "test API: absent metadata is undefined", rule: "request.resource.metadata.size() == 0",
			req: Request{Method: Update, Auth: alice, Resource: stored, Incoming: noMeta, TestAPI: true}, want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Property metadata is undefined on object."},
	})
}

func TestSizeAndContentType(t *testing.T) {
	t.Parallel()
	create := func(size int64, ct string) Request {
		return Request{Method: Create, Auth: alice, Incoming: &Object{Size: size, ContentType: ct}}
	}
	const lim = "request.resource.size < 5 * 1024 * 1024"
	runBindingCases(t, []bindingCase{
		{name: "under limit", rule: lim, req: create(5*1024*1024-1, "image/png"), want: sim.Allow},
		{name: "at limit", rule: lim, req: create(5*1024*1024, "image/png"), want: sim.Deny},
		{name: "inclusive bounds low", rule: "request.resource.size >= 1 && request.resource.size <= 10", req: create(1, ""), want: sim.Allow},
		{name: "zero bytes", rule: "request.resource.size >= 1", req: create(0, ""), want: sim.Deny},
		{name: "size is int", rule: "request.resource.size is int && !(request.resource.size is float)", req: create(3, ""), want: sim.Allow},
		{name: "size compares with float", rule: "request.resource.size < 1500.0", req: create(1024, ""), want: sim.Allow},
		{name: "content type regex", rule: "request.resource.contentType.matches('image/.*')", req: create(1, "image/jpeg"), want: sim.Allow},
		{name: "regex is anchored", rule: "request.resource.contentType.matches('image')", req: create(1, "image/jpeg"), want: sim.Deny},
		{name: "parameters defeat exact match", rule: "request.resource.contentType == 'image/png'", req: create(1, "image/png; charset=binary"), want: sim.Deny},
		{name: "case matters", rule: "request.resource.contentType == 'image/png'", req: create(1, "IMAGE/PNG"), want: sim.Deny},
		{name: "lower() normalises", rule: "request.resource.contentType.lower() == 'image/png'", req: create(1, "IMAGE/PNG"), want: sim.Allow},
		{name: "absent content type errors", rule: "request.resource.contentType != 'text/html'", req: create(1, ""), want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Property contentType is undefined on object."},
		{name: "size in MB with let-free arithmetic", rule: "request.resource.size / 1024 / 1024 < 2", req: create(3*1024*1024-1, ""), want: sim.Deny},
	})
}

func TestTimestampsAndGenerations(t *testing.T) {
	t.Parallel()
	del := func(at time.Time, o *Object) Request {
		return Request{Method: Delete, Auth: alice, Resource: o, Time: at}
	}
	const within = "request.time < resource.timeCreated + duration.value(60, 's')"
	runBindingCases(t, []bindingCase{
		{name: "just inside window", rule: within, req: del(t0.Add(59999*time.Millisecond), stored), want: sim.Allow},
		{name: "window edge is exclusive", rule: within, req: del(t0.Add(time.Minute), stored), want: sim.Deny},
		{name: "updated window", rule: "request.time < resource.updated + duration.value(1, 'h')", req: del(t0.Add(time.Hour), stored), want: sim.Allow},
		{name: "timeCreated is a timestamp", rule: "resource.timeCreated is timestamp && resource.updated > resource.timeCreated", req: del(t0, stored), want: sim.Allow},
		{name: "immutability idiom", rule: "resource.timeCreated == resource.updated", req: del(t0, stored), want: sim.Deny},
		{name: "timestamp.date", rule: "request.time >= timestamp.date(2026, 7, 21)", req: del(t0, stored), want: sim.Allow},
		{name: "timestamp.value millis", rule: "resource.timeCreated == timestamp.value(" + fmt.Sprint(t0.UnixMilli()) + ")", req: del(t0, stored), want: sim.Allow},
		{name: "time minus time is a duration", rule: "request.time - resource.timeCreated == duration.value(90, 's')", req: del(t0.Add(90*time.Second), stored), want: sim.Allow},
		{name: "int is not a timestamp", rule: "request.time > 0", req: del(t0, stored), want: sim.Deny,
			note: "Error: storage.rules line [5], column [42]. Unsupported operation error. Received: timestamp > int. Expected: string > string, bytes > bytes, int > int, float > float, duration > duration, timestamp > timestamp, constraint > any, any > constraint."},
		{name: "no timeUpdated property", rule: "resource.timeUpdated != null", req: del(t0, stored), want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Property timeUpdated is undefined on object."},
		{name: "generation is an int", rule: "resource.generation == 1753056000000000 && resource.generation is int", req: del(t0, stored), want: sim.Allow},
		{name: "metageneration", rule: "resource.metageneration == 2", req: del(t0, stored), want: sim.Allow},
		{name: "absent generation errors", rule: "resource.generation == 0", req: del(t0, &Object{Size: 1}), want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Property generation is undefined on object."},
		{name: "hashes and etag", rule: "resource.md5Hash == 'XrY7u+Ae7tCTyyK7j1rNww==' && resource.crc32c == 'yZRlqg==' && resource.etag == 'CJjk0s6Q'", req: del(t0, stored), want: sim.Allow},
	})
}

func TestRequestBindings(t *testing.T) {
	t.Parallel()
	runBindingCases(t, []bindingCase{
		{name: "name is the full path", rule: "resource.name == 'uploads/a.png' && resource.bucket == bucket", req: Request{Method: Get, Resource: stored}, want: sim.Allow},
		{name: "bucket wildcard", rule: "bucket == 'photos.appspot.com'", req: Request{Method: Get, Bucket: "photos.appspot.com"}, want: sim.Allow},
		{name: "default bucket", rule: "bucket == '" + DefaultBucket + "'", req: Request{Method: Get}, want: sim.Allow},
		{name: "recursive wildcard is a path", rule: "allPaths == path('uploads/a.png') && allPaths[1] == 'a.png'", req: Request{Method: Get}, want: sim.Allow},
		{name: "request.path", rule: "request.path == /b/$(bucket)/o/uploads/a.png", req: Request{Method: Get}, want: sim.Allow},
		{name: "request.method", rule: "request.method == 'list'", req: Request{Method: List, Path: "uploads"}, want: sim.Allow},
		{name: "auth claims", rule: "request.auth.token.role == 'editor'", req: Request{Method: Get, Auth: alice}, want: sim.Allow},
		{name: "real: unauthenticated auth is null", rule: "request.auth == null", req: Request{Method: Get}, want: sim.Allow},
		{name: "test API: unauthenticated auth is undefined", rule: "request.auth == null", req: Request{Method: Get, TestAPI: true}, want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Property auth is undefined on object."},
		{name: "real: create-if-absent", rule: "resource == null", req: Request{Method: Create, Incoming: payload}, want: sim.Allow},
		{name: "test API: create-if-absent never allows", rule: "resource == null", req: Request{Method: Create, Incoming: payload, TestAPI: true}, want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Null value error."},
		{name: "test API: hint on resource == null", rule: "request.auth != null && resource == null", req: Request{Method: Create, Auth: alice, Incoming: payload, TestAPI: true}, want: sim.Deny,
			note: hintResource},
		{name: "test API: hint on request.auth", rule: "request.auth == null", req: Request{Method: Get, TestAPI: true}, want: sim.Deny, note: hintAuth},
		{name: "test API: hint on request.resource", rule: "request.resource == null", req: Request{Method: Delete, TestAPI: true}, want: sim.Deny, note: hintIncoming},
		{name: "real: request.resource is null on delete", rule: "request.resource == null", req: Request{Method: Delete, Resource: stored}, want: sim.Allow},
		{name: "test API: request.resource is undefined on delete", rule: "request.resource == null", req: Request{Method: Delete, Resource: stored, TestAPI: true}, want: sim.Deny},
		{name: "real: null object property", rule: "resource.size > 0", req: Request{Method: Create, Incoming: payload}, want: sim.Deny,
			note: "Error: storage.rules line [5], column [29]. Null value error."},
		{name: "error absorbed by or", rule: "resource.size > 0 || request.auth.uid == 'alice'", req: Request{Method: Create, Incoming: payload, Auth: alice}, want: sim.Allow},
		{name: "error in ternary condition", rule: "(1 / 0 == 0) ? true : true", req: Request{Method: Get}, want: sim.Deny,
			note: "Error: storage.rules line [5], column [32]. Divide by zero error."},
	})
}

func TestUmbrellas(t *testing.T) {
	t.Parallel()
	methods := []string{Get, List, Create, Update, Delete}
	grants := map[string][]string{
		"read":           {Get, List},
		"write":          {Create, Update, Delete},
		"get":            {Get},
		"list":           {List},
		"create":         {Create},
		"update":         {Update},
		"delete":         {Delete},
		"get, delete":    {Get, Delete},
		"read, create":   {Get, List, Create},
		"write, get":     {Create, Update, Delete, Get},
		"create, update": {Create, Update},
	}
	for grant, allowed := range grants {
		rs := mustCompile(t, cond(grant, "true"))
		for _, m := range methods {
			want := sim.Deny
			for _, a := range allowed {
				if a == m {
					want = sim.Allow
				}
			}
			for _, testAPI := range []bool{false, true} {
				d := rs.Decide(&Request{Method: m, Path: "x/y", Incoming: payload, Resource: stored, TestAPI: testAPI})
				if d.Outcome != want {
					t.Errorf("allow %s, request %s (testAPI=%v): got %s, want %s", grant, m, testAPI, d.Outcome, want)
				}
				if want == sim.Deny && !contains(d.Notes, "No allow rules found for operation '"+m+"'") {
					t.Errorf("allow %s, request %s: missing 'no allow rules' note in %q", grant, m, d.Notes)
				}
			}
		}
	}
}

func TestMatching(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file} {
      function owner() { return request.auth.uid == uid; }
      allow read, write: if owner();
    }
    match /public/{all=**} {
      allow read;
    }
  }
}`)
	cases := []struct {
		path string
		auth *Auth
		want sim.Outcome
		note string
	}{
		{"users/alice/a.png", alice, sim.Allow, "Allowed by match block '/b/{bucket}/o/users/{uid}/{file}'"},
		{"users/bob/a.png", alice, sim.Deny, ""},
		{"users/alice/deeper/a.png", alice, sim.Deny, "No match block found for path '/b/" + DefaultBucket + "/o/users/alice/deeper/a.png'"},
		{"users/alice", alice, sim.Deny, "No match block found for path '/b/" + DefaultBucket + "/o/users/alice'"},
		{"public", nil, sim.Allow, ""},
		{"public/a/b/c.txt", nil, sim.Allow, ""},
		{"/public/x/", nil, sim.Allow, ""},
		{"private/x", nil, sim.Deny, ""},
	}
	for _, c := range cases {
		d := rs.Decide(&Request{Method: Get, Path: c.path, Auth: c.auth, Time: t0})
		if d.Outcome != c.want {
			t.Errorf("%s: got %s, want %s (%q)", c.path, d.Outcome, c.want, d.Notes)
		}
		if c.note != "" && !contains(d.Notes, c.note) {
			t.Errorf("%s: want note %q, got %q", c.path, c.note, d.Notes)
		}
	}
}

// countingLookup counts how often each document is fetched.
type countingLookup struct {
	docs  map[string]value.Map
	calls map[string]int
}

func (c *countingLookup) Lookup(path string) (value.Map, bool, error) {
	c.calls[path]++
	if path == "broken/doc" {
		return nil, false, errors.New("backend unavailable")
	}
	d, ok := c.docs[path]
	return d, ok, nil
}

func newCounting() *countingLookup {
	return &countingLookup{calls: map[string]int{}, docs: map[string]value.Map{
		"users/alice": {"role": value.String("admin"), "plan": value.String("pro")},
		"cfg/site":    {"open": value.Bool(true)},
		"cfg/other":   {"open": value.Bool(false)},
	}}
}

func TestFirestoreLookups(t *testing.T) {
	t.Parallel()
	const doc = "/databases/(default)/documents/"
	cases := []struct {
		name    string
		rule    string
		testAPI bool
		want    sim.Outcome
		lookups int
		note    string
	}{
		{name: "get data", rule: "firestore.get(" + doc + "users/$(request.auth.uid)).data.role == 'admin'", want: sim.Allow, lookups: 1},
		{name: "real get carries id and name", rule: "firestore.get(" + doc + "users/alice).id == 'alice' && firestore.get(" + doc + "users/alice).__name__ == " + doc + "users/alice", want: sim.Allow, lookups: 1},
		{name: "exists", rule: "firestore.exists(" + doc + "cfg/site) && !firestore.exists(" + doc + "cfg/missing)", want: sim.Allow, lookups: 2},
		{name: "repeated path is cached", rule: "firestore.get(" + doc + "users/alice).data.role == 'admin' && firestore.get(" + doc + "users/alice).data.plan == 'pro' && firestore.exists(" + doc + "users/alice) && firestore.get(" + doc + "cfg/site).data.open", want: sim.Allow, lookups: 2},
		{name: "third distinct document denies", rule: "firestore.exists(" + doc + "users/alice) && firestore.exists(" + doc + "cfg/site) && firestore.exists(" + doc + "cfg/other)", want: sim.Deny, lookups: 2,
			note: "Error: storage.rules line [5], column [157]. Exceeded the maximum of 2 distinct Firestore documents (firestore.get, firestore.exists) for this request."},
		{name: "budget spans rules", rule: "firestore.exists(" + doc + "users/alice) && firestore.get(" + doc + "cfg/other).data.open || firestore.exists(" + doc + "cfg/site)", want: sim.Deny, lookups: 2},
		{name: "untaken branch reads nothing", rule: "request.auth == null ? firestore.exists(" + doc + "cfg/site) : true", want: sim.Allow, lookups: 0},
		{name: "test API allows a third mocked document, with a note", rule: "firestore.exists(" + doc + "users/alice) && firestore.exists(" + doc + "cfg/site) && firestore.exists(" + doc + "cfg/other)", testAPI: true, want: sim.Allow, lookups: 3,
			note: "This evaluation read 3 distinct Firestore documents; a real Storage request may read at most 2 and would be denied."},
		{name: "test API get has data only", rule: "firestore.get(" + doc + "users/alice).id == 'alice'", testAPI: true, want: sim.Deny, lookups: 1,
			note: "Error: storage.rules line [5], column [22]. Property id is undefined on object."},
		{name: "missing document errors", rule: "firestore.get(" + doc + "cfg/missing).data.open", want: sim.Deny, lookups: 1,
			note: "Error: storage.rules line [5], column [32]. Service call error. Function: [firestore.get], Argument: [path_value /databases/(default)/documents/cfg/missing]."},
		{name: "test API unmocked document", rule: "firestore.get(" + doc + "cfg/missing).data.open", testAPI: true, want: sim.Deny, lookups: 1,
			note: "Error: storage.rules line [5], column [32]. Function not found error: Name: [firestore.get]."},
		{name: "lookup failure denies", rule: "firestore.exists(" + doc + "broken/doc) || true", want: sim.Allow, lookups: 1},
		{name: "only the default database", rule: "firestore.exists(/databases/other/documents/cfg/site)", want: sim.Deny, lookups: 0},
		{name: "a collection is not a document", rule: "firestore.exists(" + doc + "cfg)", want: sim.Deny, lookups: 0},
		{name: "a string is not a path", rule: "firestore.exists('" + doc + "cfg/site')", want: sim.Deny, lookups: 0,
			note: "Error: storage.rules line [5], column [32]. Unsupported operation error. Received: firestore.exists(string). Expected: firestore.exists(path)."},
		{name: "bare get is not a Storage function", rule: "get(" + doc + "cfg/site) != null", want: sim.Deny, lookups: 0,
			note: "Error: storage.rules line [5], column [22]. Function not found error: Name: [get]."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rs := mustCompile(t, cond("read", c.rule))
			lk := newCounting()
			d := rs.Decide(&Request{Method: Get, Path: "a", Auth: alice, Time: t0, Firestore: lk, TestAPI: c.testAPI})
			if d.Outcome != c.want {
				t.Fatalf("got %s, want %s; notes %q", d.Outcome, c.want, d.Notes)
			}
			if d.Lookups != c.lookups {
				t.Errorf("Lookups = %d, want %d", d.Lookups, c.lookups)
			}
			for p, n := range lk.calls {
				if n != 1 {
					t.Errorf("document %s fetched %d times, want once", p, n)
				}
			}
			if c.note != "" && !contains(d.Notes, c.note) {
				t.Errorf("want note %q, got %q", c.note, d.Notes)
			}
		})
	}
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	// A chain of n functions, f1 calling f2 … fn.
	chain := func(n int) string {
		var b strings.Builder
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "    function f%d() { return f%d(); }\n", i, i+1)
		}
		fmt.Fprintf(&b, "    function f%d() { return true; }\n", n)
		return "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n" + b.String() +
			"    match /{all=**} { allow read: if f1(); }\n  }\n}"
	}
	if rs := mustCompile(t, chain(20)); !rs.Decide(&Request{Method: Get, Path: "a"}).Allowed() {
		t.Error("a chain of 20 functions should compile and allow")
	}
	_, diags := Compile(source.NewFile("storage.rules", chain(22)))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Maximum allowed call depth of 20 is reached") {
		t.Errorf("a chain of 22 functions should be rejected, got %v", diags)
	}

	// Functions are lexically scoped: a block's helper sees the block's
	// wildcards, an outer helper does not see a caller's, and an inner
	// declaration shadows an outer one.
	rs := mustCompile(t, `rules_version = '2';
function level() { return 'global'; }
service firebase.storage {
  match /b/{bucket}/o {
    function level() { return 'service'; }
    function callerVar() { return uid == 'alice'; }
    match /users/{uid}/{file} {
      function own() { return request.auth.uid == uid; }
      allow get: if own() && level() == 'service';
      allow list: if callerVar();
    }
    match /inner/{file} {
      function level() { return 'inner'; }
      allow get: if level() == 'inner';
    }
  }
}`)
	if d := rs.Decide(&Request{Method: Get, Path: "users/alice/x", Auth: alice}); !d.Allowed() {
		t.Errorf("own(): %q", d.Notes)
	}
	if d := rs.Decide(&Request{Method: List, Path: "users/alice/x", Auth: alice}); d.Allowed() {
		t.Error("a function must not see its caller's wildcards")
	}
	if d := rs.Decide(&Request{Method: Get, Path: "inner/x"}); !d.Allowed() {
		t.Errorf("inner shadowing: %q", d.Notes)
	}
}

func TestCompileDiagnostics(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, rule string
		errors     bool
		want       string
	}{
		{"unknown firestore function", "firestore.fetch(/databases/(default)/documents/a/b) != null", false, "5:32: warning: Invalid function name: firestore.fetch."},
		{"firestore.get arity", "firestore.get(/databases/(default)/documents/a/b, 1) != null", true, "5:22: error: Incorrect number of arguments supplied to function: firestore.get."},
		{"unknown variable", "requests.auth != null", false, "Invalid variable name: requests."},
		{"bad regex", "request.resource.contentType.matches('(')", true, "Invalid regular expression pattern. Pattern: (."},
	}
	for _, c := range cases {
		_, diags := Compile(source.NewFile("storage.rules", cond("read", c.rule)))
		if diags.HasErrors() != c.errors {
			t.Errorf("%s: HasErrors = %v, want %v: %v", c.name, diags.HasErrors(), c.errors, diags)
		}
		found := false
		for _, d := range diags {
			if strings.Contains(d.String(), c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want a diagnostic containing %q, got:\n%v", c.name, c.want, diags)
		}
	}
	// A path variable named firestore shadows the namespace.
	rs := mustCompile(t, `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o/{firestore} {
    allow read: if firestore.size() > 1;
  }
}`)
	if !rs.Decide(&Request{Method: Get, Path: "abc"}).Allowed() {
		t.Error("a wildcard named firestore should shadow the namespace")
	}
}

func TestDecideRobustness(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, cond("read", "true"))
	d := rs.Decide(&Request{Method: "read", Path: "a"})
	if d.Allowed() || len(d.Notes) == 0 || !strings.HasPrefix(d.Notes[0], "Unknown method 'read'") {
		t.Errorf("umbrella as a request method: %v %q", d.Outcome, d.Notes)
	}
	// The expression budget applies to the whole request.
	var b strings.Builder
	b.WriteString("rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o/{f} {\n")
	for i := 0; i < 40; i++ {
		b.WriteString("    allow read: if " + strings.Repeat("1 == 2 || ", 14) + "false;\n")
	}
	b.WriteString("  }\n}")
	d = mustCompile(t, b.String()).Decide(&Request{Method: Get, Path: "a"})
	if d.Allowed() || d.Expressions > 1001 {
		t.Errorf("budget: %s after %d expressions", d.Outcome, d.Expressions)
	}
	if last := d.Trace[len(d.Trace)-1]; !strings.HasPrefix(last.Message, "Evaluation budget exhausted") {
		t.Errorf("budget: last rule %+v", last)
	}
}
