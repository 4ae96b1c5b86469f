package mcp

import (
	"testing"

	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// The run itself is proven with real functions in e2e/functions
// (TestScheduledFunctions); here, the tool's answers without one.
func TestFunctionsRunScheduledErrors(t *testing.T) {
	e := newEnvOn(t, sandbox.Options{Deterministic: true, Seed: 1, Services: []service.Registration{functions.Registration(functions.Options{})}}, Options{})
	if r := e.call("functions_run_scheduled", map[string]any{"name": "nightly"}); r.OK || r.errCode() != "NOT_FOUND" || !r.recoverable() {
		t.Fatalf("unknown function: %+v", r)
	}
	if r := e.call("functions_run_scheduled", map[string]any{"name": "nightly", "ticks": 1000}); r.OK || r.errCode() != "INVALID_ARGUMENT" {
		t.Fatalf("too many ticks: %+v", r)
	}
	if r := e.call("functions_run_scheduled", map[string]any{"name": ""}); r.OK || r.errCode() != "INVALID_ARGUMENT" {
		t.Fatalf("no name: %+v", r)
	}
	bare := newEnvOn(t, sandbox.Options{Deterministic: true, Seed: 1}, Options{})
	if r := bare.call("functions_run_scheduled", map[string]any{"name": "nightly"}); r.OK || r.errCode() != "SERVICE_UNAVAILABLE" {
		t.Fatalf("no functions service: %+v", r)
	}
}
