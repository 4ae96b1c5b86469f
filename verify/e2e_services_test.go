package verify_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

const sessionDBRules = `{
  "rules": {
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
    "posts": {"$id": {".read": "auth != null", ".write": "auth != null && newData.child('by').val() === auth.uid"}}
  }
}`

// Bob may no longer write to the Realtime Database.
const noBobDBRules = `{
  "rules": {
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid && auth.uid !== 'bob'"}},
    "posts": {"$id": {".read": "auth != null", ".write": "auth != null && newData.child('by').val() === auth.uid && auth.uid !== 'bob'"}}
  }
}`

const sessionStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
`

// Bob may no longer write to Storage.
const noBobStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow write: if request.auth != null && request.auth.uid == uid && request.auth.uid != 'bob';
    }
  }
}
`

func testdata() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(f), "testdata")
}

// TestServeSessionVerifyDatabaseAndStorage runs a session of allowed and
// denied requests by two users through a real `pyric serve` and the
// official JS SDK (Realtime Database over its websocket, Storage over
// v0 REST), stops the server, and verifies its capture: the same rules
// exit 0; rules that forbid bob's writes exit 1 with each of bob's
// allowed writes reported now-denied with the rule that now fails.
func TestServeSessionVerifyDatabaseAndStorage(t *testing.T) {
	e2etest.NeedNode(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dbRules := write("database.rules.json", sessionDBRules)
	stRules := write("storage.rules", sessionStorageRules)
	exportDir := filepath.Join(dir, "export")
	srv := e2etest.StartServe(t, dir, "--project", "demo-verify", "--data-dir", filepath.Join(dir, ".pyric"),
		"--database-rules", dbRules, "--storage-rules", stRules, "--export-on-exit", exportDir)
	if srv.Database == "" || srv.Storage == "" {
		t.Fatalf("serve's JSON line lacks database/storage: %+v", srv)
	}
	steps := e2etest.RunSteps(t, 90*time.Second, testdata(), "session.cjs",
		"PROJECT="+srv.Project, "DB="+srv.Database, "STORAGE="+srv.Storage)
	want := map[string]string{
		"rtdb alice set": `"ok"`, "rtdb bob set": `"ok"`, "rtdb bob set alice denied": `"PERMISSION_DENIED"`,
		"rtdb alice get": `"Alice"`, "rtdb bob get alice denied": `"Permission denied"`, "rtdb bob update": `"ok"`,
		"rtdb bob push": `"ok"`, "rtdb alice push as bob denied": `"PERMISSION_DENIED"`, "rtdb bob remove": `"ok"`,
		"rtdb alice listen": `"Alice"`, "rtdb bob listen alice denied": `"PERMISSION_DENIED"`,
		"storage alice upload": `"ok"`, "storage bob upload": `"ok"`, "storage bob upload c": `"ok"`,
		"storage bob upload alice denied": `"storage/unauthorized"`, "storage alice download": `"alice"`,
		"storage bob download alice denied": `"storage/unauthorized"`, "storage bob list": `["b.txt","c.txt"]`,
		"storage bob update metadata": `"ok"`, "storage bob delete": `"ok"`,
	}
	got := map[string]bool{}
	for _, s := range steps {
		got[s.Step] = true
		if !s.OK {
			t.Errorf("step %s failed: %s", s.Step, s.Error)
		} else if w, ok := want[s.Step]; ok && !e2etest.SameJSON(s.Got, w) {
			t.Errorf("step %s: got %s, want %s", s.Step, s.Got, w)
		}
	}
	for s := range want {
		if !got[s] {
			t.Errorf("step %s did not run", s)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	srv.Stop()
	fixture := filepath.Join(dir, ".pyric", "last-session.json")

	bin := e2etest.Pyric(t)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if errb.Len() > 0 {
			t.Logf("pyric %s: stderr: %s", args[0], errb.String())
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	type result struct {
		OK       bool `json:"ok"`
		Services map[string]struct {
			OK            bool `json:"ok"`
			CheckedEvents int  `json:"checkedEvents"`
			Divergences   []struct {
				Kind, EventID, Method, Path, UID, Explanation string
				Before, After                                 any
			} `json:"divergences"`
		} `json:"services"`
	}
	out, code := run("verify", "--fixture", fixture, "--database-rules", dbRules, "--storage-rules", stRules, "--format", "json")
	var same result
	if err := json.Unmarshal([]byte(out), &same); err != nil || code != 0 || !same.OK {
		t.Fatalf("same rules: exit %d (%v)\n%s", code, err, out)
	}
	// Without candidates the captured rules decide: the same verdicts.
	if out, code := run("verify", "--fixture", fixture); code != 0 {
		t.Fatalf("captured rules: exit %d\n%s", code, out)
	}
	if _, code := run("verify", "--fixture", fixture, "--derive-cases", "-", "--service", "messaging"); code != 2 {
		t.Errorf("--service messaging: exit %d, want 2", code)
	}
	// Every client request was decided again: 11 database requests (the
	// pushes' sets, the get, the listens; the SDK may read more), 9
	// Storage ones.
	if n := same.Services["database"].CheckedEvents; n < 11 {
		t.Errorf("database: %d requests re-decided, want >= 11", n)
	}
	if n := same.Services["storage"].CheckedEvents; n < 9 {
		t.Errorf("storage: %d requests re-decided, want >= 9", n)
	}

	noBobDB := write("nobob.rules.json", noBobDBRules)
	noBobSt := write("nobob.storage.rules", noBobStorageRules)
	out, code = run("verify", "--fixture", fixture, "--database-rules", noBobDB, "--storage-rules", noBobSt, "--format", "json")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.OK {
		t.Fatalf("rules forbidding bob: exit %d (%v), want 1\n%s", code, err, out)
	}
	wantDenied := map[string][]string{
		"database": {"set /users/bob", "update /users/bob", "set /posts/", "remove /users/bob/n"},
		"storage":  {"create users/bob/b.txt", "create users/bob/c.txt", "update users/bob/b.txt", "delete users/bob/c.txt"},
	}
	for svc, wants := range wantDenied {
		var denied []string
		for _, d := range res.Services[svc].Divergences {
			switch d.Kind {
			case "now-denied":
				denied = append(denied, d.Method+" "+d.Path)
				if d.UID != "bob" || d.Before != "allow" || d.After != "deny" {
					t.Errorf("%s now-denied %+v: want bob's allow turned deny", svc, d)
				}
				if !strings.Contains(d.Explanation, "bob") {
					t.Errorf("%s now-denied %s %s: explanation %q does not show the failing condition", svc, d.Method, d.Path, d.Explanation)
				}
			case "now-allowed", "unsupported":
				t.Errorf("%s: unexpected %+v", svc, d)
			}
		}
		if len(denied) != len(wants) {
			t.Errorf("%s now-denied = %q, want %q", svc, denied, wants)
			continue
		}
		for i, w := range wants {
			if !strings.HasPrefix(denied[i], w) {
				t.Errorf("%s now-denied[%d] = %q, want %q…", svc, i, denied[i], w)
			}
		}
	}
	// The text and JUnit reports say the same.
	txt, _ := run("verify", "--fixture", fixture, "--database-rules", noBobDB, "--storage-rules", noBobSt)
	if !strings.Contains(txt, "database: FAILED") || !strings.Contains(txt, "storage: FAILED") || !strings.Contains(txt, "now-denied") {
		t.Errorf("text report:\n%s", txt)
	}
	junit, _ := run("verify", "--fixture", fixture, "--database-rules", noBobDB, "--storage-rules", noBobSt, "--format", "junit")
	if !strings.Contains(junit, `<testsuite name="pyric verify database"`) || !strings.Contains(junit, `type="now-denied"`) {
		t.Errorf("junit report:\n%s", junit)
	}
	t.Log(txt)

	// --export-on-exit wrote the session's data in the Emulator Suite
	// layout; a new server started with --import serves it.
	again := e2etest.StartServe(t, t.TempDir(), "--project", "demo-verify", "--import", exportDir)
	get := func(url string) string {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer owner")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	if got := get("http://" + again.Database + "/users/bob.json?ns=demo-verify-default-rtdb"); got != `200 {"name":"Bobby","tags":{"x":true}}` {
		t.Errorf("imported RTDB users/bob: %s", got)
	}
	if got := get("http://" + again.Storage + "/v0/b/demo-verify.appspot.com/o/users%2Fbob%2Fb.txt?alt=media"); got != "200 bob!" {
		t.Errorf("imported Storage users/bob/b.txt: %s", got)
	}
	if got := get("http://" + again.Storage + "/v0/b/demo-verify.appspot.com/o/users%2Fbob%2Fc.txt"); !strings.HasPrefix(got, "404") {
		t.Errorf("the deleted c.txt after import: %s", got)
	}
	again.Stop()

	// The session as simulator cases: each service's cases pass its
	// simulator with the session's rules.
	// bob's two-location update has no case form.
	for svc, unsupported := range map[string]int{"database": 1, "storage": 0} {
		cases, code := run("verify", "--fixture", fixture, "--derive-cases", "-", "--service", svc)
		var d struct {
			TestCases   []json.RawMessage `json:"testCases"`
			Unsupported []string          `json:"unsupportedEvents"`
		}
		if err := json.Unmarshal([]byte(cases), &d); err != nil || code != 0 || len(d.TestCases) < 9 || len(d.Unsupported) != unsupported {
			t.Errorf("%s: derive-cases exit %d (%v): %d cases, unsupported %v\n%s", svc, code, err, len(d.TestCases), d.Unsupported, cases)
			continue
		}
		cmd := exec.Command(bin, svc, "rules", "simulate", "--stdin", "--format", "json")
		cmd.Stdin = strings.NewReader(cases)
		simOut, err := cmd.Output()
		if err != nil {
			t.Errorf("%s: simulate the derived cases: %v\n%s", svc, err, simOut)
		}
	}
}
