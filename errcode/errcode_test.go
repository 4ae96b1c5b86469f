package errcode_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"

	"github.com/pyric/pyric/errcode"
)

// The names are google.rpc.Code's and the numbers gRPC's, for every code.
func TestNamesAndNumbers(t *testing.T) {
	for c := errcode.OK; c <= errcode.Unauthenticated; c++ {
		if got, want := c.String(), code.Code(c).String(); got != want {
			t.Errorf("%d: name %q, google.rpc says %q", c, got, want)
		}
		if c.GRPC() != codes.Code(c) || errcode.FromGRPC(codes.Code(c)) != c {
			t.Errorf("%v: gRPC code %v", c, c.GRPC())
		}
		if p, ok := errcode.Parse(c.String()); !ok || p != c {
			t.Errorf("Parse(%q) = %v, %v", c.String(), p, ok)
		}
	}
	if _, ok := errcode.Parse("NOT_IMPLEMENTED"); ok {
		t.Error("Parse accepted a name google.rpc does not have")
	}
	if got := errcode.Code(42).String(); got != "CODE(42)" {
		t.Errorf("out of range: %q", got)
	}
	if got := errcode.ResourceExhausted.Error(); got != "resource exhausted" {
		t.Errorf("Error() = %q", got)
	}
}

// HTTPStatus is google/rpc/code.proto's mapping; FromHTTP inverts it
// where it is one to one.
func TestHTTP(t *testing.T) {
	want := map[errcode.Code]int{
		errcode.OK: 200, errcode.Cancelled: 499, errcode.Unknown: 500, errcode.InvalidArgument: 400,
		errcode.DeadlineExceeded: 504, errcode.NotFound: 404, errcode.AlreadyExists: 409,
		errcode.PermissionDenied: 403, errcode.ResourceExhausted: 429, errcode.FailedPrecondition: 400,
		errcode.Aborted: 409, errcode.OutOfRange: 400, errcode.Unimplemented: 501, errcode.Internal: 500,
		errcode.Unavailable: 503, errcode.DataLoss: 500, errcode.Unauthenticated: 401,
	}
	for c, st := range want {
		if got := c.HTTPStatus(); got != st {
			t.Errorf("%v.HTTPStatus() = %d, want %d", c, got, st)
		}
	}
	for _, c := range []errcode.Code{errcode.Cancelled, errcode.InvalidArgument, errcode.DeadlineExceeded,
		errcode.NotFound, errcode.Aborted, errcode.PermissionDenied, errcode.ResourceExhausted,
		errcode.Unimplemented, errcode.Internal, errcode.Unavailable, errcode.Unauthenticated} {
		if got := errcode.FromHTTP(c.HTTPStatus()); got != c {
			t.Errorf("FromHTTP(%d) = %v, want %v", c.HTTPStatus(), got, c)
		}
	}
	if got := errcode.FromHTTP(418); got != errcode.FailedPrecondition {
		t.Errorf("FromHTTP(418) = %v", got)
	}
}

type kinded struct {
	kind error
	msg  string
}

func (e *kinded) Error() string { return e.msg }
func (e *kinded) Unwrap() error { return e.kind }

type coded struct{}

func (coded) Error() string           { return "coded" }
func (coded) ErrorCode() errcode.Code { return errcode.OutOfRange }
func (coded) Unwrap() error           { return errcode.NotFound }

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want errcode.Code
	}{
		{"nil", nil, errcode.OK},
		{"sentinel", errcode.NotFound, errcode.NotFound},
		{"wrapped kind", fmt.Errorf("get x: %w", &kinded{errcode.AlreadyExists, "exists"}), errcode.AlreadyExists},
		{"coder before the kind it wraps", fmt.Errorf("x: %w", coded{}), errcode.OutOfRange},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), errcode.DeadlineExceeded},
		{"cancel", context.Canceled, errcode.Cancelled},
		{"unclassified", errors.New("disk on fire"), errcode.Internal},
	} {
		if got := errcode.Of(tc.err); got != tc.want {
			t.Errorf("%s: Of = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", &kinded{errcode.NotFound, "m"}), errcode.NotFound) {
		t.Error("errors.Is does not reach the kind")
	}
}
