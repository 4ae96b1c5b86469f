package backend

import (
	"errors"
	"net/http"
	"slices"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/pubsub"
)

// onEachLoad runs apply, on a goroutine of its own, once the codebases'
// first load has ended and again after every reload, until the engine
// closes. The channel it returns is closed once the first apply has run
// (or the engine closed before the load ended): a service that must not
// answer before the functions' registrations are made (Auth's blocking
// functions, Pub/Sub's topics) waits on it while the functions load.
func onEachLoad(eng *functions.Engine, apply func()) <-chan struct{} {
	ready := make(chan struct{})
	go func() {
		select {
		case <-eng.Loaded():
		case <-eng.Done():
			close(ready)
			return
		}
		first := true
		for {
			changed := eng.Changed()
			apply()
			if first {
				close(ready)
				first = false
			}
			select {
			case <-changed:
			case <-eng.Done():
				return
			}
		}
	}()
	return ready
}

// linkBlockingFunctions keeps the Auth project config's blocking
// functions pointing at the loaded ones, as the Emulator Suite's
// functions emulator registers them with its Auth emulator: on every
// load and reload, until the engine closes. A reload that drops the last
// blocking function clears what an earlier load registered. Auth waits
// for the first load's registration (AwaitBlockingFunctions): an account
// created while the functions load still meets their beforeUserCreated.
func linkBlockingFunctions(a *auth.Engine, eng *functions.Engine, project, baseURL string) {
	registered := false
	a.AwaitBlockingFunctions(onEachLoad(eng, func() {
		cfg := eng.BlockingConfig(baseURL)
		if cfg == nil && !registered {
			return
		}
		if cfg == nil {
			cfg = map[string]any{}
		}
		call := auth.Call{Caller: identity.AdminIdentity(), Project: project}
		if _, err := a.UpdateConfig(call, auth.ConfigPatch{BlockingFunctions: cfg}, "blockingFunctions"); err != nil {
			eng.Printf("functions: registering the blocking functions with Auth: %v\n", err)
		}
		registered = len(cfg) > 0
	}))
}

// linkPubSubTopics creates the topics the Pub/Sub-triggered functions
// listen on, as the Emulator Suite does when it registers their
// triggers, so a publish to them is accepted: once now (before the
// functions endpoint serves), once the first load ends, then on every
// reload until the engine closes. An existing topic is kept. Until the
// first load's topics are made, a publish to a missing topic waits for
// them (AwaitTopics): a test suite started beside pyric serve may publish
// while the functions load.
func linkPubSubTopics(ps *pubsub.Engine, eng *functions.Engine) {
	create := func() {
		for _, t := range eng.PubSubTopics() {
			if _, err := ps.CreateTopic(&pubsub.Topic{Name: t}); err != nil && !errors.Is(err, pubsub.ErrAlreadyExists) {
				eng.Printf("functions: creating the topic %s of a Pub/Sub function: %v\n", t, err)
			}
		}
	}
	create()
	ps.AwaitTopics(onEachLoad(eng, create))
}

// functionRewrites serves a Hosting rewrite to a function: the HTTPS
// function functionID deployed in region (any region when empty), which
// sees the request's own path and query, as behind production's Hosting.
type functionRewrites struct{ eng *functions.Engine }

func (f functionRewrites) ServeFunction(w http.ResponseWriter, r *http.Request, functionID, region string) bool {
	ep, ok := f.eng.Endpoint(functionID)
	if !ok && f.eng.WaitLoaded(r.Context()) == nil {
		// A rewrite served while the codebases load waits for them, as
		// a call to the functions port does.
		ep, ok = f.eng.Endpoint(functionID)
	}
	if !ok || (ep.HTTPS == nil && ep.Callable == nil) || (region != "" && !slices.Contains(ep.Regions, region)) {
		return false
	}
	f.eng.ServeFunction(w, r, functionID, r.URL.Path)
	return true
}
