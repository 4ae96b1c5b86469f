package firestoreserver

import (
	"context"
	"fmt"
	"log"
	"net"
	"runtime"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore"
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
// Listen and Write streams, and WebChannel sessions, end at once.
func NewPort(l net.Listener, s *Server, opts ...grpc.ServerOption) (*server.Port, *GRPC) {
	g := grpc.NewServer(append(portOptions(), opts...)...)
	svc := NewGRPC(s)
	svc.Register(g)
	h := s.Handler()
	if d, ok := h.(interface{ Drain() }); ok {
		svc.alsoDrain = d.Drain
	}
	return server.NewPort(l, g, h), svc
}

// portOptions are the options of the port's grpc.Server.
func portOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.ForceServerCodec(lenientCodec{}),
		grpc.UnaryInterceptor(gateUnary), grpc.StreamInterceptor(gateStream),
		// Calls run on reused goroutines whose stacks have already grown
		// (a goroutine per call spends a measurable share of a small
		// call's CPU growing its stack through the engine).
		grpc.NumStreamWorkers(uint32(8 * runtime.GOMAXPROCS(0)))}
}

// recovered turns a panic in a handler into INTERNAL for that call only:
// grpc-go does not recover handler panics, and one bad request must not
// take every client's server down. The stack goes to the log.
func recovered(method string, v any) error {
	log.Printf("pyric: panic in %s: %v\n%s", method, v, debug.Stack())
	return status.Error(codes.Internal, fmt.Sprintf("internal error in %s: %v", method, v))
}

// gateUnary is the port's unary interceptor: a handler's panic
// recovered (recovered), then admitUnary and decodeCheckUnary, with a light request (the codec
// decoded it) served without the chain's handler closures (grpc-go makes
// two per call for three chained interceptors).
func gateUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, recovered(info.FullMethod, v)
		}
	}()
	if m, ok := req.(proto.Message); ok {
		if _, heavy := deferred.Load(m); !heavy {
			if err := takeDecodeError(m); err != nil {
				return nil, err
			}
			return h(firestore.WithDecodedRequest(ctx, server.HeavyBodyBytes), req)
		}
	}
	return admitUnary(ctx, req, info, func(ctx context.Context, req any) (any, error) {
		return decodeCheckUnary(ctx, req, info, h)
	})
}

// gateStream is the port's stream interceptor: decodeCheckStream, a
// handler's panic recovered (recovered).
func gateStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = recovered(info.FullMethod, v)
		}
	}()
	return decodeCheckStream(srv, ss, info, h)
}
