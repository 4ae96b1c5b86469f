// Package authtest starts pyric in-process through backend.Start, for
// end-to-end tests that drive its Auth endpoint with the official SDKs.
package authtest

import (
	"context"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/sandbox"
	authserver "github.com/pyric/pyric/server/auth"
)

// Server is a running Auth endpoint.
type Server struct {
	// URL is the endpoint's base URL (http://127.0.0.1:port).
	URL     string
	Backend *backend.Backend
	Engine  *auth.Engine
	// Host is host:port, the form FIREBASE_AUTH_EMULATOR_HOST takes.
	Host string
}

// Start serves a fresh backend until the test ends. From engOpts only the
// clock is taken (it becomes the sandbox clock); from opts the default
// project.
func Start(t testing.TB, engOpts auth.Options, opts authserver.Options) *Server {
	t.Helper()
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: opts.DefaultProject, Now: engOpts.Clock}})
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	eng, ok := sandbox.Lookup[*auth.Engine](b.Sandbox)
	if !ok {
		t.Fatal("authtest: the backend has no Auth service")
	}
	host := b.Addr(backend.Auth)
	return &Server{URL: "http://" + host, Backend: b, Engine: eng, Host: host}
}
