package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	serveFloorIfAsked()
	os.Exit(m.Run())
}

// TestBench runs the harness. By default it is a quick smoke run against
// pyric only (the harness keeps working); PYRIC_BENCH=1 runs the full
// workload against the official emulator too and prints the ratios. It
// never asserts on timings.
func TestBench(t *testing.T) {
	cfg := Config{N: 20, Queries: 5, Txns: 5, Clients: 4, PerClient: 4, NoOfficial: true, Rounds: 2,
		Only: []string{"floor", "pyric-memory", "pyric-durable", "pyric-always"}} // pyric-serve builds the binary
	if os.Getenv("PYRIC_BENCH") == "1" {
		cfg = Config{N: 500, Queries: 50, Txns: 100, Clients: 64, PerClient: 100}
	} else if testing.Short() {
		t.Skip("benchmark harness")
	}
	var out strings.Builder
	res, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	for target, r := range res {
		for wl, m := range r {
			if m.Err != nil {
				t.Errorf("%s %s: %v", target, wl, m.Err)
			}
		}
	}
	// The floor runs in its own process: its CPU is measured (and the
	// in-process targets' is not).
	if cpu := res["floor"]["set"].ServerCPU; cpu <= 0 {
		t.Errorf("floor set: server CPU %v, want it measured", cpu)
	}
	if cpu := res["pyric-memory"]["set"].ServerCPU; cpu != 0 {
		t.Errorf("pyric-memory set: server CPU %v, want none (in process)", cpu)
	}
	if !strings.Contains(out.String(), "server CPU per operation") {
		t.Errorf("no server CPU table:\n%s", out.String())
	}
}
