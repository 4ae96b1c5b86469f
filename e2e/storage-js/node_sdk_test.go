// Package storagejs drives pyric's Storage server with the Firebase JS SDK
// (firebase@12.19.0 in Node) over the v0 REST API.
package storagejs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
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

type step struct {
	Step  string          `json:"step"`
	OK    bool            `json:"ok"`
	Got   json.RawMessage `json:"got"`
	Error string          `json:"error"`
}

func here() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Dir(f)
}

// want is what every step returns.
var want = map[string]string{
	"uploadBytes":                           `{"fullPath":"users/alice/dir/hello world.txt","name":"hello world.txt","bucket":"demo-pyric.appspot.com","size":5,"contentType":"text/plain","generation":"GEN","metageneration":"1","customMetadata":{"a":"b"}}`,
	"uploadBytes content type from Blob":    `"application/json"`,
	"uploadBytes default content type":      `"application/octet-stream"`,
	"uploadString raw":                      `[3,"abc"]`,
	"uploadString data_url":                 `["text/csv","a,b"]`,
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
	e, err := storage.New(service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, storage.Options{
		Firestore: srules.FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
			if path == "teams/red" {
				return value.Map{"members": value.List{value.String("alice")}}, true, nil
			}
			return nil, false, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetRules("storage.rules", rules); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.NewHandler(e))
	defer ts.Close()
	check(t, run(t, "node_sdk.cjs", "STORAGE="+strings.TrimPrefix(ts.URL, "http://")), want)
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
	e, err := storage.New(service.Env{Project: "demo-rut"}, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.NewHandler(e))
	defer ts.Close()
	rf := filepath.Join(t.TempDir(), "storage.rules")
	os.WriteFile(rf, []byte(rules), 0o644)
	check(t, run(t, "rut.cjs", "STORAGE="+strings.TrimPrefix(ts.URL, "http://"), "RULES_FILE="+rf), rutWant)
}

func run(t *testing.T, script string, env ...string) []step {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(here(), script))
	cmd.Env = append(os.Environ(), append([]string{"NODE_PATH=" + filepath.Join(e2etest.JSDir(), "node_modules")}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", script, err, stdout.String(), stderr.String())
	}
	var steps []step
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var s step
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.Step != "" {
			steps = append(steps, s)
		}
	}
	return steps
}

// check compares steps with want; "GEN" in want stands for any
// generation.
func check(t *testing.T, steps []step, want map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range steps {
		seen[s.Step] = true
		w, ok := want[s.Step]
		if !ok {
			t.Errorf("unexpected step %q", s.Step)
			continue
		}
		if !s.OK {
			t.Errorf("%s: %s", s.Step, s.Error)
			continue
		}
		got := string(s.Got)
		if strings.Contains(w, `"GEN"`) {
			var m map[string]any
			json.Unmarshal(s.Got, &m)
			m["generation"] = "GEN"
			b, _ := json.Marshal(m)
			var wm map[string]any
			json.Unmarshal([]byte(w), &wm)
			wb, _ := json.Marshal(wm)
			got, w = string(b), string(wb)
		}
		if got != w {
			t.Errorf("%s:\n got  %s\n want %s", s.Step, got, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("step %q did not run", name)
		}
	}
}
