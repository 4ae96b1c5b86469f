// Package storagejs drives pyric's Storage server with the Firebase JS SDK
// (firebase@12.19.0 in Node) over the v0 REST API.
package storagejs

import (
	"encoding/json"
	"github.com/pyric/pyric/server"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/rules/value"
	"github.com/pyric/pyric/sandbox/service"
	srv "github.com/pyric/pyric/server/storage"
	"github.com/pyric/pyric/storage"
)

const rules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{path=**} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow write: if request.auth != null && request.auth.uid == uid
                   && (request.resource == null || request.resource.size < 1024 * 1024);
    }
    match /teams/{team}/{file} {
      allow read, write: if request.auth != null
        && request.auth.uid in firestore.get(/databases/(default)/documents/teams/$(team)).data.members;
    }
  }
}`

func here() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Dir(f)
}

// serve starts the Storage server on 127.0.0.1 with rules (none if
// empty) and returns its host:port.
func serve(t *testing.T, env service.Env, opts storage.Options, rules string) string {
	t.Helper()
	e, err := storage.New(env, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rules != "" {
		if _, err := e.SetRules("storage.rules", rules); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(server.Guard(srv.NewHandler(e), nil)) // as on its port: CORS for the browser build
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// want is what every step returns.
var want = map[string]string{
	"uploadBytes":                           `{"fullPath":"users/alice/dir/hello world.txt","name":"hello world.txt","bucket":"demo-pyric.appspot.com","size":5,"contentType":"text/plain","generation":"GEN","metageneration":"1","customMetadata":{"a":"b"}}`,
	"uploadBytes content type from Blob":    `"application/json"`,
	"uploadBytes default content type":      `"application/octet-stream"`,
	"uploadString raw":                      `[3,"abc"]`,
	"uploadString data_url":                 `["text/csv","a,b"]`,
	"uploadString base64 bytes":             `["++//AEE+Pw==",7,"fbefff00413e3f"]`,
	"uploadString base64url bytes":          `["--__AEE-Pw",7,"fbefff00413e3f"]`,
	"uploadString data_url bytes":           `["data:application/x-odd;base64,++//AEE+Pw==",7,"fbefff00413e3f"]`,
	"uploadString data_url percent-encoded": `["text/plain","héllo w"]`,
	"getStream":                             `"fbefff00413e3f"`,
	"getStream missing object":              `"storage/object-not-found"`,
	"uploadBytesResumable":                  `{"size":614400,"progress":614400,"same":true,"kind":"big"}`,
	"uploadBytesResumable pause and resume": `{"size":716800,"sawPause":true}`,
	"uploadBytesResumable cancel":           `["storage/canceled","storage/object-not-found"]`,
	"getMetadata":                           `{"size":5,"contentType":"text/plain","customMetadata":{"a":"b"},"contentEncoding":"identity","md5":true}`,
	"getDownloadURL then fetch":             `[true,200,"hello"]`,
	"download URL ignores rules":            `[200,403]`,
	"getBytes":                              `"hello"`,
	"getBytes maxDownloadSize":              `"hel"`,
	"updateMetadata":                        `["public, max-age=60","2",null,{"c":"d"},"3",true]`,
	"listAll":                               `[["big.bin","blob.json","d.txt","hello world.txt","paused.bin","raw.bin","s.txt"],[]]`,
	"list with pages":                       `[["1","2"],["5","q/"],["r/"]]`,
	"deleteObject":                          `["storage/object-not-found","storage/object-not-found","storage/object-not-found","storage/object-not-found"]`,
	"download URL after delete":             `403`, // no token matches a missing object, so the rules decide
	"denied upload anonymous":               `"storage/unauthorized"`,
	"denied read other user":                `"storage/unauthorized"`,
	"denied list other user":                `"storage/unauthorized"`,
	"denied delete other user":              `"storage/unauthorized"`,
	"denied by size":                        `"storage/unauthorized"`,
	"denied resumable":                      `"storage/unauthorized"`,
	"firestore.get rule":                    `["ok","storage/unauthorized"]`,
	"root operation":                        `"storage/invalid-root-operation"`,
	"unreadable token":                      `"storage/unauthenticated"`,
}

func TestNodeSDK(t *testing.T) {
	e2etest.NeedNode(t)
	addr := serve(t, service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, storage.Options{
		Firestore: srules.FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
			if path == "teams/red" {
				return value.Map{"members": value.List{value.String("alice")}}, true, nil
			}
			return nil, false, nil
		}),
	}, rules)
	check(t, run(t, "node_sdk.cjs", "STORAGE="+addr), want)
}

// rutWant is what rut.cjs's steps return.
var rutWant = map[string]string{
	"owner writes":          `"ok"`,
	"other user denied":     `"storage/unauthorized"`,
	"anonymous read denied": `"storage/unauthorized"`,
	"owner reads":           `3`,
	"rules disabled":        `"demo-rut"`,
	"clearStorage":          `0`,
}

// TestRulesUnitTesting runs @firebase/rules-unit-testing 5.0.2 with storage
// rules: the server starts without rules and gets them over
// /internal/setRules.
func TestRulesUnitTesting(t *testing.T) {
	e2etest.NeedNode(t)
	addr := serve(t, service.Env{Project: "demo-rut"}, storage.Options{}, "")
	rf := filepath.Join(t.TempDir(), "storage.rules")
	if err := os.WriteFile(rf, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	check(t, run(t, "rut.cjs", "STORAGE="+addr, "RULES_FILE="+rf), rutWant)
}

// run runs a Node script of this directory and returns its steps.
func run(t *testing.T, script string, env ...string) []e2etest.Step {
	t.Helper()
	return e2etest.RunSteps(t, 2*time.Minute, here(), script, env...)
}

// check checks that every step passed, is in want and returned its JSON
// value there, and that every step of want ran; "GEN" as a want's
// "generation" stands for any generation.
func check(t *testing.T, steps []e2etest.Step, want map[string]string) {
	t.Helper()
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: want, Listed: true,
		Normalize: func(step string, got json.RawMessage) json.RawMessage {
			var m map[string]any
			if !strings.Contains(want[step], `"GEN"`) || json.Unmarshal(got, &m) != nil || m == nil {
				return got
			}
			m["generation"] = "GEN"
			b, _ := json.Marshal(m)
			return b
		}})
}
