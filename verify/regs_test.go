package verify_test

import (
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/sandbox/service"
)

// regs are the services verify replays in these tests: the backend's,
// as the CLI, MCP and LSP pass them.
func regs() []service.Registration { return backend.Services(&backend.Options{}) }
