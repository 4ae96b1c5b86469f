package storage

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/value"
)

// languageProbe exercises one construct of rules-language.json. Either
// cond must allow and denyCond must deny the probe request (an update of
// uploads/a-b.png by alice), or rules must allow every request in allow
// ("method path") and deny every one in deny.
type languageProbe struct {
	cond, denyCond string
	rules          string
	allow, deny    []string
}

func probeRules(c string) string {
	return `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /uploads/{fileId} {
      allow read, write: if ` + c + `;
    }
  }
}`
}

func storageRules(version, body string) string {
	return "rules_version = '" + version + "';\nservice firebase.storage {\n  match /b/{bucket}/o {\n" + body + "\n  }\n}"
}

var languageProbes = map[string]languageProbe{
	"storage.binding.request":                      {cond: "request is map", denyCond: "request.missing == 1"},
	"storage.binding.request.auth":                 {cond: "request.auth != null", denyCond: "request.auth == null"},
	"storage.binding.request.auth.uid":             {cond: "request.auth.uid == 'alice'", denyCond: "request.auth.uid == 'bob'"},
	"storage.binding.request.auth.token":           {cond: "request.auth.token.role == 'editor'", denyCond: "request.auth.token.plan == 'pro'"},
	"storage.binding.request.resource":             {cond: "request.resource != null", denyCond: "request.resource == null"},
	"storage.binding.request.resource.size":        {cond: "request.resource.size == 1024", denyCond: "request.resource.size > 1024"},
	"storage.binding.request.resource.contentType": {cond: "request.resource.contentType == 'image/png'", denyCond: "request.resource.contentType == 'image/jpeg'"},
	"storage.binding.request.resource.metadata":    {cond: "request.resource.metadata.purpose == 'avatar'", denyCond: "request.resource.metadata.purpose == 'banner'"},
	"storage.binding.request.time":                 {cond: "request.time == timestamp.value(" + fmt.Sprint(t0.Add(time.Minute).UnixMilli()) + ")", denyCond: "request.time < timestamp.value(" + fmt.Sprint(t0.UnixMilli()) + ")"},
	"storage.binding.request.method":               {cond: "request.method == 'update'", denyCond: "request.method == 'write'"},
	"storage.binding.request.path":                 {cond: "request.path == /b/$(bucket)/o/uploads/$(fileId)", denyCond: "request.path == /uploads/$(fileId)"},
	"storage.binding.resource":                     {cond: "resource != null", denyCond: "resource == null"},
	"storage.binding.resource.size":                {cond: "resource.size == 2048", denyCond: "resource.size == request.resource.size"},
	"storage.binding.resource.contentType":         {cond: "resource.contentType == 'image/png'", denyCond: "resource.contentType == 'image/gif'"},
	"storage.binding.resource.metadata":            {cond: "resource.metadata.owner == request.auth.uid", denyCond: "resource.metadata.purpose == 'avatar'"},
	"storage.binding.path-variable":                {cond: "fileId == 'a-b.png' && fileId is string", denyCond: "fileId is int"},
	"storage.binding.resource.name":                {cond: "resource.name == 'uploads/' + fileId", denyCond: "resource.name == fileId"},
	"storage.binding.resource.timeCreated":         {cond: "resource.timeCreated == timestamp.value(" + fmt.Sprint(t0.UnixMilli()) + ")", denyCond: "resource.timeCreated > " + fmt.Sprint(t0.UnixMilli())},
	"storage.binding.resource.updated":             {cond: "resource.updated > resource.timeCreated", denyCond: "resource.timeUpdated > resource.timeCreated"},
	"storage.binding.resource.bucket":              {cond: "resource.bucket == bucket", denyCond: "resource.bucket == 'other-bucket'"},
	"storage.binding.resource.generation":          {cond: "resource.generation == 1753056000000000 && resource.generation is int", denyCond: "resource.generation == '1753056000000000'"},
	"storage.binding.resource.metageneration":      {cond: "resource.metageneration == 2", denyCond: "resource.metageneration == 1"},
	"storage.function.timestamp.date":              {cond: "request.time > timestamp.date(2026, 7, 20)", denyCond: "request.time > timestamp.date(2026, 7, 22)"},
	"storage.function.timestamp.value":             {cond: "resource.timeCreated == timestamp.value(" + fmt.Sprint(t0.UnixMilli()) + ")", denyCond: "resource.timeCreated == timestamp.value(0)"},
	"storage.function.duration.value":              {cond: "request.time < resource.timeCreated + duration.value(1, 'h')", denyCond: "request.time < resource.timeCreated + duration.value(59, 's')"},
	"storage.function.firestore.get":               {cond: "firestore.get(/databases/(default)/documents/users/$(request.auth.uid)).data.role == 'admin'", denyCond: "firestore.get(/databases/(default)/documents/users/nobody).data.role == 'admin'"},
	"storage.function.firestore.exists":            {cond: "firestore.exists(/databases/(default)/documents/users/alice)", denyCond: "firestore.exists(/databases/(default)/documents/users/nobody)"},
	"storage.method.string.matches":                {cond: "request.resource.contentType.matches('image/.*')", denyCond: "request.resource.contentType.matches('image')"},
	"storage.method.size":                          {cond: "fileId.size() == 7 && [1, 2].size() == 2 && request.resource.metadata.size() == 2", denyCond: "request.resource.size() == 1024"},
	"storage.method.string.split":                  {cond: "fileId.split('-')[1] == 'b.png'", denyCond: "fileId.split('-').size() == 1"},
	"storage.method.map.keys":                      {cond: "request.resource.metadata.keys().size() == 2", denyCond: "'avatar' in request.resource.metadata.keys()"},
	"storage.method.map.get":                       {cond: "request.resource.metadata.get('missing', 'd') == 'd'", denyCond: "request.resource.metadata.get('purpose', 'd') == 'd'"},
	"storage.method.set.hasAll":                    {cond: "request.resource.metadata.keys().hasAll(['owner', 'purpose'])", denyCond: "request.resource.metadata.keys().hasAll(['owner', 'size'])"},
	"storage.operator.eq":                          {cond: "1 == 1 && 1 == 1.0 && [1, 'a'] == [1, 'a']", denyCond: "1 == 2"},
	"storage.operator.neq":                         {cond: "1 != 2", denyCond: "'a' != 'a'"},
	"storage.operator.lt":                          {cond: "1 < 2 && 'a' < 'b'", denyCond: "2 < 1"},
	"storage.operator.gt":                          {cond: "2 > 1", denyCond: "1 > 'a'"},
	"storage.operator.lte":                         {cond: "2 <= 2", denyCond: "3 <= 2"},
	"storage.operator.gte":                         {cond: "2 >= 2", denyCond: "1 >= 2"},
	"storage.operator.add":                         {cond: "1 + 2 == 3 && 'a' + 'b' == 'ab'", denyCond: "'a' + 1 == 'a1'"},
	"storage.operator.sub":                         {cond: "5 - 7 == -2", denyCond: "5 - 7 == 2"},
	"storage.operator.mul":                         {cond: "3 * 4 == 12 && 1024 * 1024 == 1048576", denyCond: "3 * 4 == 7"},
	"storage.operator.div":                         {cond: "7 / 2 == 3 && -7 / 2 == -3 && 7.0 / 2 == 3.5", denyCond: "1 / 0 == 0"},
	"storage.operator.and":                         {cond: "true && true", denyCond: "true && false"},
	"storage.operator.or":                          {cond: "false || true", denyCond: "false || false"},
	"storage.operator.not":                         {cond: "!false", denyCond: "!true"},
	"storage.operator.member":                      {cond: "request.resource.metadata.owner == 'alice'", denyCond: "request.resource.metadata.nope == 'alice'"},
	"storage.operator.index":                       {cond: "[1, 2, 3][1] == 2 && fileId[0] == 'a' && request.resource.metadata['owner'] == 'alice'", denyCond: "[1][5] == 1"},
	"storage.operator.slice":                       {cond: "fileId[0:3] == 'a-b' && [1, 2, 3][1:] == [2, 3]", denyCond: "fileId[0:100] == fileId"},
	"storage.operator.is":                          {cond: "1 is int && 1.0 is float && request.resource.metadata is map", denyCond: "1 is float"},
	"storage.operator.in":                          {cond: "'a' in ['a'] && 'owner' in request.resource.metadata", denyCond: "'toString' in request.resource.metadata"},
	"storage.operator.ternary":                     {cond: "request.auth != null ? true : false", denyCond: "(1 / 0 == 0) ? true : true"},
	"storage.operator.unary-minus":                 {cond: "-(3) == -3 && -request.resource.size == -1024", denyCond: "-1 == 1"},
	"storage.operator.mod":                         {cond: "-7 % 2 == -1 && 7 % 3 == 1", denyCond: "1 % 0 == 0"},

	"storage.rule-kind.allow-read":   {rules: storageRules("2", "match /{f} { allow read; }"), allow: []string{"get f", "list f"}, deny: []string{"create f", "delete f"}},
	"storage.rule-kind.allow-write":  {rules: storageRules("2", "match /{f} { allow write; }"), allow: []string{"create f", "update f", "delete f"}, deny: []string{"get f", "list f"}},
	"storage.rule-kind.allow-get":    {rules: storageRules("2", "match /{f} { allow get; }"), allow: []string{"get f"}, deny: []string{"list f", "update f"}},
	"storage.rule-kind.allow-list":   {rules: storageRules("2", "match /{f} { allow list; }"), allow: []string{"list f"}, deny: []string{"get f", "create f"}},
	"storage.rule-kind.allow-create": {rules: storageRules("2", "match /{f} { allow create; }"), allow: []string{"create f"}, deny: []string{"update f", "get f"}},
	"storage.rule-kind.allow-update": {rules: storageRules("2", "match /{f} { allow update; }"), allow: []string{"update f"}, deny: []string{"create f", "delete f"}},
	"storage.rule-kind.allow-delete": {rules: storageRules("2", "match /{f} { allow delete; }"), allow: []string{"delete f"}, deny: []string{"update f", "list f"}},
	"storage.rule-kind.match": {rules: storageRules("2", "match /a/{x} { match /b/{y} { allow get: if x == 'one' && y == 'two'; } }"),
		allow: []string{"get a/one/b/two"}, deny: []string{"get a/one", "get a/one/b", "get a/one/b/two/three", "get a/two/b/two"}},
	"storage.rule-kind.function": {rules: "rules_version = '2';\nfunction top(x) { return x > 1; }\nservice firebase.storage {\n  function mid(x) { return top(x); }\n  match /b/{bucket}/o/{f} { function own() { return f == 'mine'; } allow get: if own() && mid(2); }\n}",
		allow: []string{"get mine"}, deny: []string{"get yours"}},
	"storage.rule-kind.let": {rules: storageRules("2", "function limit() { let mb = 1024 * 1024; let unused = 1 / 0; return 2 * mb; }\nmatch /{f} { allow update: if request.resource.size < limit(); }"),
		allow: []string{"update f"}, deny: []string{"create f"}},
	"storage.rule-kind.rules_version": {rules: storageRules("2", "match /{all=**} { allow list; }"), allow: []string{"list ", "list a/b"}, deny: []string{"get a"}},
	"storage.semantic.read-umbrella":  {rules: storageRules("2", "match /{all=**} { allow read; }"), allow: []string{"get a", "list a"}, deny: []string{"create a", "update a", "delete a"}},
	"storage.semantic.write-umbrella": {rules: storageRules("2", "match /{all=**} { allow write; }"), allow: []string{"create a", "update a", "delete a"}, deny: []string{"get a", "list a"}},
	"storage.semantic.recursive-wildcard": {rules: storageRules("2", "match /public/{rest=**} { allow get: if rest == path('x/y') || rest == path(''); }"),
		allow: []string{"get public/x/y"}, deny: []string{"get public/x", "get other/x/y"}},
	"storage.semantic.deny-by-default": {rules: storageRules("2", "match /a/{f} { allow get: if false; }"), allow: nil, deny: []string{"get a/b", "list a/b", "get b/c", "create a/b"}},
}

