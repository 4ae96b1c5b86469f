package cli

import (
	"net/http"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/hub"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/studio"
)

// Default ports of the Studio and the hub: the Emulator Suite's UI and hub.
const (
	defaultStudioPort = 4000
	defaultHubPort    = 4400
)

// newStudio is the Studio of a running backend; rulesPaths are the rules
// files serve watches, by service; mount adds handlers under its port
// (e.g. "/mcp").
func newStudio(b *backend.Backend, rulesPaths map[string]string, mount map[string]http.Handler, policy *server.Policy) http.Handler {
	opts := studio.Options{Sandbox: b.Sandbox, RulesFiles: rulesPaths, Mount: mount, Policy: policy, Endpoints: func() []studio.Endpoint {
		var out []studio.Endpoint
		for _, e := range b.Endpoints() {
			se := studio.Endpoint{Service: e.Service, Addr: e.Addr, What: e.What}
			for _, v := range e.Env {
				se.Env = append(se.Env, studio.EnvVar{Name: v.Name, Value: v.Value})
			}
			out = append(out, se)
		}
		return out
	}}
	// Hosting is served beside the sandbox: its page joins the Studio's
	// route table when it serves sites.
	if he := b.Hosting(); he != nil {
		opts.Beside = map[string]service.Studio{backend.Hosting: he.Engine}
	}
	return studio.New(opts)
}

// newHub is the Emulator Suite hub listing b's endpoints plus extra ones
// (the hub itself as "hub", the Studio as "ui").
func newHub(b *backend.Backend, project string, extra func() map[string]string) http.Handler {
	return hub.New(hub.Options{Version: Version, Project: project, Emulators: func() []hub.Emulator {
		var out []hub.Emulator
		for _, e := range b.Endpoints() {
			if em, ok := hub.FromAddr(e.Service, e.Addr); ok {
				out = append(out, em)
			}
		}
		for name, addr := range extra() {
			if em, ok := hub.FromAddr(name, addr); ok {
				out = append(out, em)
			}
		}
		return out
	}})
}
