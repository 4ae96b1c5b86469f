// Package firestorejs drives Pyric's Firestore with the official Firebase
// JavaScript SDKs (firebase@12.19.0): the Lite SDK over REST, the Node SDK
// over gRPC, the browser build in headless Chromium over WebChannel, and
// @firebase/rules-unit-testing over the emulator endpoints. The scripts
// live beside this file and print one JSON line per step; the tests check
// each step's result. They skip when e2e/js/node_modules (or Chromium, for
// the browser) is absent, and fail instead when PYRIC_E2E_REQUIRED=1.
package firestorejs

import (
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

// needNode skips when node or the pinned SDKs (firebase, and pkgs) are
// missing.
func needNode(t *testing.T, pkgs ...string) {
	t.Helper()
	e2etest.NeedNode(t, pkgs...)
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
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: want})
}
