package firestore

import (
	"net"
	"net/http"

	"google.golang.org/grpc"

	"github.com/pyric/pyric/server"
)

// MaxMessageSize bounds gRPC messages both ways. Firestore's own limits
// (10 MiB requests, 1 MiB documents) are enforced by the engine with
// precise errors; this only has to be larger.
const MaxMessageSize = 64 << 20

// NewPort serves s on l the way the official emulator does: gRPC (a new
// grpc.Server carrying the Firestore service) for HTTP/2 connections and
// s's HTTP handler (REST, WebChannel, /emulator/v1) for HTTP/1.1. Call
// Serve on the port; before shutting it down, Drain the service so open
// Listen and Write streams end at once.
func NewPort(l net.Listener, s *Server, opts ...grpc.ServerOption) (*server.Port, *GRPC) {
	opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize)}, opts...)
	g := grpc.NewServer(opts...)
	svc := NewGRPC(s)
	svc.Register(g)
	return server.NewPort(l, g, HTTPHandler(s)), svc
}

// HTTPHandler returns s's HTTP/1.1 handler when the server has one (its
// Handler method), and otherwise a handler that answers 404 to everything.
func HTTPHandler(s *Server) http.Handler {
	if h, ok := any(s).(interface{ Handler() http.Handler }); ok {
		return h.Handler()
	}
	return http.NotFoundHandler()
}
