// Package rtdbsuite runs the JS SDK's own Realtime Database integration
// tests (packages/database and packages/database-compat of
// firebase-js-sdk at @firebase/database 1.1.5, the version firebase@12.19.0
// ships; vendored in third_party/firebase-js-sdk) against `pyric serve`,
// in Node and in headless Chromium, as the SDK's emulator runner runs
// them against the official emulator. Every test must pass but the few
// listed in needsProduction, each with its reason. Node, Chromium or
// this folder's node_modules missing skips the tests, and fails them
// under PYRIC_E2E_REQUIRED=1.
package rtdbsuite

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

// namespace is the database the suites use (the SDK's emulator runner's
// default namespace).
const namespace = "test-emulator"

// rules are the SDK's config/database.rules.json, which its emulator
// runner sets before the tests run.
const rules = `{"rules": {".read": true, ".write": true, "testing": {".indexOn": "testIndex"}}}`

// needsProduction lists the tests that cannot pass against a server on
// the same machine, with the reason. A listed test that fails is skipped
// with its reason; one that passes is logged.
var needsProduction = map[string]string{
	"ServerValue tests resolves timestamps locally": "expects two value events, the client's estimate of the server time and then the server's time; " +
		"a server on the same machine often resolves the timestamp in the very millisecond the client estimated, and the SDK raises no event for an unchanged value",
}

func dir() string { return filepath.Join(e2etest.Root(), "e2e", "rtdbsuite") }

// need checks node and this folder's node_modules (and Chromium when
// browser is set).
func need(t *testing.T, browser bool) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		e2etest.Missing(t, "node is not on PATH")
	}
	for _, m := range []string{"mocha", "esbuild", "chai", "sinon", "@firebase/app", "playwright-core"} {
		if _, err := os.Stat(filepath.Join(dir(), "node_modules", m)); err != nil {
			e2etest.Missing(t, "e2e/rtdbsuite/node_modules/%s is absent (run `npm ci` in e2e/rtdbsuite)", m)
		}
	}
	if browser {
		p := os.Getenv("CHROMIUM")
		if p == "" {
			p = "/usr/bin/chromium"
		}
		if _, err := os.Stat(p); err != nil {
			e2etest.Missing(t, "Chromium is not installed at %s (apt-get install -y chromium)", p)
		}
	}
}

// run starts `pyric serve`, sets the SDK's rules on its namespace, runs
// one suite (where: node, chromium or chromium-longpoll) and checks every
// test in a subtest of its name.
func run(t *testing.T, where, suite string) {
	need(t, strings.HasPrefix(where, "chromium"))
	srv := e2etest.StartServe(t, t.TempDir(), "--in-memory")
	port := srv.Database[strings.LastIndex(srv.Database, ":")+1:]
	req, _ := http.NewRequest(http.MethodPut, "http://"+srv.Database+"/.settings/rules.json?ns="+namespace, strings.NewReader(rules))
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setting the suite's rules: %s", resp.Status)
	}
	steps := e2etest.RunSteps(t, 15*time.Minute, dir(), "suite.cjs",
		"RTDB_SUITE_WHERE="+where, "RTDB_SUITE="+suite,
		"RTDB_EMULATOR_PORT="+port, "RTDB_EMULATOR_NAMESPACE="+namespace)
	if len(steps) < 20 {
		t.Fatalf("only %d tests ran", len(steps))
	}
	failed, retried := 0, 0
	for _, s := range steps {
		var got struct{ Retries int }
		if s.OK && json.Unmarshal(s.Got, &got) == nil && got.Retries > 0 {
			// The SDK's own mocha settings retry a failed test; a test
			// that needed it is named, so that flakiness shows.
			retried++
			t.Logf("passed after %d retries: %s", got.Retries, s.Step)
		}
		if !s.OK {
			if _, known := needsProduction[s.Step]; !known {
				failed++
				t.Logf("FAIL %s: %s", s.Step, s.Error)
			}
		}
	}
	t.Logf("%s %s: %d tests, %d failed, %d passed after a retry", where, suite, len(steps), failed, retried)
	e2etest.CheckSteps(t, steps, e2etest.Want{Known: needsProduction})
}

func TestNodeDatabase(t *testing.T)     { run(t, "node", "database") }
func TestNodeCompat(t *testing.T)       { run(t, "node", "compat") }
func TestChromiumDatabase(t *testing.T) { run(t, "chromium", "database") }
func TestChromiumCompat(t *testing.T)   { run(t, "chromium", "compat") }

// TestChromiumLongPollDatabase and TestChromiumLongPollCompat run the
// browser suites with the SDK's flag of a failed websocket set before
// every test, so that every connection starts on long polling and moves
// its session onto a websocket (/.ws?s=).
func TestChromiumLongPollDatabase(t *testing.T) { run(t, "chromium-longpoll", "database") }
func TestChromiumLongPollCompat(t *testing.T)   { run(t, "chromium-longpoll", "compat") }
