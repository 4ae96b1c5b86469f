package backend

import (
	"net/http"
	"slices"

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

// functionRewrites serves a Hosting rewrite to a function: the HTTPS
// function functionID deployed in region (any region when empty), which
// sees the request's own path and query, as behind production's Hosting.
type functionRewrites struct{ eng *functions.Engine }

func (f functionRewrites) ServeFunction(w http.ResponseWriter, r *http.Request, functionID, region string) bool {
	ep, ok := f.eng.Endpoint(functionID)
	if !ok || (ep.HTTPS == nil && ep.Callable == nil) || (region != "" && !slices.Contains(ep.Regions, region)) {
		return false
	}
	f.eng.ServeFunction(w, r, functionID, r.URL.Path)
	return true
}
