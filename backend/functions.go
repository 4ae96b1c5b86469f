package backend

import (
	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/identity"
)

// linkBlockingFunctions keeps the Auth project config's blocking
// functions pointing at the loaded ones, as the Emulator Suite's
// functions emulator registers them with its Auth emulator: on every
// load and reload, until the engine closes. A reload that drops the last
// blocking function clears what an earlier load registered.
func linkBlockingFunctions(a *auth.Engine, eng *functions.Engine, project, baseURL string) {
	registered := false
	for {
		changed := eng.Changed()
		cfg := eng.BlockingConfig(baseURL)
		if cfg != nil || registered {
			if cfg == nil {
				cfg = map[string]any{}
			}
			call := auth.Call{Caller: identity.AdminIdentity(), Project: project}
			if _, err := a.UpdateConfig(call, auth.ConfigPatch{BlockingFunctions: cfg}, "blockingFunctions"); err != nil {
				eng.Printf("functions: registering the blocking functions with Auth: %v\n", err)
			}
			registered = len(cfg) > 0
		}
		select {
		case <-changed:
		case <-eng.Done():
			return
		}
	}
}
