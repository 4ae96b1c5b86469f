package firestoreserver

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestRoutingParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"projects/p/databases/(default)", "projects/p/databases/(default)"},                // JS SDK: the raw path
		{"database=projects%2Fp%2Fdatabases%2Fd", "projects/p/databases/d"},                 // gapic
		{"name=projects%2Fp%2Fdatabases%2Fd%2Fdocuments%2Fa%2Fb", "projects/p/databases/d"}, // gapic, a resource name
		{"project_id=p&database_id=d", "projects/p/databases/d"},                            // Go client BatchGet
		{"project_id=p", "projects/p/databases/(default)"},
		{"database=elsewhere", ""},
		{"", ""},
		{"%zz", ""},
	} {
		got, ok := routingParams(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("routingParams(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestDatabaseFallback(t *testing.T) {
	t.Parallel()
	g := NewGRPC(New(Options{DefaultProject: "dflt"}))
	md := func(kv ...string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(kv...))
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		req  string
		want string
	}{
		{"the request wins", md("google-cloud-resource-prefix", "projects/a/databases/b"), "projects/x/databases/y", "projects/x/databases/y"},
		{"resource prefix", md("google-cloud-resource-prefix", "projects/a/databases/b"), "", "projects/a/databases/b"},
		{"routing header", md("x-goog-request-params", "project_id=c"), "", "projects/c/databases/(default)"},
		{"default project", context.Background(), "", "projects/dflt/databases/(default)"},
	} {
		if got := g.database(tc.ctx, tc.req); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRecoverInterceptors(t *testing.T) {
	t.Parallel()
	_, err := recoverUnary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"},
		func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Errorf("unary panic: %v", err)
	}
	err = recoverStream(nil, nil, &grpc.StreamServerInfo{FullMethod: "/x/Z"}, func(any, grpc.ServerStream) error { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Errorf("stream panic: %v", err)
	}
}
