package firestoreserver

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRecoverInterceptors(t *testing.T) {
	t.Parallel()
	_, err := gateUnary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"},
		func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Errorf("unary panic: %v", err)
	}
	err = gateStream(nil, nil, &grpc.StreamServerInfo{FullMethod: "/x/Z"}, func(any, grpc.ServerStream) error { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Errorf("stream panic: %v", err)
	}
}
