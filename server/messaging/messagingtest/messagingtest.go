// Package messagingtest starts the Cloud Messaging HTTP adapter on an
// httptest server, for tests that drive it with the official SDKs or plain
// HTTP.
package messagingtest

import (
	"github.com/pyric/pyric/server"
	"net/http/httptest"
	"testing"

	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	messagingserver "github.com/pyric/pyric/server/messaging"
	"google.golang.org/api/option"

	"github.com/pyric/pyric/server/messaging/fcmclient"
)

// Server is a running messaging endpoint.
type Server struct {
	*httptest.Server
	Engine *messaging.Engine
}

// Start serves a fresh engine built from env and opts until the test ends.
func Start(t testing.TB, env service.Env, opts messaging.Options) *Server {
	t.Helper()
	eng, err := messaging.NewEngine(env, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.Guard(messagingserver.NewHandler(eng, messagingserver.Options{}), nil)) // the port's origin policy
	t.Cleanup(ts.Close)
	return &Server{Server: ts, Engine: eng}
}

// ClientOption points firebase-admin-go's messaging client at the server.
func (s *Server) ClientOption(t testing.TB) option.ClientOption {
	t.Helper()
	opt, err := fcmclient.Option(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}