// TestLanguage checks every Storage construct of rules-language.json
// behaves as production: each accepted construct works (it can both allow
// and deny), in both modes. A construct without a probe fails the test, so
// the table keeps up with the data.
func TestLanguage(t *testing.T) {
	t.Parallel()
	lang, err := conformance.Language()
	if err != nil {
		t.Fatal(err)
	}
	lookup := FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		if path == "users/alice" {
			return value.Map{"role": value.String("admin")}, true, nil
		}
		return nil, false, nil
	})
	obj := *stored
	obj.Name = "uploads/a-b.png"
	probeReq := func(testAPI bool) *Request {
		return &Request{Method: Update, Path: "uploads/a-b.png", Auth: alice, Incoming: payload, Resource: &obj,
			Time: t0.Add(time.Minute), Firestore: lookup, TestAPI: testAPI}
	}
	checked := 0
	for _, c := range lang["storage"] {
		p, ok := languageProbes[c.ID]
		if !ok {
			t.Errorf("%s: no probe", c.ID)
			continue
		}
		if c.Status != "accepted" {
			t.Errorf("%s: status %s has no probe semantics yet", c.ID, c.Status)
			continue
		}
		checked++
		for _, testAPI := range []bool{false, true} {
			if p.rules == "" {
				for cond, want := range map[string]bool{p.cond: true, p.denyCond: false} {
					d := mustCompile(t, probeRules(cond)).Decide(probeReq(testAPI))
					if d.Allowed() != want {
						t.Errorf("%s (testAPI=%v): %s → %s, want allowed=%v; notes %q", c.ID, testAPI, cond, d.Outcome, want, d.Notes)
					}
				}
				continue
			}
			rs := mustCompile(t, p.rules)
			for _, list := range []struct {
				reqs []string
				want bool
			}{{p.allow, true}, {p.deny, false}} {
				for _, r := range list.reqs {
					method, path, _ := strings.Cut(r, " ")
					req := &Request{Method: method, Path: path, Incoming: payload, Resource: &obj, Time: t0, TestAPI: testAPI}
					if d := rs.Decide(req); d.Allowed() != list.want {
						t.Errorf("%s (testAPI=%v): %s → %s, want allowed=%v; notes %q", c.ID, testAPI, r, d.Outcome, list.want, d.Notes)
					}
				}
			}
		}
	}
	t.Logf("%d/%d storage constructs of rules-language.json checked", checked, len(lang["storage"]))
}

// TestRulesVersion1 pins the rules_version difference the probe above
// relies on: version 1 recursive wildcards need at least one segment.
func TestRulesVersion1(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, storageRules("1", "match /{all=**} { allow list; }"))
	if rs.Decide(&Request{Method: List, Path: ""}).Allowed() {
		t.Error("version 1: {all=**} matched zero segments")
	}
	if !rs.Decide(&Request{Method: List, Path: "a"}).Allowed() {
		t.Error("version 1: {all=**} did not match one segment")
	}
}
