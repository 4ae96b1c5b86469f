// Package firestorejs drives Pyric's Firestore with the official Firebase
// JavaScript SDKs (firebase@12.19.0): the Lite SDK over REST, the Node SDK
// over gRPC, the browser build in headless Chromium over WebChannel, and
// @firebase/rules-unit-testing over the emulator endpoints. The scripts
// live beside this file and print one JSON line per step; the tests check
// each step's result. They skip when e2e/js/node_modules (or Chromium, for
// the browser) is absent, and fail instead when PYRIC_E2E_REQUIRED=1.
package firestorejs

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

// here is e2e/firestore-js.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func nodeModules() string { return filepath.Join(here(), "..", "js", "node_modules") }

// skipOrFail skips the test with msg, or fails it under PYRIC_E2E_REQUIRED=1.
func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	e2etest.Missing(t, "%s", msg)
}

// needNode skips when node or the pinned SDKs are missing.
func needNode(t *testing.T, pkgs ...string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFail(t, "node is not on PATH")
	}
	for _, p := range append([]string{"firebase"}, pkgs...) {
		if _, err := os.Stat(filepath.Join(nodeModules(), p)); err != nil {
			skipOrFail(t, "e2e/js/node_modules/"+p+" is absent (run npm ci in e2e/js)")
		}
	}
}

// chromium is the browser the WebChannel tests drive: $CHROMIUM, else the
// Debian package's /usr/bin/chromium.
func chromium(t *testing.T) string {
	t.Helper()
	needNode(t, "playwright-core", "esbuild")
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		skipOrFail(t, "Chromium is not installed (apt-get install -y chromium chromium-driver)")
	}
	return p
}

// step is one line a script prints.
type step = e2etest.Step

// runScript runs a Node script of this directory and returns its steps.
func runScript(t *testing.T, timeout time.Duration, script string, env ...string) []step {
	t.Helper()
	return e2etest.RunSteps(t, timeout, here(), script, env...)
}

// check verifies every step succeeded and, for the steps in want, that its
// result equals the JSON given; every step of want must have run.
func check(t *testing.T, steps []step, want map[string]string) {
	t.Helper()
	checkKnown(t, steps, want, nil)
}

// checkKnown is check with known gaps: a listed step that fails is skipped
// with the reason (and reported once it passes, so the list shrinks).
func checkKnown(t *testing.T, steps []step, want, known map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range steps {
		seen[s.Step] = true
		s := s
		t.Run(s.Step, func(t *testing.T) {
			reason, isKnown := known[s.Step]
			if isKnown && !s.OK {
				t.Skipf("known gap (%s): %s", reason, s.Error)
			}
			if isKnown {
				t.Logf("listed as a known gap (%s) but passes now: remove it from the list", reason)
			}
			if !s.OK {
				t.Fatalf("failed: %s", s.Error)
			}
			w, ok := want[s.Step]
			if !ok {
				return
			}
			if !e2etest.SameJSON(s.Got, w) {
				t.Errorf("got %s, want %s", s.Got, w)
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("step %q did not run", name)
		}
	}
}
