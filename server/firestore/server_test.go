package firestoreserver

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/pyric/pyric/identity"
)

func TestIdentityFromContext(t *testing.T) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer owner"))
	id, err := IdentityFromContext(ctx)
	if err != nil || id.Kind != identity.Admin {
		t.Errorf("owner: %v %v", id, err)
	}
	ctx = metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer garbage"))
	if _, err := IdentityFromContext(ctx); Status(err).Code() != codes.InvalidArgument || !strings.Contains(err.Error(), "invalid jwt") {
		t.Errorf("garbage: %v", err)
	}
	if id, err := IdentityFromContext(context.Background()); err != nil || id.Kind != identity.Unauthenticated {
		t.Errorf("none: %v %v", id, err)
	}
}
