package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/emulator"
)

func TestMain(m *testing.M) {
	serveFloorIfAsked()
	os.Exit(m.Run())
}

// TestBench runs the harness: small by default (pyric and the floor;
// firebase-tools too under PYRIC_E2E_REQUIRED=1, as in CI), the full
// workload with PYRIC_BENCH=1:
//
//	PYRIC_BENCH=1 go test -v -run TestBench ./e2e/fnbench
//
// It checks that every workload ran and answered what it should (the
// callable's result, the trigger's document, the exec script's call); it
// asserts nothing about timing.
func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	e2etest.NeedFunctions(t)
	cfg := Config{Root: e2etest.Root(), N: 20, Triggers: 5, NoEmulator: !full && !e2etest.Required()}
	if full {
		cfg.N, cfg.Triggers = 300, 50
	}
	if !cfg.NoEmulator {
		if _, err := os.Stat(filepath.Join(e2etest.JSDir(), "node_modules", ".bin", "firebase")); err != nil {
			e2etest.Missing(t, "firebase-tools is not installed (npm ci in e2e/js)")
		}
		if emulator.Jar() == "" {
			e2etest.Missing(t, "the official Firestore emulator is not installed (google-cloud-cli-firestore-emulator)")
		}
		if _, err := emulator.FirebaseToolsRunEnv(t.TempDir(), ""); err != nil {
			e2etest.Missing(t, "%v", err)
		}
	}
	var out bytes.Buffer
	res, err := Run(cfg, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{"floor", "node", "function", "pyric"}
	if !cfg.NoEmulator {
		targets = append(targets, "emulator")
	}
	for _, name := range targets {
		r, ok := res[name]
		if !ok || r.P50 <= 0 || r.SDKP50 <= 0 {
			t.Errorf("%s: no callable round trips measured (Go client and JS SDK): %+v", name, r)
			continue
		}
		if name == "floor" || name == "node" || name == "function" {
			continue
		}
		if r.Cold <= 0 || r.TriggerP50 <= 0 || r.Exec <= 0 {
			t.Errorf("%s: a workload was not measured: %+v", name, r)
		}
	}
}
