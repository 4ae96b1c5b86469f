// Package authtest starts the Auth HTTP adapter on an httptest server, for
// end-to-end tests that drive it with the official SDKs.
package authtest

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
)

// Server is a running Auth endpoint.
type Server struct {
	*httptest.Server
	Engine *auth.Engine
	// Host is host:port, the form FIREBASE_AUTH_EMULATOR_HOST takes.
	Host string
}

// Start serves a fresh engine (built from engOpts) through the adapter
// (built from opts) until the test ends.
func Start(t testing.TB, engOpts auth.Options, opts authserver.Options) *Server {
	t.Helper()
	eng := auth.New(engOpts)
	// OOB links use the Host header when opts.BaseURL is empty, which is
	// the httptest URL.
	ts := httptest.NewServer(authserver.New(eng, opts))
	u, _ := url.Parse(ts.URL)
	t.Cleanup(ts.Close)
	return &Server{Server: ts, Engine: eng, Host: u.Host}
}
